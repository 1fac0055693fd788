package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section I: RemoveAllByOwner (LS-160 … LS-167). Rows are matched
// by owner id; (Actor, mesh) is bumped too (A-08, fixed).

// ls160 checks LS-160 "Without a lease" (I. removeAllByOwner).
func ls160(l *lsCase) {
	l.expectStored(l.putSpot(fixture.SPOT("ghost", 1), location.IntentNewClaim), numPositive(1), T0(), "SPOT(ghost)")
	before := l.snap()
	require.Equal(l, int64(0), l.removeAll(fixture.Token("ghost", 1)))
	l.noEffect(before, "RemoveAllByOwner without a lease")
}

// ls161 checks LS-161 "Wrong generation" (I. removeAllByOwner).
func ls161(l *lsCase) {
	lsCreateSpot(l)
	before := l.snap()
	require.Equal(l, int64(0), l.removeAll(fixture.Token("a", l.gen("a")+1)))
	l.noEffect(before, "RemoveAllByOwner with a wrong generation")
}

// ls162 checks LS-162 "Expired lease" (I. removeAllByOwner).
func ls162(l *lsCase) {
	lsCreateSpot(l)
	l.expire("a")
	require.Equal(l, int64(0), l.removeAll(l.tok("a")))
	require.NotNil(l, l.resolveSpot(fixture.SpotKey()), "the row remains")
}

// lsSweepSetup is LS-163's setup: a owns one row of every table, b owns
// spot-2. It returns the generation of a's peer row.
func lsSweepSetup(l *lsCase) (peerGen int64) {
	l.Helper()
	a := l.claim("a")
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MN(a), location.IntentNewClaim), numPositive(1), T0(), "MN(a)")
	l.expectStored(l.putCS(fixture.CS(a), location.IntentNewClaim), numPositive(1), T0(), "CS(a)")
	l.expectStored(l.putFP(fixture.FP(a), location.IntentNewClaim), numPositive(1), T0(), "FP(a)")
	res := l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), T0(), "PEER(a)")
	peerGen = res.Generation
	l.expectStored(l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim), numPositive(1), T0(), "SPOT(a)")
	l.expectStored(l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentNewClaim), numPositive(1), T0(), "ACTOR(a)")
	l.expectStored(l.putRoute(fixture.ROUTE("a", 0), location.IntentNewClaim), numPositive(1), T0(), "ROUTE(a)")
	l.expectStored(l.putSpot(lsSpotOn("b", b.LeaseGeneration, fixture.MeshPlay, "spot-2"), location.IntentNewClaim), numPositive(1), T0(), "SPOT(b, spot-2)")
	return peerGen
}

