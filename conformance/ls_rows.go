package conformance

import (
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue sections E, F, G and H: the row tables (peers, spots, actors
// and routes).

// Catalogue section E: peers (LS-100 … LS-118). Peer writes check no
// writer lease (A-11, reproduced); a Renew with generation 0 keeps the row
// generation (A-01, fixed).

// lsCreatePeer claims a (unless claimed) and stores PEER(a); it returns the
// generation.
func lsCreatePeer(l *lsCase) int64 {
	l.Helper()
	l.claimOnce("a")
	return l.created(l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim), "PEER(a) NewClaim")
}

// lsOnePeer requires ListPeers({}) to hold exactly one row and returns it.
func lsOnePeer(l *lsCase) location.PeerLocation {
	l.Helper()
	rows := l.listPeers(location.PeerFilter{})
	require.Len(l, rows, 1, "ListPeers({})")
	return rows[0]
}

// ls100 checks LS-100 "Create" (E. Peers): a NewClaim stores the peer with
// the store time and bumps the Peer scope.
func ls100(l *lsCase) {
	g := lsCreatePeer(l)
	want := fixture.PEER("a", g)
	want.UpdatedAt = T0()
	l.expectSameRow([]location.PeerLocation{want}, l.listPeers(location.PeerFilter{MeshName: lsStrPtr(fixture.MeshPlay)}), "ListPeers({play})")
	l.expectStamp(stampOf(location.LocationPeer, fixture.MeshPlay), 1)
	l.expectStamp(stampOf(location.LocationPeer, ""), 1)
}

// ls101 checks LS-101 "No writer lease needed" (E. Peers).
func ls101(l *lsCase) {
	l.expectStored(l.putPeer(fixture.PEER("ghost", 0), location.IntentNewClaim), numPositive(1), T0(), "PEER(ghost) NewClaim")
}

// ls102 checks LS-102 "Live other owner" (E. Peers).
func ls102(l *lsCase) {
	lsCreatePeer(l)
	l.claim("b")
	before := l.snap()
	l.expectFailed(l.putPeer(fixture.PEER("b", 0), location.IntentNewClaim), location.RejectedConflict, "PEER(b) NewClaim over live a")
	l.noEffect(before, "rejected NewClaim")
}

// ls103 checks LS-103 "Own live row" (E. Peers; A-13: claims are not
// idempotent).
func ls103(l *lsCase) {
	lsCreatePeer(l)
	before := l.snap()
	l.expectFailed(l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim), location.RejectedConflict, "PEER(a) NewClaim over its own live row")
	l.noEffect(before, "rejected NewClaim")
}

// ls104 checks LS-104 "Dead owner" (E. Peers).
func ls104(l *lsCase) {
	g := lsCreatePeer(l)
	l.claim("b")
	l.expire("a")
	res := l.putPeer(fixture.PEER("b", 0), location.IntentNewClaim)
	l.expectStored(res, numAbove(2, g), l.now(), "PEER(b) NewClaim over dead a")
	row := lsOnePeer(l)
	require.Equal(l, "b", row.OwnerID)
	require.Equal(l, res.Generation, row.Generation, "the row generation is the returned one")
}

// ls105 checks LS-105 "Owner that never had a lease" (E. Peers).
func ls105(l *lsCase) {
	res := l.putPeer(fixture.PEER("ghost", 0), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), T0(), "PEER(ghost)")
	l.claim("b")
	l.expectStored(l.putPeer(fixture.PEER("b", 0), location.IntentNewClaim), numAbove(2, res.Generation), T0(), "PEER(b) NewClaim over ghost's row")
}

// ls106 checks LS-106 "Takeover is unconditional" (E. Peers).
func ls106(l *lsCase) {
	g := lsCreatePeer(l)
	l.claim("b")
	res := l.putPeer(fixture.PEER("b", 0), location.IntentTakeover)
	l.expectStored(res, numAbove(2, g), l.now(), "PEER(b) Takeover")
	l.expectStored(l.putPeer(fixture.PEER("ghost", 0), location.IntentTakeover), numAbove(3, res.Generation), l.now(), "PEER(ghost) Takeover")
}

