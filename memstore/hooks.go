package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Test hooks for the conformance harness (conformance.Fixture).

// ExpireOwnerLease makes ownerID's lease expire now (expiresAt := now) as if
// its TTL had elapsed; the entry stays in the lease map, as an expired
// reference entry does until read. No rows change; watchers of location
// tables are notified when a live lease ended. An owner without an entry is
// left alone.
func (s *Store) ExpireOwnerLease(ctx context.Context, ownerID string) error {
	_, err := decide(ctx, s, "ExpireOwnerLease", nil, func(tx *rules.Tx) (struct{}, error) {
		if l, ok := s.leases[ownerID]; ok {
			live := l.expiresAt.After(tx.Now())
			l.expiresAt = tx.Now()
			s.leases[ownerID] = l
			if live {
				s.notifyLeaseEnded()
			}
		}
		return struct{}{}, nil
	})
	return err
}

// SetOwnerLeaseCounter sets the last issued owner-lease generation; the next
// claim issues n+1, or generationExhausted when n is 2^63-1. A negative n is
// an invalid argument.
func (s *Store) SetOwnerLeaseCounter(n int64) error {
	if n < 0 {
		return location.NewRangeError("lease.counter", "owner lease counter %d is negative", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaseCounter = n
	return nil
}
