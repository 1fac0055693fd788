package etcdstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// KeepOwnerLease renews the token's lease like RenewOwnerLease and returns
// the kept lease through which later renewals go: each is one etcd
// keep-alive, with no write (no Raft entry, no watch event), while the
// owner key is watched so that the kept lease learns at once when the lease
// ends. ReadOwnerLease then derives the expiry from the etcd lease's
// remaining TTL (leasemap.Map.Keep). It implements location.OwnerLeaseKeeper.
func (s *Store) KeepOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, location.KeptOwnerLease, error) {
	res, kept, err := s.leases.Keep(ctx, t, ttl)
	if err != nil || kept == nil {
		return res, nil, wrap("KeepOwnerLease", err)
	}
	return res, kept, nil
}

// ReadRetries returns the counts of reads the store sent again while etcd
// answered transient errors (Options.Retry).
func (s *Store) ReadRetries() txn.RetryStats { return s.retry.Stats() }

var _ location.OwnerLeaseKeeper = (*Store)(nil)
