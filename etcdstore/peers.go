package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdatePeer writes a peer row (rules.UpdatePeer). It implements
// location.PeerStore.
func (s *Store) UpdatePeer(ctx context.Context, p location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	prefetch := s.ownerRowPrefetch(s.tableKey(location.TablePeers, rules.PeerKey(p.Key())), p.OwnerID, intent)
	return decide(ctx, s, "UpdatePeer", func() error { return location.ValidatePeer(p, intent) }, prefetch,
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.UpdatePeer(tx, p, intent) })
}

// ownerRowPrefetch is what a peer or route write reads: the row and, for a
// new claim only, the owner key (rules.UpdatePeer consults the liveness of
// the row's owner id only then; renewals never do, and prefetching an owner
// key that does not exist would cost a read on every renewal of a row whose
// owner holds no lease).
func (s *Store) ownerRowPrefetch(rowKey, ownerID string, intent location.WriteIntent) []string {
	if intent == location.IntentNewClaim {
		return []string{rowKey, s.layout.OwnerKey(ownerID)}
	}
	return []string{rowKey}
}

// RemovePeer removes a peer row (rules.RemovePeer). It implements
// location.PeerStore.
func (s *Store) RemovePeer(ctx context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	return decide(ctx, s, "RemovePeer", func() error { return location.ValidatePeerKey(k) },
		[]string{s.tableKey(location.TablePeers, rules.PeerKey(k))},
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.RemovePeer(tx, k, owner) })
}

// ListPeers returns every peer row matching f (any owner), unpaged, in key
// order. A filter that fixes the auto-connect type (then the mesh, then the
// role) narrows the key range. It implements location.PeerStore.
func (s *Store) ListPeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	const op = "ListPeers"
	if err := checkContext(ctx, op); err != nil {
		return nil, err
	}
	page, err := list(ctx, s, listQuery[location.PeerLocation]{
		op: op, table: location.TablePeers, narrow: peerNarrow(&f), filter: f,
		match: func(p *location.PeerLocation) bool { return rules.MatchPeer(p, &f) },
	}, location.PageRequest{})
	items, err := pageItems(page, err)
	return items.Items, err
}

// peerNarrow is the key prefix a peer filter fixes: the canonical type name,
// then the mesh, then the canonical role name, as far as they are given.
func peerNarrow(f *location.PeerFilter) string {
	if f.AutoConnectType == nil {
		return ""
	}
	typeName, err := f.AutoConnectType.CanonicalName()
	if err != nil {
		return ""
	}
	narrow := keys.Segments(typeName)
	if f.MeshName == nil {
		return narrow
	}
	narrow += keys.Segments(*f.MeshName)
	if f.Role == nil {
		return narrow
	}
	role, err := f.Role.CanonicalName()
	if err != nil {
		return narrow
	}
	return narrow + keys.Segments(role)
}
