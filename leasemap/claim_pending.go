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
// expires. Its attempts' nonces tell whether it applied (the owner key's
// value carries one), and revoking its etcd lease makes sure it never
// does.
type pendingClaim struct {
	nonces []string
	grant  clientv3.LeaseID
}

// notePending records the claim of ownerID whose outcome is unknown (the
// last one per owner id: a later claim settles the earlier first).
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

// settlePending settles the pending claim of ownerID, if any, before a new
// claim is sent, by reading the owner key:
//
//   - the key carries one of the claim's nonces: the claim applied, and the
//     lease is the caller's. It is renewed with ttl (which tells how long it
//     lives now) and answered as claimed (done), with the generation the
//     claim created; a lease that ended since is claimed anew;
//   - otherwise the claim did not apply so far, and its etcd lease is
//     revoked, so that it never will (a put on a revoked lease fails); the
//     new claim goes ahead. A key on that lease without the nonce (some
//     holder of the token rewrote it) is left alone: the new claim then
//     answers the conflict.
//
// When the key cannot be read (or the lease revoked, or the found lease
// renewed), the claim stays pending and the error wraps
// location.ErrUnavailable (or ErrOutcomeUnknown, from a renewal whose own
// answer was lost).
func (m *Map) settlePending(ctx context.Context, op, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, bool, error) {
	p, ok := m.takePending(ownerID)
	if !ok {
		return location.OwnerLeaseClaimResult{}, false, nil
	}
	const what = "settle an earlier claim whose outcome is unknown"
	got, err := m.readOwner(ctx, m.layout.OwnerKey(ownerID))
	if err != nil {
		m.keepPending(ownerID, p)
		return location.OwnerLeaseClaimResult{}, false, txn.Unavailable(fmt.Sprintf("leasemap: %s: %s", op, what), err)
	}
	if !p.carries(got) {
		if got.Present && clientv3.LeaseID(got.Lease) == p.grant {
			return location.OwnerLeaseClaimResult{}, false, nil
		}
		if _, err := m.lease.Revoke(ctx, p.grant); err != nil && !txn.IsLeaseNotFound(err) {
			m.keepPending(ownerID, p)
			return location.OwnerLeaseClaimResult{}, false, txn.Unavailable(fmt.Sprintf("leasemap: %s: %s: revoke its lease", op, what), err)
		}
		m.log.Info("leasemap: an earlier claim whose outcome was unknown did not apply; its lease is revoked",
			"owner", ownerID, "lease", leaseIDText(p.grant))
		return location.OwnerLeaseClaimResult{}, false, nil
	}
	token := location.OwnerToken{OwnerID: ownerID, LeaseGeneration: got.CreateRevision}
	res, err := m.Renew(ctx, token, ttl)
	switch {
	case err != nil:
		m.keepPending(ownerID, p)
		return location.OwnerLeaseClaimResult{}, false, fmt.Errorf("leasemap: %s: %s: renew its lease %d: %w", op, what, token.LeaseGeneration, err)
	case res.Kind != location.KindRenewed:
		return location.OwnerLeaseClaimResult{}, false, nil // it ended since: claim anew
	}
	m.log.Info("leasemap: an earlier claim whose outcome was unknown had applied; its lease is the caller's",
		"owner", ownerID, "generation", token.LeaseGeneration)
	return location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: token, LeaseExpiresAt: res.LeaseExpiresAt,
		StoreNow: res.StoreNow}, true, nil
}

// carries reports whether o's value carries one of p's nonces.
func (p pendingClaim) carries(o txn.Observation) bool {
	return o.Present && slices.ContainsFunc(p.nonces, o.HasNonce)
}
