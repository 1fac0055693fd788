package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateMeshNode writes a mesh-node descriptor (rules.UpdateMeshNode).
func (s *Store) UpdateMeshNode(ctx context.Context, d location.MeshNodeDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	validate := func() error { return location.ValidateMeshNode(d, intent) }
	return decide(ctx, s, "UpdateMeshNode", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.UpdateMeshNode(tx, d, intent)
	})
}

// RemoveMeshNode removes a mesh-node descriptor (rules.RemoveMeshNode).
func (s *Store) RemoveMeshNode(ctx context.Context, k location.MeshNodeKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveMeshNode", nil, func(tx *rules.Tx) (location.WriteStatus, error) {
		return rules.RemoveMeshNode(tx, k, owner)
	})
}

// ListMeshNodes lists the mesh's descriptors (any owner, live or not) in key
// order, paged, with active and reserved capacity replaced by the authority
// ledgers' usage (rules.ProjectMeshNode).
func (s *Store) ListMeshNodes(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	return decide(ctx, s, "ListMeshNodes", nil, func(tx *rules.Tx) (location.Page[location.MeshNodeDescriptor], error) {
		rows := rowsOf(s, location.TableMeshNodes, func(d *location.MeshNodeDescriptor) bool { return d.MeshName == meshName })
		return pageOf(rows, p, func(d location.MeshNodeDescriptor) location.MeshNodeDescriptor {
			return rules.ProjectMeshNode(tx, d)
		}), nil
	})
}
