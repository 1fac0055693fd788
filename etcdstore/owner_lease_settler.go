package etcdstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// SettleOwnerLeaseClaim settles the last claim of ownerID made through this
// store whose outcome was unknown, by re-reading the owner key
// (leasemap.Map.Settle): held, with the claim's token and the lease renewed
// with ttl, when it applied and its lease is live; otherwise not held (a
// claim that did not apply has its etcd lease revoked, so that it never
// will). It implements location.OwnerLeaseClaimSettler. It runs as one
// operation of the store (storecore.Do); the owner id and ttl are checked
// before anything is read.
func (s *Store) SettleOwnerLeaseClaim(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, bool, error) {
	out, err := storecore.Do(ctx, &s.Store, storecore.Op{Name: "SettleOwnerLeaseClaim"}, nil,
		func(ctx context.Context) (settledClaim, error) {
			res, held, err := s.leases.Settle(ctx, ownerID, ttl)
			return settledClaim{OwnerLeaseClaimResult: res, Held: held}, err
		})
	return out.OwnerLeaseClaimResult, out.Held, err
}

// settledClaim is SettleOwnerLeaseClaim's result as one value (its Kind is
// the claim's, for the Observer).
type settledClaim struct {
	location.OwnerLeaseClaimResult
	Held bool
}

var _ location.OwnerLeaseClaimSettler = (*Store)(nil)