// ls107 checks LS-107 "Renew with the row generation" (E. Peers).
func ls107(l *lsCase) {
	g := lsCreatePeer(l)
	s := stampOf(location.LocationPeer, fixture.MeshPlay)
	before := l.readStamps(s)
	l.setClock(5 * time.Second)
	p := fixture.PEER("a", g)
	p.Draining = true
	l.expectStored(l.putPeer(p, location.IntentRenew), numEqual(g), lsAt(5*time.Second), "PEER(a, g) Renew")
	row := lsOnePeer(l)
	require.True(l, row.Draining)
	require.Equal(l, g, row.Generation)
	l.expectTime(row.UpdatedAt, lsAt(5*time.Second), "listed updatedAt")
	l.expectStampNow(before, s, 1, 2)
}

// ls108 checks LS-108 "Renew rejections" (E. Peers).
func ls108(l *lsCase) {
	g := lsCreatePeer(l)
	l.claim("b")
	before := l.snap()
	absent := fixture.PEER("a", g)
	absent.NodeRID = lsRIDPtr("node-9")
	for _, c := range []struct {
		what string
		p    location.PeerLocation
	}{
		{"generation g+1", fixture.PEER("a", g+1)},
		{"owner b", fixture.PEER("b", g)},
		{"absent key node-9", absent},
	} {
		l.expectFailed(l.putPeer(c.p, location.IntentRenew), location.IgnoredStale, "Renew with %s", c.what)
	}
	l.noEffect(before, "rejected renews")
}

// ls109 checks LS-109 "Renew with the wildcard generation 0" (E. Peers; A-01
// fixed: the row keeps its generation).
func ls109(l *lsCase) {
	g := lsCreatePeer(l)
	l.expectStored(l.putPeer(fixture.PEER("a", 0), location.IntentRenew), numEqual(g), l.now(), "PEER(a, 0) Renew")
	require.Equal(l, g, lsOnePeer(l).Generation, "the listed row keeps generation g")
	l.expectStored(l.rmPeer(fixture.PeerKey(), fixture.Token("a", g)), numEqual(g), l.now(), "RemovePeer(PK, {a, g})")
	require.Empty(l, l.listPeers(location.PeerFilter{}))
}

// ls110 checks LS-110 "Identity with nodeRid ignores the endpoint" (E. Peers;
// with a nodeRid the endpoint is not identity).
func ls110(l *lsCase) {
	g := lsCreatePeer(l)
	l.claim("b")
	p := fixture.PEER("a", g)
	p.Endpoint = "tcp://127.0.0.1:5999"
	l.expectStored(l.putPeer(p, location.IntentRenew), numEqual(g), l.now(), "PEER(a, g) with a new endpoint")
	row := lsOnePeer(l)
	require.Equal(l, "tcp://127.0.0.1:5999", row.Endpoint)
	q := fixture.PEER("b", 0)
	q.Endpoint = "tcp://127.0.0.1:5999"
	l.expectFailed(l.putPeer(q, location.IntentNewClaim), location.RejectedConflict, "PEER(b) NewClaim on the same identity")
	k := fixture.PeerKey()
	k.Endpoint = lsStrPtr("tcp://other")
	l.expectStored(l.rmPeer(k, fixture.Token("a", g)), numEqual(g), l.now(), "RemovePeer with another endpoint")
	require.Empty(l, l.listPeers(location.PeerFilter{}))
}

