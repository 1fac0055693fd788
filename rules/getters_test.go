package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestProjectMeshNode checks 02 §2.4 (the rule behind LS-075): active and
// reserved come from the ledgers at the row's lifecycle; limits and
// everything else as stored.
func TestProjectMeshNode(t *testing.T) {
	d := fixture.MN(fixture.Token("a", 1))
	d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 5, Reserved: 3, Limit: 100}
	d.PopulationCapacity.Spots = location.PopulationCapacity{Active: 2, Reserved: 1, Limit: 100}
	d.PopulationCapacity.SpotTypes = []location.SpotTypeCapacity{
		{ObjectKind: location.ObjectInstanceSpot, StableType: "room", PopulationCapacity: location.PopulationCapacity{Active: 4, Limit: 100}},
		{ObjectKind: location.ObjectUserSpot, StableType: "lobby", PopulationCapacity: location.PopulationCapacity{Active: 1, Limit: 10}},
	}
	t.Run("no allocations", func(t *testing.T) {
		src := newLSSource()
		got := ProjectMeshNode(NewTx(src), d)
		want := d.Clone()
		want.PopulationCapacity.Actors = location.PopulationCapacity{Limit: 100}
		want.PopulationCapacity.Spots = location.PopulationCapacity{Limit: 100}
		want.PopulationCapacity.SpotTypes[0].PopulationCapacity = location.PopulationCapacity{Limit: 100}
		want.PopulationCapacity.SpotTypes[1].PopulationCapacity = location.PopulationCapacity{Limit: 10}
		require.Equal(t, want, got)
		require.Equal(t, int64(5), d.PopulationCapacity.Actors.Active, "the stored value is not modified")
	})
	t.Run("ledger usage at the row's lifecycle", func(t *testing.T) {
		src := newLSSource()
		node := d.Key()
		put := func(lifecycle int64, name, stableType string, e LedgerEntry) {
			src.put(TableLedger, Bucket{Descriptor: node, Lifecycle: lifecycle, Name: name, StableType: stableType}.Key(), e, 0)
		}
		put(7, BucketActor, "", LedgerEntry{Active: 2, Reserved: 1})
		put(7, BucketSpot, "", LedgerEntry{Active: 3})
		put(7, string(location.ObjectInstanceSpot), "room", LedgerEntry{Reserved: 4})
		put(6, BucketActor, "", LedgerEntry{Active: 50}) // an older incarnation: ignored
		got := ProjectMeshNode(NewTx(src), d)
		require.Equal(t, location.PopulationCapacity{Active: 2, Reserved: 1, Limit: 100}, got.PopulationCapacity.Actors)
		require.Equal(t, location.PopulationCapacity{Active: 3, Limit: 100}, got.PopulationCapacity.Spots)
		require.Equal(t, location.PopulationCapacity{Reserved: 4, Limit: 100}, got.PopulationCapacity.SpotTypes[0].PopulationCapacity)
		require.Equal(t, location.PopulationCapacity{Limit: 10}, got.PopulationCapacity.SpotTypes[1].PopulationCapacity)
	})
}

// TestGetters checks that typed getters report generation and absence, and
// that a value of the wrong type reads as absent.
func TestGetters(t *testing.T) {
	src := newLSSource()
	src.put(location.TableSpots, SpotKey(fixture.SpotKey()), fixture.SPOT("a", 1), 4)
	src.put(location.TableActors, "wrong", fixture.SPOT("a", 1), 1)
	tx := NewTx(src)
	s, g, ok := GetSpot(tx, SpotKey(fixture.SpotKey()))
	require.True(t, ok)
	require.Equal(t, int64(4), g)
	require.Equal(t, fixture.SPOT("a", 1), s)
	_, _, ok = GetActor(tx, "wrong")
	require.False(t, ok)
	_, _, ok = GetMeshNode(tx, "absent")
	require.False(t, ok)
	_, _, ok = GetClientServer(tx, "absent")
	require.False(t, ok)
	_, _, ok = GetFanoutPublisher(tx, "absent")
	require.False(t, ok)
	_, _, ok = GetPeer(tx, "absent")
	require.False(t, ok)
	_, _, ok = GetRoute(tx, "absent")
	require.False(t, ok)
}

