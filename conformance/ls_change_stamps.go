package conformance

import (
	"errors"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section K: change stamps (LS-190 … LS-198). Mesh nodes bump the
// Peer scope; client-server stamps key the channel as the mesh and
// ignore ChannelName (A-06, reproduced); an empty mesh name bumps the
// global counter once (A-39, fixed).

// lsEveryStamp lists every scope kind for the global scope and the names.
func lsEveryStamp(names ...string) []stampScope {
	var out []stampScope
	for _, k := range stampKinds() {
		for _, m := range append([]string{""}, names...) {
			out = append(out, stampScope{Kind: k, Mesh: m})
		}
	}
	return out
}

// ls190 checks LS-190 "Fresh store" (K. Change stamps): every stamp of an
// empty store reads 0.
func ls190(l *lsCase) {
	for _, k := range []location.LocationKind{location.LocationPeer, location.LocationSpot, location.LocationActor, location.LocationRoute, location.LocationClientServer} {
		l.expectStamp(stampOf(k, ""), 0)
		l.expectStamp(stampOf(k, fixture.MeshPlay), 0)
	}
	for _, k := range []location.ScopeKind{location.ScopeMeshNode, location.ScopeFanoutPublisher} {
		l.expectStamp(stampScope{Kind: k}, 0)
		l.expectStamp(stampScope{Kind: k, Mesh: fixture.MeshPlay}, 0)
	}
}

// ls191 checks LS-191 "Per-mesh and global counters" (K. Change stamps).
func ls191(l *lsCase) {
	l.claim("a")
	play, other, global := stampOf(location.LocationPeer, fixture.MeshPlay), stampOf(location.LocationPeer, "other"), stampOf(location.LocationPeer, "")
	scopes := []stampScope{play, other, global}
	s0 := l.readStamps(scopes...)
	p := fixture.PEER("a", 0)
	l.expectStored(l.putPeer(p, location.IntentNewClaim), numPositive(1), T0(), "peer play/node-1")
	s1 := l.readStamps(scopes...)
	p.NodeRID = lsRIDPtr("node-2")
	l.expectStored(l.putPeer(p, location.IntentNewClaim), numPositive(1), T0(), "peer play/node-2")
	s2 := l.readStamps(scopes...)
	p = fixture.PEER("a", 0)
	p.MeshName = "other"
	l.expectStored(l.putPeer(p, location.IntentNewClaim), numPositive(1), T0(), "peer other/node-1")
	s3 := l.readStamps(scopes...)
	for _, step := range []struct {
		before, after stampSet
		play, other   int64
	}{{s0, s1, 1, 0}, {s1, s2, 1, 0}, {s2, s3, 0, 1}} {
		l.expectStampDelta(step.before, step.after, play, step.play)
		l.expectStampDelta(step.before, step.after, other, step.other)
		l.expectStampDelta(step.before, step.after, global, 1)
	}
	l.expectStamp(play, 2)
	l.expectStamp(other, 1)
	l.expectStamp(global, 3)
}

// ls192 checks LS-192 "Mesh nodes use the Peer scope" (K. Change stamps; A-05).
func ls192(l *lsCase) {
	lsCreateMN(l, nil)
	l.expectStamp(stampOf(location.LocationPeer, fixture.MeshGame), 1)
	l.expectStamp(stampScope{Kind: location.ScopeMeshNode, Mesh: fixture.MeshGame}, 0)
}

// ls193 checks LS-193 "No bump without a change" (K. Change stamps).
func ls193(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	pg, rg := lsOneRowEach(l, a)

	scopes := lsEveryStamp(fixture.MeshGame, fixture.MeshPlay, "orders", "events", "other")
	before := l.readStamps(scopes...)
	check := func(what string) {
		l.Helper()
		after := l.readStamps(scopes...)
		for _, s := range scopes {
			if before[s] != after[s] {
				l.Fatalf("%s moved %s from %d to %d", what, s, before[s], after[s])
			}
		}
	}

	// IgnoredStale writes.
	l.expectFailed(l.putMN(fixture.MN(b), location.IntentNewClaim), location.IgnoredStale, "MN(b) NewClaim")
	l.expectFailed(l.putCS(fixture.CS(b), location.IntentNewClaim), location.IgnoredStale, "CS(b) NewClaim")
	fp := fixture.FP(a)
	fp.State = location.StateDraining
	l.expectFailed(l.putFP(fp, location.IntentRenew), location.IgnoredStale, "FP(a) same revision, Draining")
	l.expectFailed(l.putPeer(fixture.PEER("a", pg+1), location.IntentRenew), location.IgnoredStale, "PEER(a, g+1) Renew")
	l.expectFailed(l.putSpot(fixture.SPOT("a", a.LeaseGeneration+1), location.IntentRenew), location.IgnoredStale, "SPOT(a, gen+1) Renew")
	l.expectFailed(l.putActor(fixture.ACTOR("a", a.LeaseGeneration+1), location.IntentRenew), location.IgnoredStale, "ACTOR(a, gen+1) Renew")
	l.expectFailed(l.putRoute(fixture.ROUTE("a", rg+4), location.IntentRenew), location.IgnoredStale, "ROUTE(a, g+4) Renew")
	check("an IgnoredStale write")

	// RejectedConflict writes.
	lsExpectEveryWriteRejected(l, b)
	check("a RejectedConflict write")

	// Validation errors.
	mn := fixture.MN(a)
	mn.MeshName = ""
	_, err := l.S.UpdateMeshNode(l.Ctx, mn, location.IntentNewClaim)
	l.expectInputError(err, location.ClassType, "MN with an empty mesh")
	cs := fixture.CS(a)
	cs.ChannelName = ""
	_, err = l.S.UpdateClientServer(l.Ctx, cs, location.IntentNewClaim)
	l.expectInputError(err, location.ClassType, "CS with an empty channel")
	fp = fixture.FP(a)
	fp.Endpoint = ""
	_, err = l.S.UpdateFanoutPublisher(l.Ctx, fp, location.IntentNewClaim)
	l.expectInputError(err, location.ClassType, "FP with an empty endpoint")
	peer := fixture.PEER("a", 0)
	peer.Role = 0
	_, err = l.S.UpdatePeer(l.Ctx, peer, location.IntentTakeover)
	l.expectInputError(err, location.ClassRange, "PEER with role 0")
	_, err = l.S.UpdateSpot(l.Ctx, lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, ""), location.IntentTakeover)
	l.expectInputError(err, location.ClassType, "SPOT with an empty id")
	check("a validation error")

	// Descriptor replays.
	l.expectStored(l.putMN(fixture.MN(a), location.IntentRenew), numPositive(1), T0(), "MN(a) replay")
	l.expectStored(l.putCS(fixture.CS(a), location.IntentRenew), numPositive(1), T0(), "CS(a) replay")
	l.expectStored(l.putFP(fixture.FP(a), location.IntentRenew), numPositive(1), T0(), "FP(a) replay")
	check("a descriptor replay")

	// Failed removes.
	wrong := fixture.Token("a", a.LeaseGeneration+1)
	require.Equal(l, location.IgnoredStale, l.rmMN(fixture.MNKey(), wrong))
	require.Equal(l, location.IgnoredStale, l.rmCS(fixture.CSKey(), wrong))
	require.Equal(l, location.IgnoredStale, l.rmFP(fixture.FPKey(), wrong))
	l.expectFailed(l.rmPeer(fixture.PeerKey(), fixture.Token("a", pg+1)), location.IgnoredStale, "RemovePeer")
	require.Equal(l, location.IgnoredStale, l.rmSpot(fixture.SpotKey(), wrong))
	require.Equal(l, location.IgnoredStale, l.rmActor(fixture.ActorKey(), wrong))
	l.expectFailed(l.rmRoute(fixture.RouteKey(), fixture.Token("a", rg+1)), location.IgnoredStale, "RemoveRoute")
	require.Equal(l, int64(0), l.removeAll(wrong))
	check("a failed remove")

	// Lists and resolves.
	l.listMN(fixture.MeshGame)
	l.listCS("orders")
	l.listFP("events")
	l.listPeers(location.PeerFilter{})
	l.listSpots(location.SpotFilter{}, location.PageRequest{PageSize: 1})
	l.listActors(location.ActorFilter{})
	l.listRoutes(location.RouteFilter{})
	l.resolveSpot(fixture.SpotKey())
	l.resolveActor(fixture.ActorKey())
	l.resolveRoute(fixture.RouteKey())
	l.resolveXfer(fixture.MeshGame, "actor-1")
	check("a list or resolve")

	// Lease operations.
	c := l.claim("c")
	l.readLease("c")
	_, err = l.S.RenewOwnerLease(l.Ctx, c, lsTTL)
	require.NoError(l, err)
	_, err = l.S.ClaimOwnerLease(l.Ctx, "c", lsTTL)
	require.NoError(l, err)
	l.release("c")
	check("a lease operation")

	// Transfer operations.
	ref := fixture.XferRef(fixture.XFER())
	l.expectXferStatus(l.takeOver(ref, "recovery-b", lsTTL), location.TransferRejectedConflict, "early takeover")
	lsMoved(l, trCommit, fixture.XFER(), "recovery-a", location.TransferCommitted)
	lsMoved(l, trActivate, fixture.XFER(), "recovery-a", location.TransferActivated)
	lsPrepared(l, fixture.XFER2())
	lsMoved(l, trAbort, fixture.XFER2(), "recovery-a", location.TransferAborted)
	check("a transfer operation")
}

