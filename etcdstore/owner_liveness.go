package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
)

// ReadLiveness implements storecore.Backend (the store's ReadOwnerLiveness):
// an owner key exists (decision E-2: etcd deletes it when the lease ends),
// and its CreateRevision is the generation. With the watch cache on, one
// request (the current revision) answers any number of owners; without it,
// one read of the owner keys at one revision (a Txn of Gets per 128
// owners). Expiries are not reported (location.OwnerLiveness): a kept
// lease's lives in etcd's lessor, and etcd reports its end as the key's
// deletion.
func (b backend) ReadLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	s := b.s
	if s.cache != nil {
		if out, ok, err := s.cache.liveness(ctx, ownerIDs); ok || err != nil {
			return out, err
		}
	}
	return s.readOwnerLiveness(ctx, ownerIDs)
}

// readOwnerLiveness reads the owner keys of ownerIDs from etcd.
func (s *Store) readOwnerLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	ownerKeys := make([]string, len(ownerIDs))
	for i, id := range ownerIDs {
		ownerKeys[i] = s.layout.OwnerKey(id)
	}
	got, err := s.engine.ReadKeys(ctx, ownerKeys, 0)
	if err != nil {
		return nil, readError(err)
	}
	out := make([]location.OwnerLiveness, len(ownerIDs))
	for i, id := range ownerIDs {
		if o := got.Keys[ownerKeys[i]]; o.Present {
			out[i] = location.OwnerLiveness{Live: true, Token: location.OwnerToken{OwnerID: id, LeaseGeneration: o.CreateRevision}}
		}
	}
	return out, nil
}
