package rules

import "github.com/zlink-systems/zlink-etcd/location"

// TargetLive is the authority store's liveness hook as the location store
// wires it (04 §1.11): the mesh-node descriptor (d.MeshName, d.RID) exists
// with the given lifecycle generation and owner token, is a Server in state
// Serving, and the owner's lease is live with the token's generation.
func TargetLive(tx *Tx, d location.MeshNodeKey, lifecycle int64, owner location.OwnerToken) bool {
	desc, _, ok, err := peekRow[location.MeshNodeDescriptor](tx, location.TableMeshNodes, MeshNodeKey(d))
	if !ok || err != nil ||
		desc.LifecycleGeneration != lifecycle ||
		desc.OwnerID != owner.OwnerID ||
		desc.LeaseGeneration != owner.LeaseGeneration ||
		desc.ObjectRole != location.RoleServer ||
		desc.State != location.StateServing {
		return false
	}
	generation, live := tx.Source().LiveLease(owner.OwnerID)
	return live && generation == owner.LeaseGeneration
}

// ownerLive reports whether a row's current owner is live on the row's
// allocation (04 §1.11 "owner live").
func ownerLive(tx *Tx, row AuthorityRow) bool {
	return TargetLive(tx, row.Allocation.Descriptor, row.Allocation.DescriptorLifecycleGeneration, row.Owner)
}

// creationTargetLive reports whether a creation target is live.
func creationTargetLive(tx *Tx, t location.CreationTarget) bool {
	return TargetLive(tx, t.Descriptor(), t.NodeLifecycleGeneration, t.Owner)
}
