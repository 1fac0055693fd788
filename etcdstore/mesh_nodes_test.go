package etcdstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// ListMeshNodes projects each row over its own incarnation's capacity
// ledger buckets: buckets that belong to no row of the page (an older
// incarnation, a node without a descriptor) do not count. From etcd, a
// page's buckets are read with one range read at the page's revision; from
// the watch cache, a first page costs one request (the current revision),
// a continuation none.
func TestListMeshNodesReadsTheLedgerByRange(t *testing.T) {
	for _, tc := range []struct {
		name                string
		cached              bool
		firstPage, twoPages int
	}{
		{name: "etcd", firstPage: 2, twoPages: 4},
		{name: "cache", cached: true, firstPage: 1, twoPages: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testListMeshNodesLedger(t, tc.cached, tc.firstPage, tc.twoPages)
		})
	}
}

// testListMeshNodesLedger is one case of
// TestListMeshNodesReadsTheLedgerByRange: the requests of a first page, and
// of a list in two pages.
func testListMeshNodesLedger(t *testing.T, cached bool, firstPage, twoPages int) {
	ctx := t.Context()
	f := newFixture(t, func(o *Options) { o.WatchCache.Disabled = !cached })
	a := f.claim(t, "a")
	for _, rid := range []location.RoutingID{"node-a", "node-c", "node-e"} {
		storedIn(t)(f.s.UpdateMeshNode(ctx, meshNode("m", rid, a), location.IntentNewClaim))
	}
	storedIn(t)(f.s.UpdateMeshNode(ctx, meshNode("m2", "node-b", a), location.IntentNewClaim))
	put := func(mesh string, rid location.RoutingID, lifecycle int64, name, stableType string, e rules.LedgerEntry) {
		t.Helper()
		b := rules.Bucket{Descriptor: location.MeshNodeKey{MeshName: mesh, RID: rid}, Lifecycle: lifecycle, Name: name, StableType: stableType}
		v, err := encodeValue(rules.TableLedger, e, 0, txn.NewNonce(), time.Now())
		require.NoError(t, err)
		_, err = f.s.client.Put(ctx, f.s.tableKey(rules.TableLedger, b.Key()), string(v))
		require.NoError(t, err)
	}
	put("m", "node-a", 1, rules.BucketSpot, "", rules.LedgerEntry{Active: 2, Reserved: 1})
	put("m", "node-a", 0, rules.BucketSpot, "", rules.LedgerEntry{Active: 50}) // an older incarnation
	put("m", "node-c", 1, string(location.ObjectUserSpot), "room", rules.LedgerEntry{Active: 3})
	put("m", "node-d", 1, rules.BucketActor, "", rules.LedgerEntry{Active: 40})   // no descriptor
	put("m2", "node-b", 1, rules.BucketActor, "", rules.LedgerEntry{Active: 30})  // another mesh
	put("m", "node-e", 2, rules.BucketActor, "", rules.LedgerEntry{Reserved: 20}) // a later incarnation

	type usage struct{ actors, spots, rooms [2]int64 }
	usageOf := func(d location.MeshNodeDescriptor) usage {
		p := d.PopulationCapacity
		return usage{
			actors: [2]int64{p.Actors.Active, p.Actors.Reserved},
			spots:  [2]int64{p.Spots.Active, p.Spots.Reserved},
			rooms:  [2]int64{p.SpotTypes[0].Active, p.SpotTypes[0].Reserved},
		}
	}
	want := map[location.RoutingID]usage{
		"node-a": {spots: [2]int64{2, 1}},
		"node-c": {rooms: [2]int64{3, 0}},
		"node-e": {},
	}

	if cached {
		f.warmCache(t)
	}
	f.counts()
	all, err := f.s.ListMeshNodes(ctx, "m", location.PageRequest{})
	require.NoError(t, err)
	require.Len(t, all.Items, 3)
	for _, d := range all.Items {
		require.Equal(t, want[d.RID], usageOf(d), d.RID)
	}
	require.Equal(t, map[string]int{txn.CallGet: firstPage}, f.counts())

	p1, err := f.s.ListMeshNodes(ctx, "m", location.PageRequest{PageSize: 2})
	require.NoError(t, err)
	require.Len(t, p1.Items, 2)
	p2, err := f.s.ListMeshNodes(ctx, "m", location.PageRequest{PageSize: 2, ContinuationToken: p1.ContinuationToken})
	require.NoError(t, err)
	require.Len(t, p2.Items, 1)
	for _, d := range append(p1.Items, p2.Items...) {
		require.Equal(t, want[d.RID], usageOf(d), d.RID)
	}
	require.Equal(t, map[string]int{txn.CallGet: twoPages}, f.counts())
}
