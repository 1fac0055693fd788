package etcdstore

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
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
// ledgers' usage read at the same revision as the rows (03b E-14): a range
// read of the page's rows, then one of their ledger buckets (ledgerAt). It
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
	ledger, err := s.ledgerAt(ctx, page.rows, page.revision)
	if err != nil {
		return location.Page[location.MeshNodeDescriptor]{}, readError(op, err)
	}
	items, err := readAt(ctx, s, op, page.revision, now, ledger, func(tx *rules.Tx) ([]location.MeshNodeDescriptor, error) {
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

// ledgerBatch is how many ledger buckets one range request reads.
const ledgerBatch = 4096

// ledgerAt reads the capacity ledger buckets that the projection of rows
// (one page of one mesh's descriptors, in key order) reads, at revision rev,
// with range reads instead of one Get per bucket: a bucket's key starts with
// its descriptor's key (rules.Bucket.Key), so the buckets of the
// descriptors from the page's first row to its last form one key range. The
// range may hold buckets of other node incarnations (or of descriptors
// removed since); they are left out. A bucket the projection will look for
// and the range does not hold is returned absent.
func (s *Store) ledgerAt(ctx context.Context, rows []listedRow[location.MeshNodeDescriptor], rev int64) (map[string]txn.Observation, error) {
	out := map[string]txn.Observation{}
	if len(rows) == 0 {
		return out, nil
	}
	for i := range rows {
		for _, k := range s.ledgerKeys(&rows[i].row) {
			out[k] = txn.Observation{Key: k, Revision: rev}
		}
	}
	first, last := rows[0].row.Key(), rows[len(rows)-1].row.Key()
	start := s.tableKey(rules.TableLedger, rules.MeshNodeKey(first))
	end := keys.PrefixEnd(s.tableKey(rules.TableLedger, rules.MeshNodeKey(last)))
	for {
		resp, err := s.kv.Get(ctx, start, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(ledgerBatch))
		if err != nil {
			return nil, err
		}
		s.engine.NoteRevision(resp.Header.Revision)
		for _, kv := range resp.Kvs {
			k := string(kv.Key)
			if _, wanted := out[k]; wanted {
				out[k] = txn.Observation{Key: k, Present: true, Value: kv.Value, ModRevision: kv.ModRevision,
					CreateRevision: kv.CreateRevision, Version: kv.Version, Revision: rev}
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// ledgerKeys are the ledger buckets a descriptor's projection reads.
func (s *Store) ledgerKeys(d *location.MeshNodeDescriptor) []string {
	node, lifecycle := d.Key(), d.LifecycleGeneration
	out := []string{s.bucketKey(node, lifecycle, rules.BucketActor, ""), s.bucketKey(node, lifecycle, rules.BucketSpot, "")}
	for _, t := range d.PopulationCapacity.SpotTypes {
		out = append(out, s.bucketKey(node, lifecycle, string(t.ObjectKind), t.StableType))
	}
	return out
}
