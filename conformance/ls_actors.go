package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section G: actors (LS-140 … LS-145). Actors follow the spot
// rules.

// ls140 checks LS-140 "Create" (G. Actors): a NewClaim stores the actor with
// the store time and bumps the Actor scope.
func ls140(l *lsCase) {
	a := l.claim("a")
	l.expectStored(l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentNewClaim), numPositive(1), T0(), "ACTOR(a) NewClaim")
	want := fixture.ACTOR("a", a.LeaseGeneration)
	want.UpdatedAt = T0()
	l.expectSameRow(&want, l.resolveActor(fixture.ActorKey()), "ResolveActor(play, actor-1)")
	l.expectStamp(stampOf(location.LocationActor, fixture.MeshPlay), 1)
	l.expectStamp(stampOf(location.LocationActor, ""), 1)
}

// lsActorClaimRules runs LS-141's claim rules on actor id and returns the
// generation of the first row.
func lsActorClaimRules(l *lsCase, id string) int64 {
	l.Helper()
	a, b := l.tok("a"), l.tok("b")
	mk := func(owner string, lg int64) location.ActorLocation {
		x := fixture.ACTOR(owner, lg)
		x.ActorID = id
		x.ActorRef.ActorID = id
		return x
	}
	res := l.putActor(mk("a", a.LeaseGeneration), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), l.now(), "%s: ACTOR(a) NewClaim", id)
	g := res.Generation
	l.expectFailed(l.putActor(mk("b", b.LeaseGeneration), location.IntentNewClaim), location.RejectedConflict, "%s: ACTOR(b) NewClaim", id)
	l.expectFailed(l.putActor(mk("a", a.LeaseGeneration), location.IntentNewClaim), location.RejectedConflict, "%s: ACTOR(a) NewClaim again", id)
	l.expectStored(l.putActor(mk("a", a.LeaseGeneration), location.IntentRenew), numEqual(g), l.now(), "%s: ACTOR(a) Renew", id)
	l.expectFailed(l.putActor(mk("a", a.LeaseGeneration+1), location.IntentRenew), location.IgnoredStale, "%s: ACTOR(a, gen(a)+1) Renew", id)
	return g
}

// ls141 checks LS-141 "Claim rules (as spots)" (G. Actors), with its ⏱L variant
// on actor-2.
func ls141(l *lsCase) {
	l.claim("a")
	b := l.claim("b")
	g := lsActorClaimRules(l, "actor-1")
	l.expectStored(l.putActor(fixture.ACTOR("b", b.LeaseGeneration), location.IntentTakeover), numAbove(2, g), l.now(), "ACTOR(b) Takeover")

	g = lsActorClaimRules(l, "actor-2")
	l.expire("a")
	x := fixture.ACTOR("b", b.LeaseGeneration)
	x.ActorID, x.ActorRef.ActorID = "actor-2", "actor-2"
	l.expectStored(l.putActor(x, location.IntentNewClaim), numAbove(2, g), l.now(), "ACTOR(b) NewClaim after expire(a)")
}

// ls142 checks LS-142 "Remove fencing" (G. Actors).
func ls142(l *lsCase) {
	a := l.claim("a")
	res := l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), l.now(), "ACTOR(a) NewClaim")
	res = l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentTakeover)
	require.Equal(l, location.Stored, res.Status, "ACTOR(a) Takeover")
	for i := 0; res.Generation == a.LeaseGeneration && i < 3; i++ {
		res = l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentTakeover)
		require.Equal(l, location.Stored, res.Status)
	}
	require.NotEqual(l, a.LeaseGeneration, res.Generation, "the row generation must differ from gen(a)")
	require.Equal(l, location.IgnoredStale, l.rmActor(fixture.ActorKey(), fixture.Token("a", res.Generation)), "RemoveActor with the row generation")
	require.Equal(l, location.Stored, l.rmActor(fixture.ActorKey(), a), "RemoveActor with tok(a)")
	require.Nil(l, l.resolveActor(fixture.ActorKey()))
}

// ls143 checks LS-143 "Mesh is part of actor identity" (G. Actors).
func ls143(l *lsCase) {
	a := l.claim("a")
	l.expectStored(l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentNewClaim), numPositive(1), l.now(), "ACTOR(a) in play")
	other := fixture.ACTOR("a", a.LeaseGeneration)
	other.MeshName = "other"
	l.expectStored(l.putActor(other, location.IntentNewClaim), numPositive(1), l.now(), "ACTOR(a) in other")
	got := l.resolveActor(location.ActorKey{MeshName: "other", ActorID: "actor-1"})
	require.NotNil(l, got)
	require.Equal(l, "other", got.MeshName)
	require.Equal(l, location.Stored, l.rmActor(fixture.ActorKey(), a))
	require.Nil(l, l.resolveActor(fixture.ActorKey()))
	require.NotNil(l, l.resolveActor(location.ActorKey{MeshName: "other", ActorID: "actor-1"}), "the other mesh's row stays")
}

// ls144 checks LS-144 "Filters (no mesh field)" (G. Actors): every ActorFilter
// field selects the matching rows.
func ls144(l *lsCase) {
	a := l.claim("a")
	mk := func(mesh, id, typ, node, spot string, kind location.SpotKind) location.ActorLocation {
		x := fixture.ACTOR("a", a.LeaseGeneration)
		x.MeshName, x.ActorID, x.ActorType, x.OwnerNodeRID, x.SpotID, x.SpotKind = mesh, id, typ, lsRID(node), spot, kind
		x.ActorRef = location.ActorRef{ActorID: id, ObjectGeneration: 1, MeshName: mesh, NodeRID: lsRID(node)}
		return x
	}
	rows := map[string]location.ActorLocation{
		"actor-1": mk(fixture.MeshPlay, "actor-1", "player", "node-1", "node-1", location.SpotEntry),
		"actor-2": mk("other", "actor-2", "npc", "node-2", "room-1", location.SpotUser),
		"actor-3": mk(fixture.MeshPlay, "actor-3", "player", "node-2", "room-1", location.SpotUser),
	}
	for _, id := range []string{"actor-1", "actor-2", "actor-3"} {
		x := rows[id]
		l.expectStored(l.putActor(x, location.IntentNewClaim), numPositive(1), l.now(), "actor %s/%s", x.MeshName, x.ActorID)
		x.UpdatedAt = l.now()
		rows[id] = x
	}
	entry := location.SpotEntry
	for _, c := range []lsFilterCase[location.ActorFilter]{
		{"{}", location.ActorFilter{}, []string{"actor-1", "actor-2", "actor-3"}},
		{"{ActorType player}", location.ActorFilter{ActorType: lsStrPtr("player")}, []string{"actor-1", "actor-3"}},
		{"{NodeRID node-2}", location.ActorFilter{NodeRID: lsRIDPtr("node-2")}, []string{"actor-2", "actor-3"}},
		{"{SpotID room-1}", location.ActorFilter{SpotID: lsStrPtr("room-1")}, []string{"actor-2", "actor-3"}},
		{"{LocationKind entry}", location.ActorFilter{LocationKind: &entry}, []string{"actor-1"}},
	} {
		lsExpectListed(l, rows, c.want, l.listActors(c.f), func(r location.ActorLocation) string { return r.ActorID }, "ListActors(%s)", c.what)
	}
}

// ls145 checks LS-145 "No writer lease needed" (G. Actors).
func ls145(l *lsCase) {
	l.expectStored(l.putActor(fixture.ACTOR("ghost", 1), location.IntentNewClaim), numPositive(1), T0(), "ACTOR(ghost, 1) NewClaim")
}