// ls194 checks LS-194 "Routes are global only" (K. Change stamps; A-09).
func ls194(l *lsCase) {
	lsCreateRoute(l)
	l.expectStamp(stampOf(location.LocationRoute, ""), 1)
	l.expectStamp(stampOf(location.LocationRoute, fixture.MeshPlay), 0)
}

// ls195 checks LS-195 "Client-server scopes" (K. Change stamps; A-06
// reproduced: ChannelName is ignored).
func ls195(l *lsCase) {
	a := l.claim("a")
	orders, billing, global := stampOf(location.LocationClientServer, "orders"), stampOf(location.LocationClientServer, "billing"), stampOf(location.LocationClientServer, "")
	scopes := []stampScope{orders, billing, global}
	s0 := l.readStamps(scopes...)
	l.expectStored(l.putCS(fixture.CS(a), location.IntentNewClaim), numPositive(1), T0(), "CS(a) on orders")
	s1 := l.readStamps(scopes...)
	d := fixture.CS(a)
	d.ChannelName = "billing"
	l.expectStored(l.putCS(d, location.IntentNewClaim), numPositive(1), T0(), "CS(a) on billing")
	s2 := l.readStamps(scopes...)
	l.expectStampDelta(s0, s1, orders, 1)
	l.expectStampDelta(s0, s1, billing, 0)
	l.expectStampDelta(s1, s2, orders, 0)
	l.expectStampDelta(s1, s2, billing, 1)
	l.expectStampDelta(s0, s1, global, 1)
	l.expectStampDelta(s1, s2, global, 1)
	l.expectStamp(orders, 1)
	l.expectStamp(billing, 1)
	l.expectStamp(global, 2)
	byChannel, err := l.S.GetChangeStamp(l.Ctx, location.ChangeStampScope{Kind: location.LocationClientServer.Scope(), ChannelName: lsStrPtr("orders")})
	require.NoError(l, err)
	require.Equal(l, l.readStamp(global), byChannel, "ChannelName is ignored: the global client-server counter")
}

