package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section H: routes (LS-150 … LS-158). Routes follow the peer
// rules and bump only the global Route stamp.

// lsCreateRoute claims a (unless claimed) and stores ROUTE(a); it returns
// the generation.
func lsCreateRoute(l *lsCase) int64 {
	l.Helper()
	l.claimOnce("a")
	return l.created(l.putRoute(fixture.ROUTE("a", 0), location.IntentNewClaim), "ROUTE(a) NewClaim")
}

// ls150 checks LS-150 "Create" (H. Routes): a NewClaim stores the route and
// bumps only the global Route stamp.
func ls150(l *lsCase) {
	g := lsCreateRoute(l)
	r := l.resolveRoute(fixture.RouteKey())
	require.NotNil(l, r)
	require.Equal(l, []byte{1, 2, 3, 4}, r.Value)
	require.Equal(l, g, r.Generation)
	want := fixture.ROUTE("a", g)
	want.UpdatedAt = T0()
	l.expectSameRow(&want, r, "ResolveRoute(ActorSession, route-1)")
	l.expectStamp(stampOf(location.LocationRoute, ""), 1)
	l.expectStamp(stampOf(location.LocationRoute, fixture.MeshPlay), 0)
	l.expectStamp(stampOf(location.LocationPeer, ""), 0)
}

// ls151 checks LS-151 "Session-route claim pattern" (H. Routes).
func ls151(l *lsCase) {
	g := lsCreateRoute(l)
	l.claim("b")
	l.expectFailed(l.putRoute(fixture.ROUTE("b", 0), location.IntentNewClaim), location.RejectedConflict, "ROUTE(b) NewClaim")
	l.expectStored(l.putRoute(fixture.ROUTE("b", 0), location.IntentTakeover), numAbove(2, g), l.now(), "ROUTE(b) Takeover")
	require.Equal(l, "b", l.resolveRoute(fixture.RouteKey()).OwnerID)
}

// ls152 checks LS-152 "Renew rules" (H. Routes).
func ls152(l *lsCase) {
	g := lsCreateRoute(l)
	l.expectStored(l.putRoute(fixture.ROUTE("a", g), location.IntentRenew), numEqual(g), l.now(), "ROUTE(a, g) Renew")
	l.expectFailed(l.putRoute(fixture.ROUTE("a", g+4), location.IntentRenew), location.IgnoredStale, "ROUTE(a, g+4) Renew")
	l.expectFailed(l.putRoute(fixture.ROUTE("b", g), location.IntentRenew), location.IgnoredStale, "ROUTE(b, g) Renew")
}

// ls153 checks LS-153 "Remove" (H. Routes): fenced by the row generation and
// the exact key; a removal bumps the Route stamp.
func ls153(l *lsCase) {
	g := lsCreateRoute(l)
	s := stampOf(location.LocationRoute, "")
	before := l.readStamps(s)
	l.expectFailed(l.rmRoute(fixture.RouteKey(), fixture.Token("a", g+1)), location.IgnoredStale, "RemoveRoute with g+1")
	l.expectFailed(l.rmRoute(location.RouteKey{RouteKind: location.RouteActorSession, RouteKey: "route-9"}, fixture.Token("a", g)), location.IgnoredStale, "RemoveRoute of route-9")
	l.expectStampDelta(before, l.readStamps(s), s, 0)
	l.expectStored(l.rmRoute(fixture.RouteKey(), fixture.Token("a", g)), numEqual(g), l.now(), "RemoveRoute with g")
	l.expectStampDelta(before, l.readStamps(s), s, 1)
	require.Nil(l, l.resolveRoute(fixture.RouteKey()))
}

// ls154 checks LS-154 "Re-claim after remove (reference trace)" (H. Routes).
func ls154(l *lsCase) {
	l.claim("a")
	l.claim("b")
	g := lsCreateRoute(l)
	l.expectStored(l.rmRoute(fixture.RouteKey(), fixture.Token("a", g)), numEqual(g), l.now(), "RemoveRoute(key, {a, g})")
	l.expectStored(l.putRoute(fixture.ROUTE("b", 0), location.IntentNewClaim), numAbove(2, g), l.now(), "ROUTE(b) NewClaim after the remove")
}

