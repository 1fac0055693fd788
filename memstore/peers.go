package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdatePeer writes a peer row (rules.UpdatePeer).
func (s *Store) UpdatePeer(ctx context.Context, p location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	validate := func() error { return location.ValidatePeer(p, intent) }
	return decide(ctx, s, "UpdatePeer", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.UpdatePeer(tx, p, intent)
	})
}

// RemovePeer removes a peer row (rules.RemovePeer).
func (s *Store) RemovePeer(ctx context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	validate := func() error { return location.ValidatePeerKey(k) }
	return decide(ctx, s, "RemovePeer", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.RemovePeer(tx, k, owner)
	})
}

// ListPeers returns every peer row matching f (any owner, live or not),
// unpaged, in key order.
func (s *Store) ListPeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	return decide(ctx, s, "ListPeers", nil, func(*rules.Tx) ([]location.PeerLocation, error) {
		rows := rowsOf(s, location.TablePeers, func(p *location.PeerLocation) bool { return rules.MatchPeer(p, &f) })
		return pageOf(rows, location.PageRequest{}, location.PeerLocation.Clone).Items, nil
	})
}
