package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/storecore"
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

// ReadOwnerLivenessSince implements location.OwnerLivenessStamper from the
// watch cache, in one request (the current revision, as ReadOwnerLiveness):
// the stamp is the revision of the last change of the owner keys (an owner
// key created, recreated with a new generation, or deleted when its lease
// ended or was released; a rewrite of a live owner's key is no change), or
// of the cache's last reload of them. Without the cache, or when it cannot
// answer, the owners are read from etcd and the answer has no stamp.
func (s *Store) ReadOwnerLivenessSince(ctx context.Context, ownerIDs []string, since int64) (location.OwnerLivenessSince, error) {
	return storecore.Do(ctx, &s.Store, storecore.Op{Name: "ReadOwnerLivenessSince"}, func() error { return location.ValidateOwnerIDs(ownerIDs) },
		func(ctx context.Context) (location.OwnerLivenessSince, error) {
			if s.cache != nil {
				if res, ok, err := s.cache.livenessSince(ctx, ownerIDs, since); ok || err != nil {
					return res, err
				}
			}
			res := location.OwnerLivenessSince{Changed: true, Live: []location.OwnerLiveness{}}
			if len(ownerIDs) == 0 {
				return res, nil
			}
			var err error
			res.Live, err = s.readOwnerLiveness(ctx, ownerIDs)
			return res, err
		})
}

var _ location.OwnerLivenessStamper = (*Store)(nil)

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