// ls111 checks LS-111 "Identity without nodeRid uses the endpoint" (E. Peers).
func ls111(l *lsCase) {
	l.claim("a")
	const e1, e2 = "tcp://127.0.0.1:5001", "tcp://127.0.0.1:5002"
	gens := map[string]int64{}
	for _, e := range []string{e1, e2} {
		p := fixture.PEER("a", 0)
		p.NodeRID, p.Endpoint = nil, e
		res := l.putPeer(p, location.IntentNewClaim)
		l.expectStored(res, numPositive(1), l.now(), "PEER(a) at %s", e)
		gens[e] = res.Generation
	}
	require.Len(l, l.listPeers(location.PeerFilter{}), 2)
	k := location.PeerKey{AutoConnectType: location.AutoConnectRouteMesh, MeshName: fixture.MeshPlay, Role: location.PeerRoleRouter, Endpoint: lsStrPtr(e1)}
	l.expectStored(l.rmPeer(k, fixture.Token("a", gens[e1])), numEqual(gens[e1]), l.now(), "RemovePeer(e1)")
	rows := l.listPeers(location.PeerFilter{})
	require.Len(l, rows, 1)
	require.Equal(l, e2, rows[0].Endpoint)
}

// ls112 checks LS-112 "Key validation" (E. Peers).
func ls112(l *lsCase) {
	l.claim("a")
	before := l.snap()
	for _, c := range []struct {
		what string
		edit func(*location.PeerLocation)
	}{
		{"autoConnectType 0", func(p *location.PeerLocation) { p.AutoConnectType = 0 }},
		{"role 0", func(p *location.PeerLocation) { p.Role = 0 }},
		{"role 1", func(p *location.PeerLocation) { p.Role = 1 }},
		{"role 7", func(p *location.PeerLocation) { p.Role = 7 }},
	} {
		p := fixture.PEER("a", 0)
		c.edit(&p)
		_, err := l.S.UpdatePeer(l.Ctx, p, location.IntentNewClaim)
		l.expectInputError(err, location.ClassRange, "UpdatePeer with %s", c.what)
	}
	k := fixture.PeerKey()
	k.Role = 0
	_, err := l.S.RemovePeer(l.Ctx, k, fixture.Token("a", 1))
	l.expectInputError(err, location.ClassRange, "RemovePeer with role 0")
	l.noEffect(before, "rejected peer keys")
}

// ls113 checks LS-113 "Remove" (E. Peers): removal with the row generation
// answers Stored and bumps the mesh's Peer stamp.
func ls113(l *lsCase) {
	g := lsCreatePeer(l)
	s := stampOf(location.LocationPeer, fixture.MeshPlay)
	before := l.readStamps(s)
	l.expectStored(l.rmPeer(fixture.PeerKey(), fixture.Token("a", g)), numEqual(g), l.now(), "RemovePeer(PK, {a, g})")
	require.Empty(l, l.listPeers(location.PeerFilter{}))
	l.expectStampNow(before, s, 1, 2)
}

// ls114 checks LS-114 "Remove is fenced by the row generation" (E. Peers).
func ls114(l *lsCase) {
	g1 := lsCreatePeer(l)
	res := l.putPeer(fixture.PEER("a", 0), location.IntentTakeover)
	l.expectStored(res, numAbove(2, g1), l.now(), "PEER(a) Takeover")
	g2 := res.Generation
	l.expectFailed(l.rmPeer(fixture.PeerKey(), fixture.Token("a", g1)), location.IgnoredStale, "RemovePeer with g1")
	l.expectFailed(l.rmPeer(fixture.PeerKey(), fixture.Token("b", g2)), location.IgnoredStale, "RemovePeer as b")
	l.expectStored(l.rmPeer(fixture.PeerKey(), fixture.Token("a", g2)), numEqual(g2), l.now(), "RemovePeer with g2")
}

// ls115 checks LS-115 "Remove needs no live lease" (E. Peers).
func ls115(l *lsCase) {
	g := lsCreatePeer(l)
	l.expire("a")
	l.expectStored(l.rmPeer(fixture.PeerKey(), fixture.Token("a", g)), numEqual(g), l.now(), "RemovePeer by a dead owner")
}

