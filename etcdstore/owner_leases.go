package etcdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Owner leases are etcd leases (package leasemap): the owner key is the only
// lease-attached key of the store and its CreateRevision is the lease
// generation (decisions E-1, E-2, E-5, E-6).

// ClaimOwnerLease issues a new owner lease. It implements
// location.OwnerLeaseStore.
func (s *Store) ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	res, err := s.leases.Claim(ctx, ownerID, ttl)
	return res, wrap("ClaimOwnerLease", err)
}

// ReadOwnerLease returns the owner's live lease, or missing. It implements
// location.OwnerLeaseStore.
func (s *Store) ReadOwnerLease(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	res, err := s.leases.Read(ctx, ownerID)
	return res, wrap("ReadOwnerLease", err)
}

// RenewOwnerLease extends the token's lease from now. It implements
// location.OwnerLeaseStore.
func (s *Store) RenewOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	res, err := s.leases.Renew(ctx, t, ttl)
	return res, wrap("RenewOwnerLease", err)
}

// ReleaseOwnerLease ends the token's lease; the owner's rows stay. It
// implements location.OwnerLeaseStore.
func (s *Store) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	res, err := s.leases.Release(ctx, t)
	return res, wrap("ReleaseOwnerLease", err)
}

// ExpireOwnerLease ends ownerID's current lease at once, as if its TTL had
// elapsed, by revoking its etcd lease (the owner key goes with it; rows stay).
// The conformance harness's hook; an owner without a lease is left alone.
func (s *Store) ExpireOwnerLease(ctx context.Context, ownerID string) error {
	return wrap("ExpireOwnerLease", s.leases.Expire(ctx, ownerID))
}

// wrap prefixes an error with the store and operation.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("etcdstore: %s: %w", op, err)
}
