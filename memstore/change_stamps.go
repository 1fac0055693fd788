package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/rules"
)

// ChangeStamp returns a change-stamp counter: the reference's counters,
// starting at 0 and moving by exactly 1 per changed row (03 §4). It
// implements storecore.Backend.
func (b backend) ChangeStamp(_ context.Context, c rules.StampCounter) (int64, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.stamps[c], nil
}

// MeshNodeChangeStamp returns a mesh's mesh-node change stamp: a counter
// that moves by 1 whenever a mesh-node row of the mesh is created, really
// updated, taken over or removed (also by RemoveAllByOwner), and never
// otherwise. It implements storecore.Backend.
func (b backend) MeshNodeChangeStamp(_ context.Context, meshName string) (int64, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.meshNodeStamps[meshName], nil
}