// ls116 checks LS-116 "Re-create continues" (E. Peers).
func ls116(l *lsCase) {
	g := lsCreatePeer(l)
	l.expectStored(l.rmPeer(fixture.PeerKey(), fixture.Token("a", g)), numEqual(g), l.now(), "RemovePeer")
	l.expectStored(l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim), numAbove(2, g), l.now(), "PEER(a) re-created")
}

// ls117 checks LS-117 "Filters" (E. Peers): every PeerFilter field, alone and
// combined, selects the matching rows.
func ls117(l *lsCase) {
	const e3 = "tcp://127.0.0.1:5003"
	mk := func(t location.AutoConnectType, mesh string, role location.PeerRole, node string, endpoint string) location.PeerLocation {
		p := fixture.PEER("a", 0)
		p.AutoConnectType, p.MeshName, p.Role, p.Endpoint = t, mesh, role, endpoint
		p.NodeRID = nil
		if node != "" {
			p.NodeRID = lsRIDPtr(node)
		}
		return p
	}
	rows := map[string]location.PeerLocation{
		"P1": mk(location.AutoConnectRouteMesh, fixture.MeshPlay, location.PeerRoleRouter, "node-1", "tcp://127.0.0.1:5001"),
		"P2": mk(location.AutoConnectRouteMesh, fixture.MeshPlay, location.PeerRoleDealer, "node-2", "tcp://127.0.0.1:5002"),
		"P3": mk(location.AutoConnectFanout, fixture.MeshPlay, location.PeerRolePub, "", e3),
		"P4": mk(location.AutoConnectRouteMesh, "other", location.PeerRoleRouter, "node-1", "tcp://127.0.0.1:5004"),
	}
	stored := map[string]location.PeerLocation{}
	for _, name := range []string{"P1", "P2", "P3", "P4"} {
		res := l.putPeer(rows[name], location.IntentNewClaim)
		l.expectStored(res, numPositive(1), l.now(), "%s", name)
		row := rows[name]
		row.Generation, row.UpdatedAt = res.Generation, l.now()
		stored[name] = row
	}
	names := func(got []location.PeerLocation) []string {
		var out []string
		for _, p := range got {
			for name, want := range rows {
				if peerOrderKey(want) == peerOrderKey(p) {
					out = append(out, name)
				}
			}
		}
		return out
	}
	tF := location.AutoConnectFanout
	router := location.PeerRoleRouter
	for _, c := range []lsFilterCase[location.PeerFilter]{
		{"{}", location.PeerFilter{}, []string{"P1", "P2", "P3", "P4"}},
		{"{MeshName play}", location.PeerFilter{MeshName: lsStrPtr(fixture.MeshPlay)}, []string{"P1", "P2", "P3"}},
		{"{Role Router}", location.PeerFilter{Role: &router}, []string{"P1", "P4"}},
		{"{AutoConnectType Fanout}", location.PeerFilter{AutoConnectType: &tF}, []string{"P3"}},
		{"{NodeRID node-1}", location.PeerFilter{NodeRID: lsRIDPtr("node-1")}, []string{"P1", "P4"}},
		{"{Endpoint e3}", location.PeerFilter{Endpoint: lsStrPtr(e3)}, []string{"P3"}},
		{"{MeshName play, Role Router}", location.PeerFilter{MeshName: lsStrPtr(fixture.MeshPlay), Role: &router}, []string{"P1"}},
		{"{NodeRID node-9}", location.PeerFilter{NodeRID: lsRIDPtr("node-9")}, nil},
	} {
		got := l.listPeers(c.f)
		require.ElementsMatchf(l, c.want, names(got), "ListPeers(%s)", c.what)
		lsExpectRows(l, stored, c.want, got, "ListPeers(%s)", c.what)
	}
}

// ls118 checks LS-118 "Dead owners' peers are listed" (E. Peers).
func ls118(l *lsCase) {
	g := lsCreatePeer(l)
	l.expire("a")
	row := lsOnePeer(l)
	require.Equal(l, "a", row.OwnerID)
	require.Equal(l, g, row.Generation)
}

