package leasemap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Claim issues a new owner lease for ownerID (03 §1.2): a fresh etcd lease,
// then one transaction that creates the owner key only if it does not exist.
// A live lease of the same owner id, the caller's own included, is a
// conflict. The generation is the owner key's CreateRevision.
// generationExhausted cannot happen on etcd.
//
// A lost response is settled by the engine (txn.Engine.Send): the owner key
// carrying the attempt's nonce, or a put of it in the key's history since
// the lease was granted, proves the claim applied (with the generation it
// created, even if that lease has been released since); a key that has
// existed since before proves it did not (a conflict); an absent key
// without such a put means not applied, and the claim is sent again. When
// it cannot be settled, the error wraps location.ErrOutcomeUnknown and the
// granted lease is kept (the claim may hold it), and the map remembers the
// claim for Settle, which tells the caller whether it holds that lease. A
// later Claim does not settle it: it answers as the reference does (a
// conflict while the lost claim's lease is live).
func (m *Map) Claim(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	const op = "claim owner lease"
	ms, err := validate(ctx, op, ownerID, ttl)
	if err != nil {
		return location.OwnerLeaseClaimResult{}, err
	}
	now, secs := m.now(), m.leaseSeconds(ms)
	grant, err := m.lease.Grant(ctx, secs)
	if err != nil {
		return location.OwnerLeaseClaimResult{}, txn.Unavailable("leasemap: "+op, err)
	}
	c := claim{m: m, key: m.layout.OwnerKey(ownerID), grant: grant.ID, sentAfter: m.revisionBefore(grant)}
	for range m.maxAtt {
		nonce := txn.NewNonce()
		val, err := encodeRecord(Record{OwnerID: ownerID, TTLMs: ms, ExpiresAtMs: now.UnixMilli() + ms,
			LeaseID: leaseIDText(grant.ID), LeaseSeconds: secs, Nonce: nonce})
		if err != nil {
			m.revoke(ctx, grant.ID)
			return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
		}
		generation, conflict, err := c.send(ctx, op, val, nonce)
		switch {
		case errors.Is(err, txn.ErrOutcomeUnknown):
			// The claim may hold the lease: keep it, for Settle.
			m.notePending(ownerID, pendingClaim{nonces: append(slices.Clone(c.lost), nonce), grant: grant.ID})
			return location.OwnerLeaseClaimResult{}, err
		case err != nil:
			m.revoke(ctx, grant.ID)
			return location.OwnerLeaseClaimResult{}, err
		case conflict:
			m.revoke(ctx, grant.ID)
			return location.OwnerLeaseClaimResult{Kind: location.KindConflict}, nil
		case generation > 0:
			m.remember(ownerID, leaseInfo{generation: generation, leaseID: grant.ID, seconds: secs})
			return location.OwnerLeaseClaimResult{
				Kind:           location.KindClaimed,
				Token:          location.OwnerToken{OwnerID: ownerID, LeaseGeneration: generation},
				LeaseExpiresAt: now.Add(time.Duration(ms) * time.Millisecond),
				StoreNow:       now,
			}, nil
		}
		// Not applied (its response was lost), the key absent: claim again,
		// unless the caller has given up.
		if cerr := ctx.Err(); cerr != nil {
			m.revoke(ctx, grant.ID)
			return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: not applied: %w", op, cerr)
		}
	}
	m.revoke(ctx, grant.ID)
	return location.OwnerLeaseClaimResult{}, contention(op)
}

// claim is one Claim call.
type claim struct {
	m     *Map
	key   string
	grant clientv3.LeaseID
	// sentAfter is a revision committed before the first attempt was sent.
	sentAfter int64
	// lost are the nonces of attempts whose response was lost and that were
	// settled "not applied": one may still land.
	lost []string
}

// send sends one attempt that stores value (which carries the fresh
// nonce) if the owner key is absent. It returns the generation created (by
// this attempt or an earlier lost one), or conflict when the key holds
// another claim; neither means not applied with the key absent.
func (c *claim) send(ctx context.Context, op, value, nonce string) (generation int64, conflict bool, err error) {
	before, _ := c.m.engine.Cached(c.key)
	sent, err := c.m.engine.Send(ctx, "leasemap: "+op, txn.Guarded{
		If:        []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(c.key), "=", 0)},
		Then:      []clientv3.Op{clientv3.OpPut(c.key, value, clientv3.WithLease(c.grant))},
		Read:      []string{c.key},
		Nonce:     nonce,
		Puts:      []string{c.key},
		Absent:    []string{c.key},
		Before:    map[string]txn.Observation{c.key: before},
		Earlier:   c.lost,
		SentAfter: c.sentAfter,
	})
	switch {
	case err != nil:
		return 0, false, err
	case sent.Applied:
		// The value that carries a claim's nonce is the one that created
		// the key: its revision is the generation.
		if sent.Nonce == nonce {
			c.m.seen(written(c.key, value, sent.Revision, c.grant, sent.Revision))
		}
		return sent.Revision, false, nil
	case sent.Lost:
		c.lost = append(c.lost, nonce)
	}
	return 0, sent.Now.Keys[c.key].Present, nil
}

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
