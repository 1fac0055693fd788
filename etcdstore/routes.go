package etcdstore

import (
	"context"
	"strconv"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateRoute writes a route row (rules.UpdateRoute). It implements
// location.RouteStore.
func (s *Store) UpdateRoute(ctx context.Context, r location.RouteLocation, intent location.WriteIntent) (location.WriteResult, error) {
	prefetch := s.ownerRowPrefetch(s.tableKey(location.TableRoutes, rules.RouteKey(r.Key())), r.OwnerID, intent)
	return decide(ctx, s, "UpdateRoute", func() error { return location.ValidateRoute(r, intent) }, prefetch,
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.UpdateRoute(tx, r, intent) })
}

// RemoveRoute removes a route row (rules.RemoveRoute). It implements
// location.RouteStore.
func (s *Store) RemoveRoute(ctx context.Context, k location.RouteKey, owner location.OwnerToken) (location.WriteResult, error) {
	return decide(ctx, s, "RemoveRoute", func() error { return location.ValidateRouteKey(k) },
		[]string{s.tableKey(location.TableRoutes, rules.RouteKey(k))},
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.RemoveRoute(tx, k, owner) })
}

// ResolveRoute returns the route row, or nil. It implements
// location.RouteStore.
func (s *Store) ResolveRoute(ctx context.Context, k location.RouteKey) (*location.RouteLocation, error) {
	return decide(ctx, s, "ResolveRoute", func() error { return location.ValidateRouteKey(k) },
		[]string{s.tableKey(location.TableRoutes, rules.RouteKey(k))},
		func(tx *rules.Tx) (*location.RouteLocation, error) {
			row, _, ok := rules.GetRoute(tx, rules.RouteKey(k))
			if !ok {
				return nil, nil
			}
			return &row, nil
		})
}

// ListRoutes lists the route rows matching f in key order, paged; a route
// kind in the filter narrows the key range. It implements
// location.RouteStore.
func (s *Store) ListRoutes(ctx context.Context, f location.RouteFilter, p location.PageRequest) (location.Page[location.RouteLocation], error) {
	const op = "ListRoutes"
	if err := checkContext(ctx, op); err != nil {
		return location.Page[location.RouteLocation]{}, err
	}
	narrow := ""
	if f.RouteKind != nil {
		narrow = keys.Segments(strconv.Itoa(int(*f.RouteKind)))
	}
	page, err := list(ctx, s, listQuery[location.RouteLocation]{
		op: op, table: location.TableRoutes, narrow: narrow, filter: f,
		match: func(r *location.RouteLocation) bool { return rules.MatchRoute(r, &f) },
	}, p)
	return pageItems(page, err)
}