// Catalogue section F: spots (LS-120 … LS-135). Spot writes check no
// writer lease (A-11, reproduced); Renew needs no live lease.

// lsCreateSpot claims a (unless claimed) and stores SPOT(a); it returns the
// generation.
func lsCreateSpot(l *lsCase) int64 {
	l.Helper()
	a := l.claimOnce("a")
	return l.created(l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim), "SPOT(a) NewClaim")
}

// lsSpotOn is SPOT(x, lg) with another mesh and spot id.
func lsSpotOn(owner string, lg int64, mesh, id string) location.SpotLocation {
	s := fixture.SPOT(owner, lg)
	s.MeshName, s.SpotID = mesh, id
	return s
}

// ls120 checks LS-120 "Create" (F. Spots): a NewClaim stores the spot with
// the store time and bumps the Spot scope.
func ls120(l *lsCase) {
	lsCreateSpot(l)
	want := fixture.SPOT("a", l.gen("a"))
	want.UpdatedAt = T0()
	l.expectSameRow(&want, l.resolveSpot(fixture.SpotKey()), "ResolveSpot(play, spot-1)")
	l.expectStamp(stampOf(location.LocationSpot, fixture.MeshPlay), 1)
	l.expectStamp(stampOf(location.LocationSpot, ""), 1)
}

// ls121 checks LS-121 "SpotId validation" (F. Spots).
func ls121(l *lsCase) {
	a := l.claim("a")
	for _, id := range []string{"", strings.Repeat("s", 256)} {
		s := lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, id)
		k := location.SpotKey{MeshName: fixture.MeshPlay, SpotID: id}
		_, err := l.S.UpdateSpot(l.Ctx, s, location.IntentNewClaim)
		l.expectInputError(err, location.ClassType, "UpdateSpot with a %d-byte spot id", len(id))
		_, err = l.S.RemoveSpot(l.Ctx, k, a)
		l.expectInputError(err, location.ClassType, "RemoveSpot with a %d-byte spot id", len(id))
		_, err = l.S.ResolveSpot(l.Ctx, k)
		l.expectInputError(err, location.ClassType, "ResolveSpot with a %d-byte spot id", len(id))
	}
	id := strings.Repeat("s", 255)
	k := location.SpotKey{MeshName: fixture.MeshPlay, SpotID: id}
	l.expectStored(l.putSpot(lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, id), location.IntentNewClaim), numPositive(1), T0(), "255-byte spot id")
	require.NotNil(l, l.resolveSpot(k), "ResolveSpot of the 255-byte id")
	require.Equal(l, location.Stored, l.rmSpot(k, a), "RemoveSpot of the 255-byte id")
}

// ls122 checks LS-122 "Live other owner" (F. Spots).
func ls122(l *lsCase) {
	lsCreateSpot(l)
	b := l.claim("b")
	before := l.snap()
	l.expectFailed(l.putSpot(fixture.SPOT("b", b.LeaseGeneration), location.IntentNewClaim), location.RejectedConflict, "SPOT(b) NewClaim over live a")
	l.noEffect(before, "rejected NewClaim")
}

// ls123 checks LS-123 "Own live row" (F. Spots; A-13).
func ls123(l *lsCase) {
	lsCreateSpot(l)
	before := l.snap()
	l.expectFailed(l.putSpot(fixture.SPOT("a", l.gen("a")), location.IntentNewClaim), location.RejectedConflict, "SPOT(a) NewClaim over its own live row")
	l.noEffect(before, "rejected NewClaim")
}

// ls124 checks LS-124 "Dead owner, writer without lease" (F. Spots).
func ls124(l *lsCase) {
	g := lsCreateSpot(l)
	l.expire("a")
	l.expectStored(l.putSpot(fixture.SPOT("ghost", 5), location.IntentNewClaim), numAbove(2, g), l.now(), "SPOT(ghost, 5) NewClaim over dead a")
	require.Equal(l, "ghost", l.resolveSpot(fixture.SpotKey()).OwnerID)
}

