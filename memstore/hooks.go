package memstore

import "github.com/zlink-systems/zlink-etcd/location"

// Test hooks for the conformance harness (conformance.Fixture).

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
