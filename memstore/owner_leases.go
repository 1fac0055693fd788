package memstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// Owner leases (03 §1) exist only in memstore: one entry per owner id, one
// dense generation counter shared by all owners, expiry decided with the
// store clock (an entry is live while expiresAt > now). Expired entries
// linger until a read, a new claim or a release removes them (anomaly A-20,
// reproduced). The lease map is not a rules table: these methods change it
// directly under the store lock. Inputs arrive validated (storecore).

// leases are the store's owner leases (storecore.Leases).
type leases struct{ s *Store }

// Leases implements storecore.Backend.
func (b backend) Leases() storecore.Leases { return leases(b) }

// Claim issues a new lease for ownerID: conflict while the id holds a live
// lease (even for the holder itself, A-35), generationExhausted when the
// counter reached 2^63-1, otherwise claimed with the next generation and an
// expiry of now + ttl (whole milliseconds).
func (l leases) Claim(_ context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if cur, ok := s.leases[ownerID]; ok && cur.expiresAt.After(now) {
		return location.OwnerLeaseClaimResult{Kind: location.KindConflict}, nil
	}
	if s.leaseCounter >= location.MaxGeneration {
		return location.OwnerLeaseClaimResult{Kind: location.KindGenerationExhausted}, nil
	}
	s.leaseCounter++
	lease := ownerLease{
		token:     location.OwnerToken{OwnerID: ownerID, LeaseGeneration: s.leaseCounter},
		expiresAt: expiry(now, ttl),
	}
	s.leases[ownerID] = lease
	return location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: lease.token, LeaseExpiresAt: lease.expiresAt, StoreNow: now}, nil
}

// Read reports ownerID's live lease. An absent or expired entry answers
// missing, and an expired entry is deleted.
func (l leases) Read(_ context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cur, ok := s.leases[ownerID]
	if !ok || !cur.expiresAt.After(now) {
		delete(s.leases, ownerID)
		return location.OwnerLeaseReadResult{Kind: location.KindMissing}, nil
	}
	return location.OwnerLeaseReadResult{Kind: location.KindFound, Token: cur.token, LeaseExpiresAt: cur.expiresAt, StoreNow: now}, nil
}

// Renew moves the expiry of t's live lease to now + ttl (which may be
// earlier than before, A-36). An absent or expired entry, or one of another
// generation, answers stale and is left as it is.
func (l leases) Renew(_ context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cur, ok := s.leases[t.OwnerID]
	if !ok || !cur.expiresAt.After(now) || cur.token.LeaseGeneration != t.LeaseGeneration {
		return location.OwnerLeaseRenewResult{Kind: location.KindStale}, nil
	}
	cur.expiresAt = expiry(now, ttl)
	s.leases[t.OwnerID] = cur
	return location.OwnerLeaseRenewResult{Kind: location.KindRenewed, LeaseExpiresAt: cur.expiresAt, StoreNow: now}, nil
}

// Release deletes t's lease entry when its generation matches — expired or
// not — and answers released (watchers of location tables are
// notified); otherwise stale. The owner's rows stay.
func (l leases) Release(_ context.Context, t location.OwnerToken) (location.ResultKind, error) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.leases[t.OwnerID]
	if !ok || cur.token.LeaseGeneration != t.LeaseGeneration {
		return location.KindStale, nil
	}
	delete(s.leases, t.OwnerID)
	s.notifyLeaseEnded()
	return location.KindReleased, nil
}

// Expire makes ownerID's lease expire now (expiresAt := now) as if its TTL
// had elapsed; the entry stays in the lease map, as an expired reference
// entry does until read. No rows change; watchers of location tables are
// notified when a live lease ended. An owner without an entry is left
// alone.
func (l leases) Expire(_ context.Context, ownerID string) error {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.leases[ownerID]; ok {
		now := s.now()
		live := cur.expiresAt.After(now)
		cur.expiresAt = now
		s.leases[ownerID] = cur
		if live {
			s.notifyLeaseEnded()
		}
	}
	return nil
}

// expiry is now + ttl in whole milliseconds (ttl is validated).
func expiry(now time.Time, ttl time.Duration) time.Time {
	ms, _ := location.WholeMillis(ttl)
	return now.Add(time.Duration(ms) * time.Millisecond)
}
