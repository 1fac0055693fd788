package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section B, third part: mesh-node remove and list (LS-070 …
// LS-076).

// ls070 checks LS-070 "Remove rejections" (B. Mesh-node descriptors).
func ls070(l *lsCase) {
	lsCreateMN(l, nil)
	b := l.claim("b")
	a := l.tok("a")
	before := l.snap()
	require.Equal(l, location.IgnoredStale, l.rmMN(location.MeshNodeKey{MeshName: fixture.MeshGame, RID: lsRID("node-z")}, a), "remove (game, node-z)")
	require.Equal(l, location.IgnoredStale, l.rmMN(fixture.MNKey(), b), "remove K_A with tok(b)")
	require.Equal(l, location.IgnoredStale, l.rmMN(fixture.MNKey(), fixture.Token("a", a.LeaseGeneration+1)), "remove K_A with gen(a)+1")
	l.noEffect(before, "rejected removes")
}

// ls071 checks LS-071 "Remove" (B. Mesh-node descriptors): the owner removes
// its descriptor and the Peer stamps move.
func ls071(l *lsCase) {
	lsCreateMN(l, nil)
	scopes := []stampScope{stampOf(location.LocationPeer, fixture.MeshGame), stampOf(location.LocationPeer, "")}
	before := l.readStamps(scopes...)
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), l.tok("a")))
	require.Empty(l, l.listMN(fixture.MeshGame))
	after := l.readStamps(scopes...)
	for _, s := range scopes {
		l.expectStampDelta(before, after, s, 1)
		l.expectStamp(s, 2)
	}
}

// ls072 checks LS-072 "Remove needs no live lease" (B. Mesh-node descriptors).
func ls072(l *lsCase) {
	lsCreateMN(l, nil)
	l.expire("a")
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), l.tok("a")), "remove with a dead owner's exact token")
	require.Empty(l, l.listMN(fixture.MeshGame))
}

// ls073 checks LS-073 "Re-create after remove" (B. Mesh-node descriptors; A-04:
// a re-created mesh node restarts at 1 in memory).
func ls073(l *lsCase) {
	g := lsCreateMN(l, nil)
	l.expectStored(l.putMN(fixture.MN(l.tok("a")), location.IntentTakeover), numAbove(2, g), l.now(), "MN(a) Takeover")
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), l.tok("a")))
	l.expectStored(l.putMN(fixture.MN(l.tok("a")), location.IntentNewClaim), numPositive(1), l.now(), "MN(a) re-created")
}

// ls074 checks LS-074 "List is per mesh and not liveness-filtered" (B.
// Mesh-node descriptors).
func ls074(l *lsCase) {
	lsCreateMN(l, nil)
	d := fixture.MN(l.tok("a"))
	d.MeshName, d.RID = "test", lsRID("node-z")
	l.expectStored(l.putMN(d, location.IntentNewClaim), numPositive(1), l.now(), "MN(a, test, node-z)")
	l.expire("a")
	rows := l.listMN(fixture.MeshGame)
	require.Equal(l, []string{"node-a"}, lsMNRIDs(rows), "ListMeshNodes(game) lists only game's row, dead owner included")
	l.expectSameRow(lsListed(fixture.MN(l.tok("a")), T0()), rows[0], "the listed row")
}

// ls075 checks LS-075 "Capacity projection" (B. Mesh-node descriptors).
func ls075(l *lsCase) {
	var stored location.MeshNodeDescriptor
	lsCreateMN(l, func(d *location.MeshNodeDescriptor) {
		d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 5, Reserved: 3, Limit: 100}
		d.PopulationCapacity.Spots = location.PopulationCapacity{Active: 2, Reserved: 1, Limit: 100}
		d.PopulationCapacity.SpotTypes = []location.SpotTypeCapacity{{
			ObjectKind: location.ObjectInstanceSpot, StableType: "room",
			PopulationCapacity: location.PopulationCapacity{Active: 4, Limit: 100},
		}}
		stored = *d
	})
	row := l.oneMN(fixture.MeshGame)
	require.Equal(l, location.PopulationCapacity{Limit: 100}, row.PopulationCapacity.Actors, "actors projected")
	require.Equal(l, location.PopulationCapacity{Limit: 100}, row.PopulationCapacity.Spots, "spots projected")
	require.Equal(l, []location.SpotTypeCapacity{{
		ObjectKind: location.ObjectInstanceSpot, StableType: "room", PopulationCapacity: location.PopulationCapacity{Limit: 100},
	}}, row.PopulationCapacity.SpotTypes, "spot types projected")
	l.expectSameRow(lsListed(stored, T0()), row, "every other field as stored")
}

// ls076 checks LS-076 "Paging" (B. Mesh-node descriptors): pages of two in
// rid order, then the rest, and the whole list without a page request.
func ls076(l *lsCase) {
	l.claim("a")
	for _, r := range []string{"node-a", "node-b", "node-c"} {
		d := fixture.MN(l.tok("a"))
		d.RID = lsRID(r)
		l.expectStored(l.putMN(d, location.IntentNewClaim), numPositive(1), l.now(), "MN(a, %s)", r)
	}
	p, err := l.S.ListMeshNodes(l.Ctx, fixture.MeshGame, location.PageRequest{PageSize: 2})
	require.NoError(l, err)
	require.Equal(l, []string{"node-a", "node-b"}, lsMNRIDs(p.Items), "first page")
	l.expectToken(p.ContinuationToken, "2", "first page")
	p, err = l.S.ListMeshNodes(l.Ctx, fixture.MeshGame, location.PageRequest{PageSize: 2, ContinuationToken: p.ContinuationToken})
	require.NoError(l, err)
	require.Equal(l, []string{"node-c"}, lsMNRIDs(p.Items), "second page")
	l.expectToken(p.ContinuationToken, "", "second page")
	require.Equal(l, []string{"node-a", "node-b", "node-c"}, lsMNRIDs(l.listMN(fixture.MeshGame)), "no page request")
}