// ls155 checks LS-155 "Kind is part of route identity" (H. Routes).
func ls155(l *lsCase) {
	lsCreateRoute(l)
	r := fixture.ROUTE("a", 0)
	r.RouteKind = location.RouteSpotName
	l.expectStored(l.putRoute(r, location.IntentNewClaim), numPositive(1), l.now(), "ROUTE(a) as SpotName")
	require.Len(l, l.listRoutes(location.RouteFilter{}), 2)
}

// ls156 checks LS-156 "Filters" (H. Routes): each RouteFilter field selects
// the matching rows.
func ls156(l *lsCase) {
	mk := func(kind location.RouteKind, key, node, owner string) location.RouteLocation {
		r := fixture.ROUTE(owner, 0)
		r.RouteKind, r.RouteKey, r.OwnerNodeRID = kind, key, lsRID(node)
		return r
	}
	rows := map[string]location.RouteLocation{}
	for _, r := range []location.RouteLocation{
		mk(location.RouteActorSession, "r1", "node-1", "a"),
		mk(location.RouteSpotName, "r2", "node-2", "a"),
		mk(location.RouteActorSession, "r3", "node-2", "b"),
	} {
		res := l.putRoute(r, location.IntentNewClaim)
		l.expectStored(res, numPositive(1), l.now(), "route %s", r.RouteKey)
		r.Generation, r.UpdatedAt = res.Generation, l.now()
		rows[r.RouteKey] = r
	}
	session := location.RouteActorSession
	for _, c := range []lsFilterCase[location.RouteFilter]{
		{"{RouteKind ActorSession}", location.RouteFilter{RouteKind: &session}, []string{"r1", "r3"}},
		{"{OwnerNodeRID node-2}", location.RouteFilter{OwnerNodeRID: lsRIDPtr("node-2")}, []string{"r2", "r3"}},
		{"{OwnerID a}", location.RouteFilter{OwnerID: lsStrPtr("a")}, []string{"r1", "r2"}},
		{"{}", location.RouteFilter{}, []string{"r1", "r2", "r3"}},
	} {
		lsExpectListed(l, rows, c.want, l.listRoutes(c.f), func(r location.RouteLocation) string { return r.RouteKey }, "ListRoutes(%s)", c.what)
	}
}

// ls157 checks LS-157 "Value bytes are copied" (H. Routes; A-40 fixed: values
// are copied in and out).
func ls157(l *lsCase) {
	l.claim("a")
	r := fixture.ROUTE("a", 0)
	v := r.Value
	l.expectStored(l.putRoute(r, location.IntentNewClaim), numPositive(1), l.now(), "ROUTE(a)")
	v[0] = 99
	got := l.resolveRoute(fixture.RouteKey())
	require.Equal(l, []byte{1, 2, 3, 4}, got.Value, "the caller's slice was copied in")
	got.Value[1] = 98
	require.Equal(l, []byte{1, 2, 3, 4}, l.resolveRoute(fixture.RouteKey()).Value, "the returned slice is a copy")
	rows := l.listRoutes(location.RouteFilter{})
	require.Len(l, rows, 1)
	rows[0].Value[2] = 97
	require.Equal(l, []byte{1, 2, 3, 4}, l.resolveRoute(fixture.RouteKey()).Value, "listed values are copies")
}

// ls158 checks LS-158 "Dead owners' routes resolve" (H. Routes).
func ls158(l *lsCase) {
	lsCreateRoute(l)
	l.expire("a")
	r := l.resolveRoute(fixture.RouteKey())
	require.NotNil(l, r, "a dead owner's route resolves")
	require.Equal(l, "a", r.OwnerID)
}