// ls196 checks LS-196 "Optional mesh-node stamp" (K. Change stamps).
func ls196(l *lsCase) {
	st, ok := l.S.(location.MeshNodeChangeStamper)
	if !ok {
		l.Fatalf("the harness declares MeshNodeChangeStamp, but the store does not implement location.MeshNodeChangeStamper: the store claims more than it does")
	}
	read := func(mesh string) int64 {
		l.Helper()
		v, ok, err := st.GetMeshNodeChangeStamp(l.Ctx, mesh)
		if errors.Is(err, location.ErrUnsupported) || (err == nil && !ok) {
			l.Fatalf("the harness declares MeshNodeChangeStamp, but GetMeshNodeChangeStamp(%q) answers (ok %v, %v): the store claims more than it does", mesh, ok, err)
		}
		require.NoError(l, err)
		return v
	}
	s0 := read(fixture.MeshGame)
	l.expectNum(s0, numEqual(0), "a fresh mesh's stamp")
	g := lsCreateMN(l, nil)
	s1 := read(fixture.MeshGame)
	l.expectNum(s1, numAbove(1, s0), "create moves the stamp")
	l.expectStored(l.putMN(fixture.MN(l.tok("a")), location.IntentRenew), numEqual(g), T0(), "replay")
	require.Equal(l, s1, read(fixture.MeshGame), "a replay leaves the stamp")
	d := fixture.MN(l.tok("a"))
	d.DescriptorRevision = 4
	l.expectStored(l.putMN(d, location.IntentRenew), numEqual(g), T0(), "revision update")
	s2 := read(fixture.MeshGame)
	l.expectNum(s2, numAbove(2, s1), "a revision update moves the stamp")
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), l.tok("a")))
	s3 := read(fixture.MeshGame)
	l.expectNum(s3, numAbove(3, s2), "a remove moves the stamp")
	t := fixture.MN(l.tok("a"))
	t.MeshName, t.RID = "test", lsRID("node-z")
	l.expectStored(l.putMN(t, location.IntentNewClaim), numPositive(1), T0(), "MN in mesh test")
	require.Equal(l, s3, read(fixture.MeshGame), "another mesh's write leaves game's stamp")
	l.expectNum(read("test"), numPositive(1), "mesh test's stamp")
	p := fixture.PEER("a", 0)
	p.MeshName = fixture.MeshGame
	l.expectStored(l.putPeer(p, location.IntentNewClaim), numPositive(1), T0(), "a peer of mesh game")
	require.Equal(l, s3, read(fixture.MeshGame), "peer writes leave the mesh-node stamp")
	lsCreateMN(l, nil)
	s4 := read(fixture.MeshGame)
	l.expectNum(s4, numAbove(4, s3), "re-create moves the stamp")
	require.Positive(l, l.removeAll(l.tok("a")))
	l.expectNum(read(fixture.MeshGame), numAbove(5, s4), "RemoveAllByOwner moves the stamp")
}

