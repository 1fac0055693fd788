package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateSpot writes a spot row (rules.UpdateSpot). It implements
// location.SpotStore.
func (s *Store) UpdateSpot(ctx context.Context, row location.SpotLocation, intent location.WriteIntent) (location.WriteResult, error) {
	prefetch := []string{s.tableKey(location.TableSpots, rules.SpotKey(row.Key())), s.layout.OwnerKey(row.OwnerID)}
	return decide(ctx, s, "UpdateSpot", func() error { return location.ValidateSpot(row, intent) }, prefetch,
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.UpdateSpot(tx, row, intent) })
}

// RemoveSpot removes a spot row (rules.RemoveSpot). It implements
// location.SpotStore.
func (s *Store) RemoveSpot(ctx context.Context, k location.SpotKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveSpot", func() error { return location.ValidateSpotKey(k) },
		[]string{s.tableKey(location.TableSpots, rules.SpotKey(k))},
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveSpot(tx, k, owner) })
}

// ResolveSpot returns the spot row, or nil. It implements location.SpotStore.
func (s *Store) ResolveSpot(ctx context.Context, k location.SpotKey) (*location.SpotLocation, error) {
	return decide(ctx, s, "ResolveSpot", func() error { return location.ValidateSpotKey(k) },
		[]string{s.tableKey(location.TableSpots, rules.SpotKey(k))},
		func(tx *rules.Tx) (*location.SpotLocation, error) {
			row, _, ok := rules.GetSpot(tx, rules.SpotKey(k))
			if !ok {
				return nil, nil
			}
			return &row, nil
		})
}

// ListSpots lists the spot rows matching f in key order, paged; a mesh in
// the filter narrows the key range. It implements location.SpotStore.
func (s *Store) ListSpots(ctx context.Context, f location.SpotFilter, p location.PageRequest) (location.Page[location.SpotLocation], error) {
	const op = "ListSpots"
	if err := checkContext(ctx, op); err != nil {
		return location.Page[location.SpotLocation]{}, err
	}
	narrow := ""
	if f.MeshName != nil {
		narrow = keys.Segments(*f.MeshName)
	}
	page, err := list(ctx, s, listQuery[location.SpotLocation]{
		op: op, table: location.TableSpots, narrow: narrow, filter: f,
		match: func(row *location.SpotLocation) bool { return rules.MatchSpot(row, &f) },
	}, p)
	return pageItems(page, err)
}
