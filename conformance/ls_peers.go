package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

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
	l.expectStampDelta(before, l.readStamps(s), s, 1)
	l.expectStamp(s, 2)
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
	l.expectStampDelta(before, l.readStamps(s), s, 1)
	l.expectStamp(s, 2)
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