// ls125 checks LS-125 "Restarted owner" (F. Spots; A-12: liveness by owner id
// protects the old incarnation's row from NewClaim).
func ls125(l *lsCase) {
	g := lsCreateSpot(l)
	l.expire("a")
	g2 := l.claim("a")
	l.expectFailed(l.putSpot(fixture.SPOT("a", g2.LeaseGeneration), location.IntentNewClaim), location.RejectedConflict, "SPOT(a, g2) NewClaim")
	l.expectStored(l.putSpot(fixture.SPOT("a", g2.LeaseGeneration), location.IntentTakeover), numAbove(2, g), l.now(), "SPOT(a, g2) Takeover")
}

// ls126 checks LS-126 "Renew replaces the row" (F. Spots).
func ls126(l *lsCase) {
	g := lsCreateSpot(l)
	s := stampOf(location.LocationSpot, fixture.MeshPlay)
	before := l.readStamps(s)
	l.setClock(5 * time.Second)
	sp := fixture.SPOT("a", l.gen("a"))
	sp.SpotGeneration, sp.OwnerNodeRID = 2, lsRID("node-2")
	l.expectStored(l.putSpot(sp, location.IntentRenew), numEqual(g), lsAt(5*time.Second), "SPOT(a) Renew")
	want := sp
	want.UpdatedAt = lsAt(5 * time.Second)
	l.expectSameRow(&want, l.resolveSpot(fixture.SpotKey()), "the renewed row")
	l.expectStampNow(before, s, 1, 2)
}

// ls127 checks LS-127 "Renew rejections" (F. Spots).
func ls127(l *lsCase) {
	lsCreateSpot(l)
	b := l.claim("b")
	a := l.tok("a")
	before := l.snap()
	for _, c := range []struct {
		what string
		s    location.SpotLocation
	}{
		{"leaseGeneration gen(a)+1", fixture.SPOT("a", a.LeaseGeneration+1)},
		{"owner b", fixture.SPOT("b", b.LeaseGeneration)},
		{"absent spot-9", lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, "spot-9")},
	} {
		l.expectFailed(l.putSpot(c.s, location.IntentRenew), location.IgnoredStale, "Renew with %s", c.what)
	}
	l.noEffect(before, "rejected renews")
}

// ls128 checks LS-128 "Renew by an expired owner" (F. Spots; A-30 reproduced:
// Renew needs no live lease).
func ls128(l *lsCase) {
	g := lsCreateSpot(l)
	l.expire("a")
	s := fixture.SPOT("a", l.gen("a"))
	s.SpotGeneration = 2
	l.expectStored(l.putSpot(s, location.IntentRenew), numEqual(g), l.now(), "SPOT(a) Renew by an expired owner")
	require.Equal(l, int64(2), l.resolveSpot(fixture.SpotKey()).SpotGeneration)
}

// ls129 checks LS-129 "Takeover while the owner is live" (F. Spots).
func ls129(l *lsCase) {
	g := lsCreateSpot(l)
	b := l.claim("b")
	l.expectStored(l.putSpot(fixture.SPOT("b", b.LeaseGeneration), location.IntentTakeover), numAbove(2, g), l.now(), "SPOT(b) Takeover")
	require.Equal(l, "b", l.resolveSpot(fixture.SpotKey()).OwnerID)
}

