package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateActor writes an actor row (rules.UpdateActor). It implements
// location.ActorStore.
func (s *Store) UpdateActor(ctx context.Context, a location.ActorLocation, intent location.WriteIntent) (location.WriteResult, error) {
	prefetch := []string{s.tableKey(location.TableActors, rules.ActorKey(a.Key())), s.layout.OwnerKey(a.OwnerID)}
	return decide(ctx, s, "UpdateActor", func() error { return location.ValidateActor(a, intent) }, prefetch,
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.UpdateActor(tx, a, intent) })
}

// RemoveActor removes an actor row (rules.RemoveActor). It implements
// location.ActorStore.
func (s *Store) RemoveActor(ctx context.Context, k location.ActorKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveActor", func() error { return location.ValidateActorKey(k) },
		[]string{s.tableKey(location.TableActors, rules.ActorKey(k))},
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveActor(tx, k, owner) })
}

// ResolveActor returns the actor row, or nil. It implements
// location.ActorStore.
func (s *Store) ResolveActor(ctx context.Context, k location.ActorKey) (*location.ActorLocation, error) {
	return decide(ctx, s, "ResolveActor", func() error { return location.ValidateActorKey(k) },
		[]string{s.tableKey(location.TableActors, rules.ActorKey(k))},
		func(tx *rules.Tx) (*location.ActorLocation, error) {
			row, _, ok := rules.GetActor(tx, rules.ActorKey(k))
			if !ok {
				return nil, nil
			}
			return &row, nil
		})
}

// ListActors lists the actor rows of every mesh matching f in key order,
// paged (the filter has no mesh: the whole table is scanned, 03b E-12). It
// implements location.ActorStore.
func (s *Store) ListActors(ctx context.Context, f location.ActorFilter, p location.PageRequest) (location.Page[location.ActorLocation], error) {
	const op = "ListActors"
	if err := checkContext(ctx, op); err != nil {
		return location.Page[location.ActorLocation]{}, err
	}
	page, err := list(ctx, s, listQuery[location.ActorLocation]{
		op: op, table: location.TableActors, filter: f,
		match: func(a *location.ActorLocation) bool { return rules.MatchActor(a, &f) },
	}, p)
	return pageItems(page, err)
}
