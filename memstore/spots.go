package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateSpot writes a spot row (rules.UpdateSpot).
func (s *Store) UpdateSpot(ctx context.Context, row location.SpotLocation, intent location.WriteIntent) (location.WriteResult, error) {
	validate := func() error { return location.ValidateSpot(row, intent) }
	return decide(ctx, s, "UpdateSpot", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.UpdateSpot(tx, row, intent)
	})
}

// RemoveSpot removes a spot row (rules.RemoveSpot).
func (s *Store) RemoveSpot(ctx context.Context, k location.SpotKey, owner location.OwnerToken) (location.WriteStatus, error) {
	validate := func() error { return location.ValidateSpotKey(k) }
	return decide(ctx, s, "RemoveSpot", validate, func(tx *rules.Tx) (location.WriteStatus, error) {
		return rules.RemoveSpot(tx, k, owner)
	})
}

// ResolveSpot returns a copy of the spot row (any owner, live or not), or nil.
func (s *Store) ResolveSpot(ctx context.Context, k location.SpotKey) (*location.SpotLocation, error) {
	validate := func() error { return location.ValidateSpotKey(k) }
	return decide(ctx, s, "ResolveSpot", validate, func(tx *rules.Tx) (*location.SpotLocation, error) {
		row, _, ok := rules.GetSpot(tx, rules.SpotKey(k))
		if !ok {
			return nil, nil
		}
		return &row, nil
	})
}

// ListSpots lists the spot rows matching f (any owner, live or not) in key
// order, paged.
func (s *Store) ListSpots(ctx context.Context, f location.SpotFilter, p location.PageRequest) (location.Page[location.SpotLocation], error) {
	return decide(ctx, s, "ListSpots", nil, func(*rules.Tx) (location.Page[location.SpotLocation], error) {
		rows := rowsOf(s, location.TableSpots, func(row *location.SpotLocation) bool { return rules.MatchSpot(row, &f) })
		return pageOf(rows, p, location.SpotLocation.Clone), nil
	})
}