// ls130 checks LS-130 "Remove is fenced by the row's leaseGeneration" (F.
// Spots).
func ls130(l *lsCase) {
	g1 := lsCreateSpot(l)
	a := l.tok("a")
	res := l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentTakeover)
	l.expectStored(res, numAbove(2, g1), l.now(), "SPOT(a) Takeover")
	// The catalogue needs a row generation that differs from gen(a); a
	// store with opaque numbers may need another takeover to get one.
	for i := 0; res.Generation == a.LeaseGeneration && i < 3; i++ {
		res = l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentTakeover)
		require.Equal(l, location.Stored, res.Status)
	}
	require.NotEqual(l, a.LeaseGeneration, res.Generation, "row generation g2 must differ from gen(a)")
	s := stampOf(location.LocationSpot, fixture.MeshPlay)
	before := l.readStamps(s)
	require.Equal(l, location.IgnoredStale, l.rmSpot(fixture.SpotKey(), fixture.Token("a", res.Generation)), "remove with the row generation")
	require.Equal(l, location.IgnoredStale, l.rmSpot(fixture.SpotKey(), fixture.Token("b", a.LeaseGeneration)), "remove as b")
	require.Equal(l, location.IgnoredStale, l.rmSpot(location.SpotKey{MeshName: fixture.MeshPlay, SpotID: "spot-9"}, a), "remove of spot-9")
	l.expectStampDelta(before, l.readStamps(s), s, 0)
	require.Equal(l, location.Stored, l.rmSpot(fixture.SpotKey(), a), "remove with tok(a)")
	require.Nil(l, l.resolveSpot(fixture.SpotKey()))
	l.expectStampDelta(before, l.readStamps(s), s, 1)
}

// ls131 checks LS-131 "Re-create continues" (F. Spots).
func ls131(l *lsCase) {
	g := lsCreateSpot(l)
	require.Equal(l, location.Stored, l.rmSpot(fixture.SpotKey(), l.tok("a")))
	l.expectStored(l.putSpot(fixture.SPOT("a", l.gen("a")), location.IntentNewClaim), numAbove(2, g), l.now(), "SPOT(a) re-created")
}

// ls132 checks LS-132 "Resolve" (F. Spots): a dead owner's spot still
// resolves; an unknown id or another mesh resolves to nil.
func ls132(l *lsCase) {
	lsCreateSpot(l)
	l.expire("a")
	row := l.resolveSpot(fixture.SpotKey())
	require.NotNil(l, row, "a dead owner's spot resolves")
	require.Equal(l, "a", row.OwnerID)
	require.Nil(l, l.resolveSpot(location.SpotKey{MeshName: fixture.MeshPlay, SpotID: "spot-9"}))
	require.Nil(l, l.resolveSpot(location.SpotKey{MeshName: "other", SpotID: "spot-1"}))
}

// lsSpotRows stores the given spots for owner a (claimed here) with
// NewClaim.
func lsSpotRows(l *lsCase, rows ...location.SpotLocation) {
	l.Helper()
	l.claimOnce("a")
	for _, s := range rows {
		l.expectStored(l.putSpot(s, location.IntentNewClaim), numPositive(1), l.now(), "spot %s/%s", s.MeshName, s.SpotID)
	}
}

// ls133 checks LS-133 "Filters" (F. Spots): every SpotFilter field, alone and
// combined, selects the matching rows.
func ls133(l *lsCase) {
	a := l.claim("a")
	mk := func(mesh, id, typ, node string, kind location.SpotKind) location.SpotLocation {
		s := lsSpotOn("a", a.LeaseGeneration, mesh, id)
		s.SpotType, s.OwnerNodeRID, s.SpotKind = typ, lsRID(node), kind
		return s
	}
	rows := map[string]location.SpotLocation{
		"spot-1": mk(fixture.MeshPlay, "spot-1", "game", "node-1", location.SpotUser),
		"spot-2": mk(fixture.MeshPlay, "spot-2", "lobby", "node-2", location.SpotInstance),
		"spot-3": mk("other", "spot-3", "game", "node-1", location.SpotEntry),
	}
	lsSpotRows(l, rows["spot-1"], rows["spot-2"], rows["spot-3"])
	for id, row := range rows {
		row.UpdatedAt = T0()
		rows[id] = row
	}
	instance := location.SpotInstance
	for _, c := range []lsFilterCase[location.SpotFilter]{
		{"{}", location.SpotFilter{}, []string{"spot-1", "spot-2", "spot-3"}},
		{"{MeshName play}", location.SpotFilter{MeshName: lsStrPtr(fixture.MeshPlay)}, []string{"spot-1", "spot-2"}},
		{"{SpotType game}", location.SpotFilter{SpotType: lsStrPtr("game")}, []string{"spot-1", "spot-3"}},
		{"{NodeRID node-1}", location.SpotFilter{NodeRID: lsRIDPtr("node-1")}, []string{"spot-1", "spot-3"}},
		{"{SpotKind instance}", location.SpotFilter{SpotKind: &instance}, []string{"spot-2"}},
		{"{MeshName other, SpotType lobby}", location.SpotFilter{MeshName: lsStrPtr("other"), SpotType: lsStrPtr("lobby")}, nil},
	} {
		p := l.listSpots(c.f, location.PageRequest{})
		require.Emptyf(l, p.ContinuationToken, "ListSpots(%s)", c.what)
		lsExpectListed(l, rows, c.want, p.Items, func(r location.SpotLocation) string { return r.SpotID }, "ListSpots(%s)", c.what)
	}
}

