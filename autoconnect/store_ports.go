package autoconnect

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The store methods this package uses, each as the smallest interface that
// holds it. Every location.Store (memstore, etcdstore) satisfies all of them;
// the package never depends on a particular store.

// PeerWriter writes and removes the local peer row; location.PeerStore
// satisfies it.
type PeerWriter interface {
	UpdatePeer(ctx context.Context, p location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error)
	RemovePeer(ctx context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error)
}

// PeerLister lists peer rows; location.PeerStore satisfies it.
type PeerLister interface {
	ListPeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error)
}

// PeerPublisher writes, removes and reads back the local peer row;
// location.PeerStore satisfies it. The read settles a claim whose answer
// was lost: the reconciler learns the generation the store gave the row.
type PeerPublisher interface {
	PeerWriter
	PeerLister
}

// MeshNodeLister lists mesh-node descriptors page by page;
// location.MeshNodeStore satisfies it.
type MeshNodeLister interface {
	ListMeshNodes(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error)
}

// SharedMeshNodeLister is an optional MeshNodeLister capability (the
// stores built on storecore: etcdstore, memstore): ListMeshNodesShared
// lists descriptors that the caller only reads, which may share their maps,
// slices and pointers with the store's cache instead of being deep copies.
// MeshNodeSource uses it when its store has it, so a wrapper that
// overrides ListMeshNodes of a store it embeds (to count or fail calls)
// overrides this one too.
type SharedMeshNodeLister interface {
	ListMeshNodesShared(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error)
}

// OwnerLeaseReader reads owner leases; location.OwnerLeaseStore satisfies it.
type OwnerLeaseReader interface {
	ReadOwnerLease(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error)
}

// watchOf returns store's change watcher for tables, when store has one.
func watchOf(store any, tables ...location.Table) (location.ChangeWatcher, []location.Table, bool) {
	w, ok := store.(location.ChangeWatcher)
	if !ok {
		return nil, nil, false
	}
	return w, tables, true
}
