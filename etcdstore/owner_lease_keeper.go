package etcdstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// KeepOwnerLease renews the token's lease like RenewOwnerLease and returns
// the kept lease through which later renewals go: each is one etcd
// keep-alive, with no write (no Raft entry, no watch event), while the
// owner key is watched so that the kept lease learns at once when the lease
// ends. ReadOwnerLease then derives the expiry from the etcd lease's
// remaining TTL (leasemap.Map.Keep). It implements location.OwnerLeaseKeeper.
// It runs as one operation of the store (storecore.Do): observed, its
// context checked first, its errors prefixed like every other operation's.
func (s *Store) KeepOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, location.KeptOwnerLease, error) {
	out, err := storecore.Do(ctx, &s.Store, storecore.Op{Name: "KeepOwnerLease"}, nil,
		func(ctx context.Context) (keptLease, error) {
			res, kept, err := s.leases.Keep(ctx, t, ttl)
			out := keptLease{OwnerLeaseRenewResult: res}
			if kept != nil { // a nil *Kept must stay a nil interface
				out.Kept = kept
			}
			return out, err
		})
	if err != nil || out.Kept == nil {
		return out.OwnerLeaseRenewResult, nil, err
	}
	return out.OwnerLeaseRenewResult, out.Kept, nil
}

// keptLease is KeepOwnerLease's result as one value (its Kind is the
// renewal's, for the Observer).
type keptLease struct {
	location.OwnerLeaseRenewResult
	Kept location.KeptOwnerLease
}

// ReadRetries returns the counts of reads the store sent again while etcd
// answered transient errors (Options.Retry).
func (s *Store) ReadRetries() txn.RetryStats { return s.retry.Stats() }

var _ location.OwnerLeaseKeeper = (*Store)(nil)
