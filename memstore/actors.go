package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateActor writes an actor row (rules.UpdateActor).
func (s *Store) UpdateActor(ctx context.Context, a location.ActorLocation, intent location.WriteIntent) (location.WriteResult, error) {
	validate := func() error { return location.ValidateActor(a, intent) }
	return decide(ctx, s, "UpdateActor", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.UpdateActor(tx, a, intent)
	})
}

// RemoveActor removes an actor row (rules.RemoveActor).
func (s *Store) RemoveActor(ctx context.Context, k location.ActorKey, owner location.OwnerToken) (location.WriteStatus, error) {
	validate := func() error { return location.ValidateActorKey(k) }
	return decide(ctx, s, "RemoveActor", validate, func(tx *rules.Tx) (location.WriteStatus, error) {
		return rules.RemoveActor(tx, k, owner)
	})
}

// ResolveActor returns a copy of the actor row (any owner, live or not), or
// nil.
func (s *Store) ResolveActor(ctx context.Context, k location.ActorKey) (*location.ActorLocation, error) {
	validate := func() error { return location.ValidateActorKey(k) }
	return decide(ctx, s, "ResolveActor", validate, func(tx *rules.Tx) (*location.ActorLocation, error) {
		row, _, ok := rules.GetActor(tx, rules.ActorKey(k))
		if !ok {
			return nil, nil
		}
		return &row, nil
	})
}

// ListActors lists the actor rows of every mesh matching f (any owner, live
// or not) in key order, paged.
func (s *Store) ListActors(ctx context.Context, f location.ActorFilter, p location.PageRequest) (location.Page[location.ActorLocation], error) {
	return decide(ctx, s, "ListActors", nil, func(*rules.Tx) (location.Page[location.ActorLocation], error) {
		rows := rowsOf(s, location.TableActors, func(a *location.ActorLocation) bool { return rules.MatchActor(a, &f) })
		return pageOf(rows, p, location.ActorLocation.Clone), nil
	})
}
