package memstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Owner leases (03 §1) exist only in memstore: one entry per owner id, one
// dense generation counter shared by all owners, expiry decided with the
// store clock (an entry is live while expiresAt > now). Expired entries
// linger until a read, a new claim or a release removes them (anomaly A-20,
// reproduced). The lease map is not a rules table, so these methods change
// it directly while decide holds the lock; their plans stay empty.

// ClaimOwnerLease issues a new lease for ownerID: conflict while the id
// holds a live lease (even for the holder itself, A-35), generationExhausted
// when the counter reached 2^63-1, otherwise claimed with the next
// generation and an expiry of now + ttl (whole milliseconds).
func (s *Store) ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	var ttlMs int64
	validate := func() error {
		if err := location.ValidateOwnerID(ownerID); err != nil {
			return err
		}
		ms, err := location.ValidateLeaseTTL(ttl)
		ttlMs = ms
		return err
	}
	return decide(ctx, s, "ClaimOwnerLease", validate, func(tx *rules.Tx) (location.OwnerLeaseClaimResult, error) {
		now := tx.Now()
		if cur, ok := s.leases[ownerID]; ok && cur.expiresAt.After(now) {
			return location.OwnerLeaseClaimResult{Kind: location.KindConflict}, nil
		}
		if s.leaseCounter >= location.MaxGeneration {
			return location.OwnerLeaseClaimResult{Kind: location.KindGenerationExhausted}, nil
		}
		s.leaseCounter++
		l := ownerLease{
			token:     location.OwnerToken{OwnerID: ownerID, LeaseGeneration: s.leaseCounter},
			expiresAt: now.Add(time.Duration(ttlMs) * time.Millisecond),
		}
		s.leases[ownerID] = l
		return location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: l.token, LeaseExpiresAt: l.expiresAt, StoreNow: now}, nil
	})
}

// ReadOwnerLease reports ownerID's live lease. An absent or expired entry
// answers missing, and an expired entry is deleted.
func (s *Store) ReadOwnerLease(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	validate := func() error { return location.ValidateOwnerID(ownerID) }
	return decide(ctx, s, "ReadOwnerLease", validate, func(tx *rules.Tx) (location.OwnerLeaseReadResult, error) {
		now := tx.Now()
		cur, ok := s.leases[ownerID]
		if !ok || !cur.expiresAt.After(now) {
			delete(s.leases, ownerID)
			return location.OwnerLeaseReadResult{Kind: location.KindMissing}, nil
		}
		return location.OwnerLeaseReadResult{Kind: location.KindFound, Token: cur.token, LeaseExpiresAt: cur.expiresAt, StoreNow: now}, nil
	})
}

// RenewOwnerLease moves the expiry of t's live lease to now + ttl (which may
// be earlier than before, A-36). An absent or expired entry, or one of
// another generation, answers stale and is left as it is.
func (s *Store) RenewOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	var ttlMs int64
	validate := func() error {
		if err := location.ValidateOwnerID(t.OwnerID); err != nil {
			return err
		}
		ms, err := location.ValidateLeaseTTL(ttl)
		ttlMs = ms
		return err
	}
	return decide(ctx, s, "RenewOwnerLease", validate, func(tx *rules.Tx) (location.OwnerLeaseRenewResult, error) {
		now := tx.Now()
		cur, ok := s.leases[t.OwnerID]
		if !ok || !cur.expiresAt.After(now) || cur.token.LeaseGeneration != t.LeaseGeneration {
			return location.OwnerLeaseRenewResult{Kind: location.KindStale}, nil
		}
		cur.expiresAt = now.Add(time.Duration(ttlMs) * time.Millisecond)
		s.leases[t.OwnerID] = cur
		return location.OwnerLeaseRenewResult{Kind: location.KindRenewed, LeaseExpiresAt: cur.expiresAt, StoreNow: now}, nil
	})
}

// ReleaseOwnerLease deletes t's lease entry when its generation matches —
// expired or not — and answers released; otherwise stale. The
// owner's rows stay. No validation, as the reference.
func (s *Store) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	return decide(ctx, s, "ReleaseOwnerLease", nil, func(*rules.Tx) (location.ResultKind, error) {
		cur, ok := s.leases[t.OwnerID]
		if !ok || cur.token.LeaseGeneration != t.LeaseGeneration {
			return location.KindStale, nil
		}
		delete(s.leases, t.OwnerID)
		s.notifyLeaseEnded()
		return location.KindReleased, nil
	})
}
