package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// ReadOwnerLiveness reports which of ownerIDs hold a live lease, under the
// store lock (one moment for all of them), with each live lease's expiry
// and the store time, as ReadOwnerLease would; expired entries are left in
// place (ReadOwnerLease removes the one it reads, A-20). It implements
// location.OwnerLivenessReader.
func (s *Store) ReadOwnerLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	return storecore.Do(ctx, &s.Store, storecore.Op{Name: "ReadOwnerLiveness"},
		func() error { return location.ValidateOwnerIDs(ownerIDs) },
		func(context.Context) ([]location.OwnerLiveness, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			now := s.now()
			out := make([]location.OwnerLiveness, len(ownerIDs))
			for i, id := range ownerIDs {
				if cur, ok := s.leases[id]; ok && cur.expiresAt.After(now) {
					out[i] = location.OwnerLiveness{Live: true, Token: cur.token, LeaseExpiresAt: cur.expiresAt, StoreNow: now}
				}
			}
			return out, nil
		})
}

var _ location.OwnerLivenessReader = (*Store)(nil)
