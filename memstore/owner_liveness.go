package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
)

// ReadLiveness implements storecore.Backend (the store's
// ReadOwnerLiveness): under the store lock (one moment for all of them),
// each live lease's token and expiry and the store time, as ReadOwnerLease
// would; expired entries are left in place (ReadOwnerLease removes the one
// it reads, A-20).
func (b backend) ReadLiveness(_ context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	s := b.s
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
}
