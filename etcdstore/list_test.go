package etcdstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// spotIDs returns the ids of a page's spots.
func spotIDs(p location.Page[location.SpotLocation]) []string {
	out := []string{}
	for _, s := range p.Items {
		out = append(out, s.SpotID)
	}
	return out
}

func TestListPaging(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	a := f.claim(t, "a")
	for i := range 5 {
		storedIn(t)(f.s.UpdateSpot(ctx, spot(fmt.Sprintf("s%d", i), a), location.IntentNewClaim))
	}
	play := "play"
	filter := location.SpotFilter{MeshName: &play}

	t.Run("pages in key order with one look-ahead", func(t *testing.T) {
		p1, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"s0", "s1"}, spotIDs(p1))
		require.NotEmpty(t, p1.ContinuationToken)
		p2, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 2, ContinuationToken: p1.ContinuationToken})
		require.NoError(t, err)
		require.Equal(t, []string{"s2", "s3"}, spotIDs(p2))
		p3, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 2, ContinuationToken: p2.ContinuationToken})
		require.NoError(t, err)
		require.Equal(t, []string{"s4"}, spotIDs(p3))
		require.Empty(t, p3.ContinuationToken, "no token when nothing remains")

		exact, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 5})
		require.NoError(t, err)
		require.Len(t, exact.Items, 5)
		require.Empty(t, exact.ContinuationToken, "the look-ahead finds no sixth match")

		all, err := f.s.ListSpots(ctx, location.SpotFilter{}, location.PageRequest{})
		require.NoError(t, err)
		require.Len(t, all.Items, 5, "the default page is unlimited")
	})
	t.Run("later pages continue the first page's snapshot", func(t *testing.T) {
		p1, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 2})
		require.NoError(t, err)
		storedIn(t)(f.s.UpdateSpot(ctx, spot("s3a", a), location.IntentNewClaim))
		t.Cleanup(func() { _, _ = f.s.RemoveSpot(ctx, location.SpotKey{MeshName: "play", SpotID: "s3a"}, a) })
		rest, err := f.s.ListSpots(ctx, filter, location.PageRequest{ContinuationToken: p1.ContinuationToken})
		require.NoError(t, err)
		require.Equal(t, []string{"s2", "s3", "s4"}, spotIDs(rest), "the row written after the first page is not in its snapshot")
	})
	t.Run("undecodable and foreign tokens restart", func(t *testing.T) {
		other, err := f.s.ListActors(ctx, location.ActorFilter{}, location.PageRequest{PageSize: 1})
		require.NoError(t, err)
		p1, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 1})
		require.NoError(t, err)
		for _, tok := range []string{"garbage", "!!", other.ContinuationToken, "eyJ2IjoxfQ"} {
			p, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 2, ContinuationToken: tok})
			require.NoError(t, err)
			require.Equal(t, []string{"s0", "s1"}, spotIDs(p), "token %q", tok)
		}
		// A token of the same table with another filter is foreign too.
		game := "game"
		p, err := f.s.ListSpots(ctx, location.SpotFilter{MeshName: &play, SpotType: &game}, location.PageRequest{PageSize: 2, ContinuationToken: p1.ContinuationToken})
		require.NoError(t, err)
		require.Equal(t, []string{"s0", "s1"}, spotIDs(p))
	})
	t.Run("compacted snapshot", func(t *testing.T) {
		p1, err := f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 2})
		require.NoError(t, err)
		storedIn(t)(f.s.UpdateSpot(ctx, spot("s0", a), location.IntentRenew))
		rev := f.s.engine.LastRevision()
		_, err = f.s.client.Compact(ctx, rev)
		require.NoError(t, err)
		_, err = f.s.ListSpots(ctx, filter, location.PageRequest{PageSize: 2, ContinuationToken: p1.ContinuationToken})
		require.ErrorIs(t, err, location.ErrScanExpired)
		require.False(t, errors.Is(err, location.ErrInvalidArgument))
	})
}