// lsSweep is LS-163: the setup, the sweep and its checks. It returns the
// generation a's peer row had.
func lsSweep(l *lsCase) (peerGen int64) {
	l.Helper()
	peerGen = lsSweepSetup(l)
	a := l.tok("a")
	fanout := []stampScope{{Kind: location.ScopeFanoutPublisher}, {Kind: location.ScopeFanoutPublisher, Mesh: "events"}}
	deltas := map[stampScope]int64{
		stampOf(location.LocationPeer, fixture.MeshGame):  1,
		stampOf(location.LocationPeer, fixture.MeshPlay):  1,
		stampOf(location.LocationPeer, ""):                2,
		stampOf(location.LocationSpot, fixture.MeshPlay):  1,
		stampOf(location.LocationSpot, ""):                1,
		stampOf(location.LocationActor, ""):               1,
		stampOf(location.LocationActor, fixture.MeshPlay): 1,
		stampOf(location.LocationRoute, ""):               1,
		stampOf(location.LocationClientServer, "orders"):  1,
		stampOf(location.LocationClientServer, ""):        1,
		fanout[0]: 0,
		fanout[1]: 0,
		stampOf(location.LocationClientServer, fixture.MeshPlay): 0,
		stampOf(location.LocationRoute, fixture.MeshPlay):        0,
		stampOf(location.LocationSpot, fixture.MeshGame):         0,
		stampOf(location.LocationActor, fixture.MeshGame):        0,
		stampOf(location.LocationClientServer, "events"):         0,
		{Kind: location.ScopeMeshNode, Mesh: fixture.MeshGame}:   0,
		{Kind: location.ScopeClientServer, Mesh: "orders"}:       0,
		stampOf(location.LocationPeer, "other"):                  0,
		stampOf(location.LocationSpot, "other"):                  0,
		stampOf(location.LocationRoute, "other"):                 0,
		stampOf(location.LocationActor, "other"):                 0,
		stampOf(location.LocationClientServer, "orders-2"):       0,
		{Kind: location.ScopeFanoutPublisher, Mesh: "other"}:     0,
	}
	var scopes []stampScope
	for s := range deltas {
		scopes = append(scopes, s)
	}
	before := l.readStamps(scopes...)
	require.Equal(l, int64(7), l.removeAll(a), "RemoveAllByOwner(tok(a))")
	after := l.readStamps(scopes...)
	for s, d := range deltas {
		l.expectStampDelta(before, after, s, d)
	}
	require.Empty(l, l.listMN(fixture.MeshGame), "mesh nodes")
	require.Empty(l, l.listCS("orders"), "client servers")
	require.Empty(l, l.listFP("events"), "fanout publishers")
	require.Empty(l, l.listPeers(location.PeerFilter{}), "peers")
	require.Nil(l, l.resolveSpot(fixture.SpotKey()), "a's spot")
	require.Nil(l, l.resolveActor(fixture.ActorKey()), "a's actor")
	require.Nil(l, l.resolveRoute(fixture.RouteKey()), "a's route")
	require.Empty(l, l.listActors(location.ActorFilter{}), "actors")
	require.Empty(l, l.listRoutes(location.RouteFilter{}), "routes")
	spots := l.listSpots(location.SpotFilter{}, location.PageRequest{})
	require.Equal(l, []string{"spot-2"}, lsSpotIDs(spots.Items), "b's spot remains")
	require.Equal(l, "b", spots.Items[0].OwnerID)
	require.Equal(l, location.KindFound, l.readLease("a").Kind, "the sweep does not release the lease")
	return peerGen
}

// ls163 checks LS-163 "Sweep across tables" (I. removeAllByOwner).
func ls163(l *lsCase) { lsSweep(l) }

// ls164 checks LS-164 "Rows of an older incarnation are swept" (I.
// removeAllByOwner).
func ls164(l *lsCase) {
	g1 := l.claim("a")
	l.expectStored(l.putSpot(fixture.SPOT("a", g1.LeaseGeneration), location.IntentNewClaim), numPositive(1), T0(), "SPOT(a, g1)")
	l.expectStored(l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim), numPositive(1), T0(), "PEER(a)")
	l.expire("a")
	g2 := l.claim("a")
	require.Equal(l, int64(2), l.removeAll(g2), "RemoveAllByOwner({a, g2}) sweeps the older incarnation's rows")
	require.Nil(l, l.resolveSpot(fixture.SpotKey()))
	require.Empty(l, l.listPeers(location.PeerFilter{}))
}

// ls165 checks LS-165 "Counters survive the sweep" (I. removeAllByOwner).
func ls165(l *lsCase) {
	g := lsSweep(l)
	l.expectStored(l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim), numAbove(2, g), l.now(), "PEER(a) after the sweep")
	l.expectStored(l.putMN(fixture.MN(l.tok("a")), location.IntentNewClaim), numPositive(1), l.now(), "MN(a) after the sweep (A-04)")
}

// ls166 checks LS-166 "Transfers untouched" (I. removeAllByOwner).
func ls166(l *lsCase) {
	l.expectXferStatus(l.prepare(fixture.XFER()), location.TransferStored, "prepare XFER")
	rec := l.resolveXfer(fixture.MeshGame, "actor-1")
	r := l.claim("recovery-a")
	require.Equal(l, int64(0), l.removeAll(r))
	l.expectSameRow(rec, l.resolveXfer(fixture.MeshGame, "actor-1"), "the transfer is untouched")
}

// ls167 checks LS-167 "Second sweep" (I. removeAllByOwner).
func ls167(l *lsCase) {
	lsSweep(l)
	before := l.snap()
	require.Equal(l, int64(0), l.removeAll(l.tok("a")), "second sweep")
	l.noEffect(before, "second sweep")
}