// lsTwoSpots stores S1 (spot-1) and S2 (spot-2) in play.
func lsTwoSpots(l *lsCase) {
	l.Helper()
	a := l.claim("a")
	lsSpotRows(l, lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, "spot-1"), lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, "spot-2"))
}

// ls134 checks LS-134 "Paging" (F. Spots): a page of one, then the rest without
// a token.
func ls134(l *lsCase) {
	lsTwoSpots(l)
	play := location.SpotFilter{MeshName: lsStrPtr(fixture.MeshPlay)}
	p := l.listSpots(play, location.PageRequest{PageSize: 1})
	require.Equal(l, []string{"spot-1"}, lsSpotIDs(p.Items), "first page")
	l.expectToken(p.ContinuationToken, "1", "first page")
	p = l.listSpots(play, location.PageRequest{PageSize: 1, ContinuationToken: p.ContinuationToken})
	require.Equal(l, []string{"spot-2"}, lsSpotIDs(p.Items), "second page")
	l.expectToken(p.ContinuationToken, "", "second page")
}

// ls135 checks LS-135 "Token and size edge cases" (F. Spots).
func ls135(l *lsCase) {
	lsTwoSpots(l)
	play := location.SpotFilter{MeshName: lsStrPtr(fixture.MeshPlay)}
	both := []string{"spot-1", "spot-2"}
	p := l.listSpots(play, location.PageRequest{PageSize: 1, ContinuationToken: "abc"})
	require.Equal(l, []string{"spot-1"}, lsSpotIDs(p.Items), `token "abc" restarts`)
	l.expectToken(p.ContinuationToken, "1", `token "abc" restarts`)
	for _, size := range []int{0, -1} {
		p = l.listSpots(play, location.PageRequest{PageSize: size})
		require.Equalf(l, both, lsSpotIDs(p.Items), "PageSize %d", size)
		l.expectToken(p.ContinuationToken, "", "PageSize %d", size)
	}
	p = l.listSpots(play, location.PageRequest{})
	require.Equal(l, both, lsSpotIDs(p.Items), "no page request")
	l.expectToken(p.ContinuationToken, "", "no page request")

	p = l.listSpots(play, location.PageRequest{PageSize: 1, ContinuationToken: "99"})
	if l.Caps.decimalTokens() {
		require.Empty(l, p.Items, `token "99" is an offset past the end`)
		require.Empty(l, p.ContinuationToken, `token "99"`)
		return
	}
	// Without DecimalTokens the suite cannot tell whether "99" is one of the
	// store's own tokens: a store may restart (a foreign token) or read it
	// as an offset past the end, nothing else.
	if len(p.Items) == 0 {
		require.Empty(l, p.ContinuationToken, `token "99" read as an offset past the end: no token`)
		return
	}
	require.Equal(l, []string{"spot-1"}, lsSpotIDs(p.Items), `token "99" is not a token of this store: restart`)
}

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
