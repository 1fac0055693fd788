package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateMeshNode writes a mesh-node descriptor (rules.UpdateMeshNode) with
// one guarded transaction: the row, the writer's owner key, the row owner's
// owner key and the entry-spot claims it consulted are re-asserted. It
// implements location.MeshNodeStore.
func (s *Store) UpdateMeshNode(ctx context.Context, d location.MeshNodeDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	prefetch := []string{s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(d.Key())), s.layout.OwnerKey(d.OwnerID)}
	if d.EntrySpotID != nil {
		if claim, err := rules.EntryClaimKey(*d.EntrySpotID); err == nil {
			prefetch = append(prefetch, s.tableKey(rules.TableEntryClaims, string(claim)))
		}
	}
	return decide(ctx, s, "UpdateMeshNode", func() error { return location.ValidateMeshNode(d, intent) }, prefetch,
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.UpdateMeshNode(tx, d, intent) })
}

// RemoveMeshNode removes a mesh-node descriptor (rules.RemoveMeshNode). It
// implements location.MeshNodeStore.
func (s *Store) RemoveMeshNode(ctx context.Context, k location.MeshNodeKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveMeshNode", nil, []string{s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(k))},
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveMeshNode(tx, k, owner) })
}

// ListMeshNodes lists the mesh's descriptors (any owner, live or not) in key
// order, paged, with active and reserved capacity replaced by the authority
// ledgers' usage read at the same revision as the rows (03b E-14). It
// implements location.MeshNodeStore.
func (s *Store) ListMeshNodes(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	const op = "ListMeshNodes"
	if err := checkContext(ctx, op); err != nil {
		return location.Page[location.MeshNodeDescriptor]{}, err
	}
	now := s.now()
	page, err := list(ctx, s, listQuery[location.MeshNodeDescriptor]{
		op: op, table: location.TableMeshNodes, narrow: keys.Segments(meshName), filter: meshName,
		match: func(d *location.MeshNodeDescriptor) bool { return d.MeshName == meshName },
	}, p)
	if err != nil {
		return location.Page[location.MeshNodeDescriptor]{}, err
	}
	var prefetch []string
	for _, r := range page.rows {
		prefetch = append(prefetch, s.ledgerKeys(&r.row)...)
	}
	items, err := readAt(ctx, s, op, page.revision, now, prefetch, func(tx *rules.Tx) ([]location.MeshNodeDescriptor, error) {
		out := make([]location.MeshNodeDescriptor, 0, len(page.rows))
		for _, r := range page.rows {
			out = append(out, rules.ProjectMeshNode(tx, r.row))
		}
		return out, nil
	})
	if err != nil {
		return location.Page[location.MeshNodeDescriptor]{}, err
	}
	return location.Page[location.MeshNodeDescriptor]{Items: items, ContinuationToken: page.token}, nil
}

// ledgerKeys are the ledger buckets a descriptor's projection reads.
func (s *Store) ledgerKeys(d *location.MeshNodeDescriptor) []string {
	node := d.Key()
	bucket := func(name, stableType string) string {
		return s.tableKey(rules.TableLedger, rules.Bucket{Descriptor: node, Lifecycle: d.LifecycleGeneration, Name: name, StableType: stableType}.Key())
	}
	out := []string{bucket(rules.BucketActor, ""), bucket(rules.BucketSpot, "")}
	for _, t := range d.PopulationCapacity.SpotTypes {
		out = append(out, bucket(string(t.ObjectKind), t.StableType))
	}
	return out
}
