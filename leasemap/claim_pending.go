package leasemap

import (
	"context"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// pendingClaim is a claim whose outcome is unknown: its answer was lost
// and re-reading could not settle it (etcd unreachable for the whole
// resolution, or the caller cancelled). It may hold a lease nobody can
// name, which would refuse every later claim of the owner id until it
// expires, unless Settle finds it. Its attempts' nonces tell whether it applied (the owner key's
// value carries one), and revoking its etcd lease makes sure it never
// does.
type pendingClaim struct {
	nonces []string
	grant  clientv3.LeaseID
}

// notePending records the claim of ownerID whose outcome is unknown (the
// last one per owner id).
func (m *Map) notePending(ownerID string, p pendingClaim) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = map[string]pendingClaim{}
	}
	m.pending[ownerID] = p
}

// takePending removes and returns the pending claim of ownerID.
func (m *Map) takePending(ownerID string) (pendingClaim, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[ownerID]
	delete(m.pending, ownerID)
	return p, ok
}

// keepPending puts back a pending claim that could not be settled, unless
// a newer one was noted meanwhile.
func (m *Map) keepPending(ownerID string, p pendingClaim) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.pending[ownerID]; !ok {
		if m.pending == nil {
			m.pending = map[string]pendingClaim{}
		}
		m.pending[ownerID] = p
	}
}

// Settle settles the last claim of ownerID made through m whose outcome
// was unknown (Claim answered an error wrapping location.ErrOutcomeUnknown),
// by reading the owner key; it never guesses:
//
//   - the key carries one of the claim's nonces: the claim applied, and its
//     lease is the caller's. It is renewed with ttl (so that the caller
//     knows how long it lives) and answered KindClaimed, with the
//     generation the claim created, and held is true;
//   - otherwise the claim did not apply so far, and its etcd lease is
//     revoked, so that it never will (a put on a revoked lease fails); held
//     is false, and the caller claims anew. A key on that lease without the
//     nonce (a holder of the token rewrote it) is left alone.
//
// held is false too when no claim of ownerID is pending, or when the
// claim's lease has ended since. When the key cannot be read (or the lease
// revoked, or the found lease renewed), the claim stays pending for the
// next Settle, and the error wraps location.ErrUnavailable (or
// ErrOutcomeUnknown, from a renewal whose own answer was lost).
func (m *Map) Settle(ctx context.Context, ownerID string, ttl time.Duration) (res location.OwnerLeaseClaimResult, held bool, err error) {
	const op = "settle a claim whose outcome is unknown"
	if _, err := validate(ctx, op, ownerID, ttl); err != nil {
		return location.OwnerLeaseClaimResult{}, false, err
	}
	p, ok := m.takePending(ownerID)
	if !ok {
		return location.OwnerLeaseClaimResult{}, false, nil
	}
	got, err := m.readOwner(ctx, m.layout.OwnerKey(ownerID))
	if err != nil {
		m.keepPending(ownerID, p)
		return location.OwnerLeaseClaimResult{}, false, txn.Unavailable("leasemap: "+op, err)
	}
	if !p.carries(got) {
		if got.Present && clientv3.LeaseID(got.Lease) == p.grant {
			return location.OwnerLeaseClaimResult{}, false, nil
		}
		if _, err := m.lease.Revoke(ctx, p.grant); err != nil && !txn.IsLeaseNotFound(err) {
			m.keepPending(ownerID, p)
			return location.OwnerLeaseClaimResult{}, false, txn.Unavailable(fmt.Sprintf("leasemap: %s: revoke its lease", op), err)
		}
		m.log.Info("leasemap: a claim whose outcome was unknown did not apply; its lease is revoked",
			"owner", ownerID, "lease", leaseIDText(p.grant))
		return location.OwnerLeaseClaimResult{}, false, nil
	}
	token := location.OwnerToken{OwnerID: ownerID, LeaseGeneration: got.CreateRevision}
	renewed, err := m.Renew(ctx, token, ttl)
	switch {
	case err != nil:
		m.keepPending(ownerID, p)
		return location.OwnerLeaseClaimResult{}, false, fmt.Errorf("leasemap: %s: renew its lease %d: %w", op, token.LeaseGeneration, err)
	case renewed.Kind != location.KindRenewed:
		return location.OwnerLeaseClaimResult{}, false, nil // it ended since
	}
	m.log.Info("leasemap: a claim whose outcome was unknown had applied; its lease is the caller's",
		"owner", ownerID, "generation", token.LeaseGeneration)
	return location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: token, LeaseExpiresAt: renewed.LeaseExpiresAt,
		StoreNow: renewed.StoreNow}, true, nil
}

// carries reports whether o's value carries one of p's nonces.
func (p pendingClaim) carries(o txn.Observation) bool {
	return o.Present && slices.ContainsFunc(p.nonces, o.HasNonce)
}