// ls197 checks LS-197 "Empty mesh name" (K. Change stamps; A-39 fixed: one
// bump).
func ls197(l *lsCase) {
	a := l.claim("a")
	s := lsSpotOn("a", a.LeaseGeneration, "", "spot-1")
	l.expectStored(l.putSpot(s, location.IntentNewClaim), numPositive(1), T0(), "SPOT(a) with an empty mesh name")
	l.expectStamp(stampOf(location.LocationSpot, ""), 1)
	empty := ""
	v, err := l.S.GetChangeStamp(l.Ctx, location.ChangeStampScope{Kind: location.LocationSpot.Scope(), MeshName: &empty})
	require.NoError(l, err)
	require.Equal(l, l.readStamp(stampOf(location.LocationSpot, "")), v, "an empty mesh name reads the global counter")
}

// ls198 checks LS-198 "Renew and revision updates bump, replays do not" (K.
// Change stamps).
func ls198(l *lsCase) {
	a := l.claim("a")
	g := lsCreateMN(l, nil)
	pg := lsCreatePeer(l)
	lsCreateSpot(l)
	l.expectStored(l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentNewClaim), numPositive(1), T0(), "ACTOR(a)")
	scopes := []stampScope{
		stampOf(location.LocationPeer, fixture.MeshPlay), stampOf(location.LocationPeer, fixture.MeshGame), stampOf(location.LocationPeer, ""),
		stampOf(location.LocationSpot, fixture.MeshPlay), stampOf(location.LocationSpot, ""),
		stampOf(location.LocationActor, fixture.MeshPlay), stampOf(location.LocationActor, ""),
	}
	step := func(what string, write func(), deltas map[stampScope]int64) {
		l.Helper()
		before := l.readStamps(scopes...)
		write()
		after := l.readStamps(scopes...)
		l.Logf("%s", what)
		for _, s := range scopes {
			l.expectStampDelta(before, after, s, deltas[s])
		}
	}
	step("peer Renew", func() {
		l.expectStored(l.putPeer(fixture.PEER("a", pg), location.IntentRenew), numEqual(pg), T0(), "PEER(a) Renew")
	}, map[stampScope]int64{stampOf(location.LocationPeer, fixture.MeshPlay): 1, stampOf(location.LocationPeer, ""): 1})
	step("spot Renew", func() {
		l.expectStored(l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentRenew), numPositive(1), T0(), "SPOT(a) Renew")
	}, map[stampScope]int64{stampOf(location.LocationSpot, fixture.MeshPlay): 1, stampOf(location.LocationSpot, ""): 1})
	step("actor Renew", func() {
		l.expectStored(l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentRenew), numPositive(1), T0(), "ACTOR(a) Renew")
	}, map[stampScope]int64{stampOf(location.LocationActor, fixture.MeshPlay): 1, stampOf(location.LocationActor, ""): 1})
	step("descriptor revision update", func() {
		d := fixture.MN(a)
		d.DescriptorRevision = 4
		l.expectStored(l.putMN(d, location.IntentRenew), numEqual(g), T0(), "MN(a) revision 4")
	}, map[stampScope]int64{stampOf(location.LocationPeer, fixture.MeshGame): 1, stampOf(location.LocationPeer, ""): 1})
	step("descriptor replay", func() {
		d := fixture.MN(a)
		d.DescriptorRevision = 4
		l.expectStored(l.putMN(d, location.IntentRenew), numEqual(g), T0(), "MN(a) revision 4 replay")
	}, nil)
}