func TestListFilters(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	a, b := f.claim(t, "a"), f.claim(t, "b")
	storedIn(t)(f.s.UpdatePeer(ctx, peer("n1", "a"), location.IntentNewClaim))
	fan := peer("n2", "b")
	fan.AutoConnectType = location.AutoConnectFanout
	fan.Role = location.PeerRoleSub
	storedIn(t)(f.s.UpdatePeer(ctx, fan, location.IntentNewClaim))
	storedIn(t)(f.s.UpdateRoute(ctx, route("r1", "a"), location.IntentNewClaim))
	r2 := route("r2", "b")
	r2.RouteKind = location.RouteSpotName
	storedIn(t)(f.s.UpdateRoute(ctx, r2, location.IntentNewClaim))

	rm := location.AutoConnectRouteMesh
	play := "play"
	router := location.PeerRoleRouter
	peers, err := f.s.ListPeers(ctx, location.PeerFilter{AutoConnectType: &rm, MeshName: &play, Role: &router})
	require.NoError(t, err)
	require.Len(t, peers, 1)
	require.Equal(t, "a", peers[0].OwnerID)
	peers, err = f.s.ListPeers(ctx, location.PeerFilter{})
	require.NoError(t, err)
	require.Len(t, peers, 2)

	kind := location.RouteSpotName
	routes, err := f.s.ListRoutes(ctx, location.RouteFilter{RouteKind: &kind}, location.PageRequest{})
	require.NoError(t, err)
	require.Len(t, routes.Items, 1)
	require.Equal(t, "r2", routes.Items[0].RouteKey)

	// Fanout publishers of owners without a live lease are hidden (03b E-13).
	fp := location.FanoutPublisherDescriptor{ChannelName: "events", PublisherRID: "pub-a", LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:9501", State: location.StateServing, SecurityIdentity: "c", OwnerID: "a", LeaseGeneration: a.LeaseGeneration}
	storedIn(t)(f.s.UpdateFanoutPublisher(ctx, fp, location.IntentNewClaim))
	fp.PublisherRID, fp.OwnerID, fp.LeaseGeneration = "pub-b", "b", b.LeaseGeneration
	storedIn(t)(f.s.UpdateFanoutPublisher(ctx, fp, location.IntentNewClaim))
	require.NoError(t, f.s.ExpireOwnerLease(ctx, "b"))
	pubs, err := f.s.ListFanoutPublishers(ctx, "events", location.PageRequest{PageSize: 1})
	require.NoError(t, err)
	require.Len(t, pubs.Items, 1)
	require.Equal(t, location.RoutingID("pub-a"), pubs.Items[0].PublisherRID)
	require.Empty(t, pubs.ContinuationToken, "paged over the live rows only")
}

func TestListAuthoritiesCursors(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	a := f.claim(t, "a")
	target := f.creationTarget(t, a)
	for _, id := range []string{"x1", "x2", "x3"} {
		r, err := f.s.Reserve(ctx, location.ReserveRequest{Key: location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: id},
			Intent:   location.CreationIntent{StableType: "room", RequestContentReference: "r", RequestSHA256: make([]byte, 32), RequestEncodedSize: 1},
			Target:   target,
			Capacity: location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: "room", Count: 1}}})
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, r.Kind)
	}
	p1, err := f.s.ListAuthorities(ctx, "zla1:s:", "", 2)
	require.NoError(t, err)
	require.Equal(t, location.KindPage, p1.Kind)
	require.Len(t, p1.Items, 2)
	require.NotEmpty(t, p1.NextCursor)
	require.LessOrEqual(t, len(p1.NextCursor), location.MaxScanCursorBytes)
	p2, err := f.s.ListAuthorities(ctx, "zla1:s:", p1.NextCursor, 2)
	require.NoError(t, err)
	require.Len(t, p2.Items, 1)
	require.Empty(t, p2.NextCursor)
	require.Equal(t, location.AuthorityKey("zla1:s:2:x3"), p2.Items[0].Key)

	for name, cur := range map[string]string{"undecodable": "%%%", "another prefix": p1.NextCursor} {
		prefix := "zla1:s:"
		if name == "another prefix" {
			prefix = "zla1:"
		}
		res, err := f.s.ListAuthorities(ctx, prefix, cur, 2)
		require.NoError(t, err, name)
		require.Equal(t, location.AuthorityScanResult{Kind: location.KindScanExpired}, res, name)
	}
	storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim)) // a later revision
	_, err = f.s.client.Compact(ctx, f.s.engine.LastRevision())
	require.NoError(t, err)
	res, err := f.s.ListAuthorities(ctx, "zla1:s:", p1.NextCursor, 2)
	require.NoError(t, err)
	require.Equal(t, location.KindScanExpired, res.Kind, "a compacted snapshot")
}

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