// TestRowFilters checks the filter predicates of 01 §6, which the
// catalogue's LS-117, LS-133, LS-144 and LS-156 check through a store.
func TestRowFilters(t *testing.T) {
	rid := func(s string) *location.RoutingID { r := location.RoutingID(s); return &r }
	t.Run("peers", func(t *testing.T) {
		p1 := fixture.PEER("a", 1)
		p3 := fixture.PEER("a", 1)
		p3.AutoConnectType, p3.Role, p3.NodeRID, p3.Endpoint = location.AutoConnectFanout, location.PeerRolePub, nil, "e3"
		for _, c := range []struct {
			name   string
			f      location.PeerFilter
			p1, p3 bool
		}{
			{name: "empty", p1: true, p3: true},
			{name: "mesh", f: location.PeerFilter{MeshName: lsPtr("play")}, p1: true, p3: true},
			{name: "role", f: location.PeerFilter{Role: lsPtr(location.PeerRoleRouter)}, p1: true},
			{name: "type", f: location.PeerFilter{AutoConnectType: lsPtr(location.AutoConnectFanout)}, p3: true},
			{name: "rid", f: location.PeerFilter{NodeRID: rid("node-1")}, p1: true},
			{name: "endpoint", f: location.PeerFilter{Endpoint: lsPtr("e3")}, p3: true},
			{name: "other rid", f: location.PeerFilter{NodeRID: rid("node-9")}},
		} {
			require.Equal(t, c.p1, MatchPeer(&p1, &c.f), c.name)
			require.Equal(t, c.p3, MatchPeer(&p3, &c.f), c.name)
		}
	})
	t.Run("spots", func(t *testing.T) {
		requireFilterMatches(t, MatchSpot, fixture.SPOT("a", 1),
			location.SpotFilter{MeshName: lsPtr("play"), SpotType: lsPtr("game"), NodeRID: rid("node-1"), SpotKind: lsPtr(location.SpotUser)},
			location.SpotFilter{MeshName: lsPtr("other")},
			location.SpotFilter{SpotType: lsPtr("lobby")},
			location.SpotFilter{NodeRID: rid("node-2")},
			location.SpotFilter{SpotKind: lsPtr(location.SpotInstance)})
	})
	t.Run("actors", func(t *testing.T) {
		requireFilterMatches(t, MatchActor, fixture.ACTOR("a", 1),
			location.ActorFilter{ActorType: lsPtr("player"), NodeRID: rid("node-1"), SpotID: lsPtr("node-1"), LocationKind: lsPtr(location.SpotEntry)},
			location.ActorFilter{ActorType: lsPtr("npc")},
			location.ActorFilter{NodeRID: rid("node-2")},
			location.ActorFilter{SpotID: lsPtr("room-1")},
			location.ActorFilter{LocationKind: lsPtr(location.SpotUser)})
	})
	t.Run("routes", func(t *testing.T) {
		requireFilterMatches(t, MatchRoute, fixture.ROUTE("a", 1),
			location.RouteFilter{RouteKind: lsPtr(location.RouteActorSession), OwnerNodeRID: rid("node-1"), OwnerID: lsPtr("a")},
			location.RouteFilter{RouteKind: lsPtr(location.RouteSpotName)},
			location.RouteFilter{OwnerNodeRID: rid("node-2")},
			location.RouteFilter{OwnerID: lsPtr("b")})
	})
}

// requireFilterMatches checks a filter predicate on one row: the empty
// filter and full (every field set to the row's value) match it, and each
// of misses (one field set to another value) does not.
func requireFilterMatches[R, F any](t *testing.T, match func(*R, *F) bool, row R, full F, misses ...F) {
	t.Helper()
	var empty F
	require.True(t, match(&row, &empty), "empty filter")
	require.True(t, match(&row, &full), "full filter")
	for i := range misses {
		require.False(t, match(&row, &misses[i]), "miss %d: %+v", i, misses[i])
	}
}
