package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateRoute writes a route row (rules.UpdateRoute).
func (s *Store) UpdateRoute(ctx context.Context, r location.RouteLocation, intent location.WriteIntent) (location.WriteResult, error) {
	validate := func() error { return location.ValidateRoute(r, intent) }
	return decide(ctx, s, "UpdateRoute", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.UpdateRoute(tx, r, intent)
	})
}

// RemoveRoute removes a route row (rules.RemoveRoute).
func (s *Store) RemoveRoute(ctx context.Context, k location.RouteKey, owner location.OwnerToken) (location.WriteResult, error) {
	validate := func() error { return location.ValidateRouteKey(k) }
	return decide(ctx, s, "RemoveRoute", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.RemoveRoute(tx, k, owner)
	})
}

// ResolveRoute returns a copy of the route row (any owner, live or not), or
// nil.
func (s *Store) ResolveRoute(ctx context.Context, k location.RouteKey) (*location.RouteLocation, error) {
	validate := func() error { return location.ValidateRouteKey(k) }
	return decide(ctx, s, "ResolveRoute", validate, func(tx *rules.Tx) (*location.RouteLocation, error) {
		row, _, ok := rules.GetRoute(tx, rules.RouteKey(k))
		if !ok {
			return nil, nil
		}
		return &row, nil
	})
}

// ListRoutes lists the route rows matching f (any owner, live or not) in key
// order, paged.
func (s *Store) ListRoutes(ctx context.Context, f location.RouteFilter, p location.PageRequest) (location.Page[location.RouteLocation], error) {
	return decide(ctx, s, "ListRoutes", nil, func(*rules.Tx) (location.Page[location.RouteLocation], error) {
		rows := rowsOf(s, location.TableRoutes, func(r *location.RouteLocation) bool { return rules.MatchRoute(r, &f) })
		return pageOf(rows, p, location.RouteLocation.Clone), nil
	})
}
