package conformance

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue sections B, C and D: the descriptor tables (mesh nodes with
// their entry-spot claims, client servers, fanout publishers).

// Catalogue section B, first part: mesh-node descriptor writes, validation
// and the outcome matrix (LS-030 … LS-055).

// lsListed is d as ListMeshNodes returns it when no authority allocation
// exists: updatedAt at, every active and reserved count 0.
func lsListed(d location.MeshNodeDescriptor, at time.Time) location.MeshNodeDescriptor {
	d.UpdatedAt = at
	pc := d.PopulationCapacity
	pc.Actors.Active, pc.Actors.Reserved = 0, 0
	pc.Spots.Active, pc.Spots.Reserved = 0, 0
	types := make([]location.SpotTypeCapacity, len(pc.SpotTypes))
	for i, t := range pc.SpotTypes {
		t.Active, t.Reserved = 0, 0
		types[i] = t
	}
	pc.SpotTypes = types
	d.PopulationCapacity = pc
	return d
}

// lsCaps returns n distinct valid instance-spot capabilities.
func lsCaps(n int) []location.ObjectCapability {
	out := make([]location.ObjectCapability, n)
	for i := range out {
		out[i] = location.ObjectCapability{
			ObjectKind: location.ObjectInstanceSpot, StableType: fmt.Sprintf("type-%04d", i),
			Policy: location.PolicyRecreate, Limit: 0,
		}
	}
	return out
}

// lsCreateMN claims a (unless claimed) and stores MN(a) with NewClaim at the
// current time; it returns the stored generation.
func lsCreateMN(l *lsCase, edit func(*location.MeshNodeDescriptor)) int64 {
	l.Helper()
	d := fixture.MN(l.claimOnce("a"))
	if edit != nil {
		edit(&d)
	}
	return l.created(l.putMN(d, location.IntentNewClaim), "MN(a) NewClaim")
}

// ls030 checks LS-030 "Create" (B. Mesh-node descriptors): a NewClaim stores
// the descriptor, stamps it with the store time and bumps the Peer scope.
func ls030(l *lsCase) {
	a := l.claim("a")
	res := l.putMN(fixture.MN(a), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), T0(), "MN(a) NewClaim")
	l.expectSameRow([]location.MeshNodeDescriptor{lsListed(fixture.MN(a), T0())}, l.listMN(fixture.MeshGame), "ListMeshNodes(game)")
	l.expectStamp(stampOf(location.LocationPeer, fixture.MeshGame), 1)
	l.expectStamp(stampOf(location.LocationPeer, ""), 1)
	l.expectStamp(stampOf(location.LocationSpot, ""), 0)
	l.expectStamp(stampOf(location.LocationClientServer, ""), 0)
}

// ls031 checks LS-031 "Create with Takeover intent" (B. Mesh-node descriptors).
func ls031(l *lsCase) {
	a := l.claim("a")
	l.expectStored(l.putMN(fixture.MN(a), location.IntentTakeover), numPositive(1), T0(), "MN(a) Takeover on an absent key")
}

// ls032 checks LS-032 "Renew of an absent descriptor" (B. Mesh-node
// descriptors).
func ls032(l *lsCase) {
	a := l.claim("a")
	before := l.snap()
	l.expectFailed(l.putMN(fixture.MN(a), location.IntentRenew), location.IgnoredStale, "MN(a) Renew of an absent descriptor")
	require.Empty(l, l.listMN(fixture.MeshGame))
	l.noEffect(before, "Renew of an absent descriptor")
}

// ls033 checks LS-033 "Writer without a lease" (B. Mesh-node descriptors).
func ls033(l *lsCase) {
	before := l.snap()
	for _, in := range []location.WriteIntent{location.IntentNewClaim, location.IntentRenew, location.IntentTakeover} {
		l.expectFailed(l.putMN(fixture.MN(fixture.Token("ghost", 1)), in), location.RejectedConflict, "MN(ghost) %s", in)
	}
	l.noEffect(before, "writes without a lease")
}

// ls034 checks LS-034 "Writer lease generation mismatch" (B. Mesh-node
// descriptors).
func ls034(l *lsCase) {
	a := l.claim("a")
	before := l.snap()
	l.expectFailed(l.putMN(fixture.MN(fixture.Token("a", a.LeaseGeneration+1)), location.IntentNewClaim), location.RejectedConflict, "MN(a, gen(a)+1)")
	l.noEffect(before, "write with a mismatching lease generation")
}

// ls035 checks LS-035 "Writer lease expired" (B. Mesh-node descriptors).
func ls035(l *lsCase) {
	lsCreateMN(l, nil)
	l.expire("a")
	d := fixture.MN(l.tok("a"))
	d.DescriptorRevision = 4
	l.expectFailed(l.putMN(d, location.IntentRenew), location.RejectedConflict, "MN(a, revision 4) Renew after expiry")
	require.Equal(l, int64(3), l.oneMN(fixture.MeshGame).DescriptorRevision, "the listed row keeps revision 3")
}

// ls036 checks LS-036 "Validation precedes the lease check" (B. Mesh-node
// descriptors).
func ls036(l *lsCase) {
	d := fixture.MN(fixture.Token("ghost", 1))
	d.MeshName = ""
	_, err := l.S.UpdateMeshNode(l.Ctx, d, location.IntentNewClaim)
	l.expectInputError(err, location.ClassType, `MN(meshName "", owner ghost)`)
}

// ls037 checks LS-037 "Validation table" (B. Mesh-node descriptors).
func ls037(l *lsCase) {
	a := l.claim("a")
	nul := l.claim("a\x00b")
	type mutation struct {
		n     int
		edit  func(*location.MeshNodeDescriptor)
		class location.ErrorClass
	}
	cap0 := func(d *location.MeshNodeDescriptor) *location.ObjectCapability { return &d.ObjectCapabilities[0] }
	table := []mutation{
		{1, func(d *location.MeshNodeDescriptor) { d.MeshName = "" }, location.ClassType},
		{2, func(d *location.MeshNodeDescriptor) { d.MeshName = strings.Repeat("m", 256) }, location.ClassType},
		{3, func(d *location.MeshNodeDescriptor) { d.OwnerID, d.LeaseGeneration = nul.OwnerID, nul.LeaseGeneration }, location.ClassType},
		{4, func(d *location.MeshNodeDescriptor) {
			d.ObjectRole, d.ObjectCapabilities, d.EntrySpotID = location.RoleClient, nil, lsStrPtr("e")
		}, location.ClassType},
		{5, func(d *location.MeshNodeDescriptor) {
			d.ObjectRole, d.ObjectCapabilities, d.EntrySpotID = location.RoleClient, nil, lsStrPtr("")
		}, location.ClassType},
		{6, func(d *location.MeshNodeDescriptor) { d.EntrySpotID = lsStrPtr("") }, location.ClassType},
		{7, func(d *location.MeshNodeDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
		{8, func(d *location.MeshNodeDescriptor) { d.DescriptorRevision = 0 }, location.ClassRange},
		{9, func(d *location.MeshNodeDescriptor) { d.LeaseGeneration = 0 }, location.ClassRange},
		{10, func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = -1 }, location.ClassRange},
		{11, func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 60, Reserved: 50, Limit: 100}
		}, location.ClassRange},
		{12, func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Spots.Limit = -1 }, location.ClassRange},
		{13, func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.SpotTypes[0].PopulationCapacity = location.PopulationCapacity{Active: 101, Limit: 100}
		}, location.ClassRange},
		{14, func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Limit = 0 }, location.ClassRange},
		{15, func(d *location.MeshNodeDescriptor) {
			d.ActivationConcurrency = location.ActivationConcurrency{Active: 5, Limit: 4}
		}, location.ClassRange},
		{16, func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 10001 }, location.ClassRange},
		{17, func(d *location.MeshNodeDescriptor) { d.PlacementWeight = -1 }, location.ClassRange},
		{18, func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities = lsCaps(1025) }, location.ClassRange},
		{19, func(d *location.MeshNodeDescriptor) { d.ObjectRole = location.RoleClient }, location.ClassRange},
		{20, func(d *location.MeshNodeDescriptor) { cap0(d).StableType = "" }, location.ClassType},
		{21, func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = append(d.ObjectCapabilities, d.ObjectCapabilities[0])
		}, location.ClassType},
		{22, func(d *location.MeshNodeDescriptor) {
			cap0(d).Policy, cap0(d).HasSnapshotAdapter = location.PolicySnapshot, false
		}, location.ClassType},
		{23, func(d *location.MeshNodeDescriptor) {
			cap0(d).Policy, cap0(d).HasSnapshotAdapter = location.PolicyRecreate, true
		}, location.ClassType},
		{24, func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = append(d.ObjectCapabilities, location.ObjectCapability{
				ObjectKind: location.ObjectActor, StableType: "player", Policy: location.PolicyRecreate, Limit: 5,
			})
		}, location.ClassRange},
		{25, func(d *location.MeshNodeDescriptor) { cap0(d).Limit = -1 }, location.ClassRange},
	}
	for _, m := range table {
		d := fixture.MN(a)
		m.edit(&d)
		l.useMesh(d.MeshName)
		before := l.snap()
		_, err := l.S.UpdateMeshNode(l.Ctx, d, location.IntentNewClaim)
		l.expectInputError(err, m.class, "LS-037 row %d", m.n)
		l.noEffect(before, "LS-037 row %d", m.n)
	}
}

// ls038 checks LS-038 "Validation boundaries accepted" (B. Mesh-node
// descriptors).
func ls038(l *lsCase) {
	l.claim("a")
	variants := []struct {
		what string
		edit func(*location.MeshNodeDescriptor)
	}{
		{"actors {60, 50, 0}", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 60, Reserved: 50, Limit: 0}
		}},
		{"spotTypes[0] {7, 0, 0}", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.SpotTypes[0].PopulationCapacity = location.PopulationCapacity{Active: 7, Limit: 0}
		}},
		{"placementWeight 0", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 0 }},
		{"placementWeight 10000", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 10000 }},
		{"client without capabilities and entry spot", func(d *location.MeshNodeDescriptor) {
			d.ObjectRole, d.ObjectCapabilities, d.EntrySpotID = location.RoleClient, nil, nil
		}},
		{"1024 capabilities", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities = lsCaps(1024) }},
		{"applicationVersion 0", func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = 0 }},
		{"capability {actor, player, disabled, false, 0}", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = append(d.ObjectCapabilities, location.ObjectCapability{
				ObjectKind: location.ObjectActor, StableType: "player", Policy: location.PolicyDisabled, Limit: 0,
			})
		}},
		{"capability snapshot with an adapter", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities[0].Policy, d.ObjectCapabilities[0].HasSnapshotAdapter = location.PolicySnapshot, true
		}},
		{"meshName of 255 bytes", func(d *location.MeshNodeDescriptor) { d.MeshName = strings.Repeat("m", 255) }},
	}
	for i, v := range variants {
		d := fixture.MN(l.tok("a"))
		d.RID = lsRID(fmt.Sprintf("node-v%02d", i))
		v.edit(&d)
		l.expectStored(l.putMN(d, location.IntentNewClaim), numPositive(1), T0(), "boundary %q", v.what)
	}
}

// ls039 checks LS-039 "Exact replay keeps generation and updatedAt" (B.
// Mesh-node descriptors).
func ls039(l *lsCase) {
	g := lsCreateMN(l, nil)
	peerGame := stampOf(location.LocationPeer, fixture.MeshGame)
	before := l.readStamps(peerGame)
	l.setClock(5 * time.Second)
	for _, in := range []location.WriteIntent{location.IntentRenew, location.IntentNewClaim} {
		l.expectStored(l.putMN(fixture.MN(l.tok("a")), in), numEqual(g), T0(), "exact replay with %s", in)
	}
	l.expectStampNow(before, peerGame, 0, 1)
	l.expectTime(l.oneMN(fixture.MeshGame).UpdatedAt, T0(), "the listed row keeps updatedAt")
}

// ls040 checks LS-040 "Normalised replay" (B. Mesh-node descriptors).
func ls040(l *lsCase) {
	second := location.ObjectCapability{
		ObjectKind: location.ObjectUserSpot, StableType: "lobby", Policy: location.PolicyRecreate, Limit: 10,
	}
	g := lsCreateMN(l, func(d *location.MeshNodeDescriptor) {
		d.SpotTypes = []string{"room", "lobby"}
		d.ObjectCapabilities = append(d.ObjectCapabilities, second)
	})
	stored := l.oneMN(fixture.MeshGame)
	stamps := lsAllStampScopes(fixture.MeshGame)
	before := l.readStamps(stamps...)
	d := fixture.MN(l.tok("a"))
	d.SpotTypes = []string{"lobby", "room"}
	d.ObjectCapabilities = []location.ObjectCapability{second, d.ObjectCapabilities[0]}
	l.expectStored(l.putMN(d, location.IntentRenew), numEqual(g), T0(), "reordered replay")
	after := l.readStamps(stamps...)
	for _, s := range stamps {
		l.expectStampDelta(before, after, s, 0)
	}
	l.expectSameRow(stored, l.oneMN(fixture.MeshGame), "the listed row keeps the stored order")
	require.Equal(l, []string{"room", "lobby"}, l.oneMN(fixture.MeshGame).SpotTypes)
}

// ls041 checks LS-041 "Same revision, mutable change" (B. Mesh-node
// descriptors).
func ls041(l *lsCase) {
	lsCreateMN(l, nil)
	before := l.snap()
	d := fixture.MN(l.tok("a"))
	d.State = location.StateDraining
	l.expectFailed(l.putMN(d, location.IntentRenew), location.IgnoredStale, "same revision, state Draining")
	l.noEffect(before, "same revision, mutable change")
}

// ls042 checks LS-042 "Revision update" (B. Mesh-node descriptors).
func ls042(l *lsCase) {
	g := lsCreateMN(l, nil)
	peerGame := stampOf(location.LocationPeer, fixture.MeshGame)
	before := l.readStamps(peerGame)
	l.setClock(5 * time.Second)
	d := fixture.MN(l.tok("a"))
	d.DescriptorRevision = 4
	d.State = location.StateDraining
	d.PlacementWeight = 50
	d.ChannelWeights = map[string]int64{"orders": 10, "world": 50}
	d.MaintenanceWave = lsStrPtr("wave-1")
	d.ActivationConcurrency = location.ActivationConcurrency{Active: 3, Limit: 100}
	l.expectStored(l.putMN(d, location.IntentRenew), numEqual(g), lsAt(5*time.Second), "revision update")
	l.expectSameRow(lsListed(d, lsAt(5*time.Second)), l.oneMN(fixture.MeshGame), "the listed row")
	l.expectStampNow(before, peerGame, 1, 2)
}

// ls043 checks LS-043 "Revision update through NewClaim by the same owner and
// lease" (B. Mesh-node descriptors).
func ls043(l *lsCase) {
	g := lsCreateMN(l, nil)
	d := fixture.MN(l.tok("a"))
	d.DescriptorRevision = 4
	d.State = location.StateDraining
	l.expectStored(l.putMN(d, location.IntentNewClaim), numEqual(g), l.now(), "revision update through NewClaim")
	require.Equal(l, location.StateDraining, l.oneMN(fixture.MeshGame).State)
}

// lsDescriptorVariants runs each edit of MN(a) (with descriptorRevision 4)
// as a Renew against its own freshly stored key (rid node-v<i>) and hands
// the result and the listed rows before and after to check.
func lsDescriptorVariants(l *lsCase, edits []func(*location.MeshNodeDescriptor), check func(i int, g int64, res location.WriteResult, before, after location.MeshNodeDescriptor)) {
	l.Helper()
	l.claim("a")
	for i, edit := range edits {
		key := lsRID(fmt.Sprintf("node-v%02d", i))
		base := fixture.MN(l.tok("a"))
		base.RID = key
		res := l.putMN(base, location.IntentNewClaim)
		l.expectStored(res, numPositive(1), l.now(), "variant %d: create", i)
		before := lsFindMN(l, key)
		d := fixture.MN(l.tok("a"))
		d.RID = key
		d.DescriptorRevision = 4
		edit(&d)
		upd := l.putMN(d, location.IntentRenew)
		check(i, res.Generation, upd, before, lsFindMN(l, key))
	}
}

// lsFindMN returns the listed descriptor of game with the rid.
func lsFindMN(l *lsCase, r location.RoutingID) location.MeshNodeDescriptor {
	l.Helper()
	for _, d := range l.listMN(fixture.MeshGame) {
		if d.RID == r {
			return d
		}
	}
	l.Fatalf("ListMeshNodes(game) has no row %s", r)
	return location.MeshNodeDescriptor{}
}

// ls044 checks LS-044 "Mutable fields" (B. Mesh-node descriptors).
func ls044(l *lsCase) {
	edits := []func(*location.MeshNodeDescriptor){
		func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 1 },
		func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 5, Reserved: 5, Limit: 100}
		},
		func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Spots = location.PopulationCapacity{Active: 1, Reserved: 2, Limit: 100}
		},
		func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.SpotTypes[0].Limit = 50 },
		func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.SpotTypes = append(d.PopulationCapacity.SpotTypes, location.SpotTypeCapacity{
				ObjectKind: location.ObjectUserSpot, StableType: "lobby", PopulationCapacity: location.PopulationCapacity{Limit: 10},
			})
		},
		func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Active = 9 },
		func(d *location.MeshNodeDescriptor) { d.ChannelWeights["orders"] = 1 },
		func(d *location.MeshNodeDescriptor) { d.MaintenanceWave = lsStrPtr("wave-1") },
		func(d *location.MeshNodeDescriptor) { d.State = location.StateStopped },
	}
	lsDescriptorVariants(l, edits, func(i int, g int64, res location.WriteResult, _, after location.MeshNodeDescriptor) {
		l.expectStored(res, numEqual(g), l.now(), "mutable variant %d", i)
		require.Equalf(l, int64(4), after.DescriptorRevision, "mutable variant %d: listed revision", i)
	})
}

// ls045 checks LS-045 "Immutable fields" (B. Mesh-node descriptors).
func ls045(l *lsCase) {
	edits := []func(*location.MeshNodeDescriptor){
		func(d *location.MeshNodeDescriptor) { d.Endpoint = "tcp://10.0.0.9:7300" },
		func(d *location.MeshNodeDescriptor) { d.EntrySpotID = lsStrPtr("entry-9") },
		func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Actors.Limit = 99 },
		func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Spots.Limit = 99 },
		func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Limit = 99 },
		func(d *location.MeshNodeDescriptor) { d.ChannelWeights["extra"] = 1 },
		func(d *location.MeshNodeDescriptor) { delete(d.ChannelWeights, "world") },
		func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = 2 },
		func(d *location.MeshNodeDescriptor) { d.SpotTypes = []string{"room", "lobby"} },
		func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Policy = location.PolicyDisabled },
		func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Limit = 99 },
		func(d *location.MeshNodeDescriptor) { d.SecurityIdentity = "cluster-b" },
		func(d *location.MeshNodeDescriptor) { d.ObjectRole, d.ObjectCapabilities = location.RoleClient, nil },
	}
	lsDescriptorVariants(l, edits, func(i int, _ int64, res location.WriteResult, before, after location.MeshNodeDescriptor) {
		l.expectFailed(res, location.IgnoredStale, "immutable variant %d", i)
		l.expectSameRow(before, after, "immutable variant %d: row unchanged", i)
	})
}

// lsRenewVariant stores MN(a), then writes the edited MN(a) with Renew and
// requires IgnoredStale and an unchanged row.
func lsRenewVariant(l *lsCase, what string, edit func(*location.MeshNodeDescriptor)) {
	l.Helper()
	lsCreateMN(l, nil)
	before := l.snap()
	d := fixture.MN(l.tok("a"))
	edit(&d)
	l.expectFailed(l.putMN(d, location.IntentRenew), location.IgnoredStale, "%s", what)
	l.noEffect(before, "%s", what)
}

// ls046 checks LS-046 "Lifecycle change" (B. Mesh-node descriptors).
func ls046(l *lsCase) {
	lsRenewVariant(l, "lifecycle 8, revision 4", func(d *location.MeshNodeDescriptor) {
		d.LifecycleGeneration, d.DescriptorRevision = 8, 4
	})
}

// ls047 checks LS-047 "Lower revision" (B. Mesh-node descriptors).
func ls047(l *lsCase) {
	lsRenewVariant(l, "revision 2", func(d *location.MeshNodeDescriptor) { d.DescriptorRevision = 2 })
}

// ls048 checks LS-048 "Other live owner's NewClaim" (B. Mesh-node descriptors;
// IgnoredStale, not RejectedConflict).
func ls048(l *lsCase) {
	lsCreateMN(l, nil)
	b := l.claim("b")
	before := l.snap()
	l.expectFailed(l.putMN(fixture.MN(b), location.IntentNewClaim), location.IgnoredStale, "MN(b) NewClaim over a live owner's row")
	require.Equal(l, "a", l.oneMN(fixture.MeshGame).OwnerID)
	l.noEffect(before, "NewClaim over a live owner's row")
}

// ls049 checks LS-049 "Other owner after expiry" (B. Mesh-node descriptors).
func ls049(l *lsCase) {
	g := lsCreateMN(l, nil)
	b := l.claim("b")
	l.expire("a")
	peerGame := stampOf(location.LocationPeer, fixture.MeshGame)
	before := l.readStamps(peerGame)
	l.expectStored(l.putMN(fixture.MN(b), location.IntentNewClaim), numAbove(2, g), l.now(), "MN(b) NewClaim after expire(a)")
	require.Equal(l, "b", l.oneMN(fixture.MeshGame).OwnerID)
	l.expectStampDelta(before, l.readStamps(peerGame), peerGame, 1)
}

// ls050 checks LS-050 "Other owner after release" (B. Mesh-node descriptors).
func ls050(l *lsCase) {
	g := lsCreateMN(l, nil)
	b := l.claim("b")
	l.release("a")
	l.expectStored(l.putMN(fixture.MN(b), location.IntentNewClaim), numAbove(2, g), l.now(), "MN(b) NewClaim after release(a)")
	require.Equal(l, "b", l.oneMN(fixture.MeshGame).OwnerID)
}

// lsRestartedOwner is the setup of LS-051 and LS-052: claim(a) (g1), MN(a),
// expire(a), claim(a) (g2). It returns g1 and the descriptor's generation.
func lsRestartedOwner(l *lsCase, mk func(location.OwnerToken) location.MeshNodeDescriptor) (g1 location.OwnerToken, rowGen int64) {
	l.Helper()
	g1 = l.claim("a")
	res := l.putMN(mk(g1), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), l.now(), "create with g1")
	l.expire("a")
	l.claim("a")
	return g1, res.Generation
}

// ls051 checks LS-051 "Restarted owner" (B. Mesh-node descriptors).
func ls051(l *lsCase) {
	_, g := lsRestartedOwner(l, fixture.MN)
	g2 := l.tok("a")
	l.expectFailed(l.putMN(fixture.MN(g2), location.IntentRenew), location.IgnoredStale, "MN(a, g2) Renew")
	l.expectStored(l.putMN(fixture.MN(g2), location.IntentNewClaim), numAbove(2, g), l.now(), "MN(a, g2) NewClaim")
	require.Equal(l, g2.LeaseGeneration, l.oneMN(fixture.MeshGame).LeaseGeneration)
}

// ls052 checks LS-052 "Old incarnation after restart" (B. Mesh-node
// descriptors).
func ls052(l *lsCase) {
	g1, _ := lsRestartedOwner(l, fixture.MN)
	l.expectFailed(l.putMN(fixture.MN(g1), location.IntentNewClaim), location.RejectedConflict, "MN(a, g1) NewClaim after the restart")
}

// ls053 checks LS-053 "Takeover by a live other owner" (B. Mesh-node
// descriptors).
func ls053(l *lsCase) {
	g := lsCreateMN(l, nil)
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MN(b), location.IntentTakeover), numAbove(2, g), l.now(), "MN(b) Takeover")
	require.Equal(l, "b", l.oneMN(fixture.MeshGame).OwnerID)
	d := fixture.MN(l.tok("a"))
	d.DescriptorRevision = 4
	l.expectFailed(l.putMN(d, location.IntentRenew), location.IgnoredStale, "MN(a, revision 4) Renew after b's takeover")
}

// ls054 checks LS-054 "Same-owner Takeover bumps" (B. Mesh-node descriptors).
func ls054(l *lsCase) {
	g := lsCreateMN(l, nil)
	peerGame := stampOf(location.LocationPeer, fixture.MeshGame)
	before := l.readStamps(peerGame)
	l.setClock(time.Second)
	l.expectStored(l.putMN(fixture.MN(l.tok("a")), location.IntentTakeover), numAbove(2, g), lsAt(time.Second), "same-owner Takeover")
	l.expectStampNow(before, peerGame, 1, 2)
}

// ls055 checks LS-055 "Takeover may change lifecycle and immutable fields" (B.
// Mesh-node descriptors).
func ls055(l *lsCase) {
	g := lsCreateMN(l, nil)
	d := fixture.MN(l.tok("a"))
	d.LifecycleGeneration = 8
	d.Endpoint = "tcp://10.0.0.2:7300"
	l.expectStored(l.putMN(d, location.IntentTakeover), numAbove(2, g), l.now(), "Takeover changing lifecycle and endpoint")
	row := l.oneMN(fixture.MeshGame)
	require.Equal(l, int64(8), row.LifecycleGeneration)
	require.Equal(l, "tcp://10.0.0.2:7300", row.Endpoint)
	l.expectSameRow(lsListed(d, l.now()), row, "the listed row is the takeover's descriptor")
}

// Catalogue section B, second part: entry-spot identity claims of mesh
// nodes (LS-060 … LS-069). A-03 is fixed (00-decisions): a claim whose
// holder's exact owner lease is not live counts as free. A-02 is fixed: a
// same-owner Takeover with an unchanged entry spot keeps the claim.

// lsMNEOn is MNE(x) moved to rid r (other fields as MNE).
func lsMNEOn(owner location.OwnerToken, r string) location.MeshNodeDescriptor {
	d := fixture.MNE(owner)
	d.RID = lsRID(r)
	return d
}

// lsEntryConflictSetup is LS-060's setup: claim(a), claim(b), MNE(a) on K_A.
func lsEntryConflictSetup(l *lsCase) location.MeshNodeDescriptor {
	l.Helper()
	a := l.claim("a")
	l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	d := lsMNEOn(l.tok("b"), "node-b")
	d.LifecycleGeneration = 8
	d.Endpoint = "tcp://10.0.0.2:7300"
	return d
}

// ls060 checks LS-060 "Entry spot conflict on another key" (B. Mesh-node
// descriptors).
func ls060(l *lsCase) {
	other := lsEntryConflictSetup(l)
	before := l.snap()
	l.expectFailed(l.putMN(other, location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b) claims entry-1 held by a")
	l.noEffect(before, "a rejected entry-spot claim")
	require.Len(l, l.listMN(fixture.MeshGame), 1)
	l.expectStamp(stampOf(location.LocationPeer, fixture.MeshGame), 1)
}

// ls061 checks LS-061 "Remove releases the entry spot" (B. Mesh-node
// descriptors).
func ls061(l *lsCase) {
	other := lsEntryConflictSetup(l)
	l.expectFailed(l.putMN(other, location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b) while a holds entry-1")
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), l.tok("a")), "RemoveMeshNode(K_A, tok(a))")
	l.expectStored(l.putMN(other, location.IntentNewClaim), numPositive(1), l.now(), "MNE(b, node-b) after the remove")
}

// lsDeadEntryHolder is the setup of LS-062/LS-063: claim(a), MNE(a),
// expire(a). It returns the descriptor's generation.
func lsDeadEntryHolder(l *lsCase) int64 {
	l.Helper()
	a := l.claim("a")
	res := l.putMN(fixture.MNE(a), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), l.now(), "MNE(a)")
	l.expire("a")
	return res.Generation
}

// ls062 checks LS-062 "Dead owner's claim on the same key" (B. Mesh-node
// descriptors; A-03 fixed: the dead owner's claim is free).
func ls062(l *lsCase) {
	g := lsDeadEntryHolder(l)
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(b), location.IntentNewClaim), numAbove(2, g), l.now(), "MNE(b) on K_A after a's lease expired")
	require.Equal(l, "b", l.oneMN(fixture.MeshGame).OwnerID)
}

// ls063 checks LS-063 "New owner without entry spot frees the claim" (B.
// Mesh-node descriptors).
func ls063(l *lsCase) {
	g := lsDeadEntryHolder(l)
	b := l.claim("b")
	c := l.claim("c")
	l.expectStored(l.putMN(fixture.MN(b), location.IntentNewClaim), numAbove(2, g), l.now(), "MN(b) without entry spot on K_A")
	l.expectStored(l.putMN(lsMNEOn(c, "node-c"), location.IntentNewClaim), numPositive(1), l.now(), "MNE(c, node-c)")
}

// ls064 checks LS-064 "Restarted owner keeps its claim" (B. Mesh-node
// descriptors).
func ls064(l *lsCase) {
	_, g := lsRestartedOwner(l, fixture.MNE)
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(l.tok("a")), location.IntentNewClaim), numAbove(2, g), l.now(), "MNE(a, g2) NewClaim on K_A")
	l.expectFailed(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b) while restarted a holds entry-1")
}

// ls065 checks LS-065 "Same-owner Takeover with unchanged entry spot" (B.
// Mesh-node descriptors; A-02 fixed: the claim survives).
func ls065(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	res := l.putMN(fixture.MNE(a), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), l.now(), "MNE(a)")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentTakeover), numAbove(2, res.Generation), l.now(), "MNE(a) same-owner Takeover")
	l.expectFailed(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b): a still holds entry-1")
}

// ls066 checks LS-066 "Takeover changing the entry spot releases the old one"
// (B. Mesh-node descriptors).
func ls066(l *lsCase) {
	_, g := lsRestartedOwner(l, fixture.MNE)
	b := l.claim("b")
	c := l.claim("c")
	d := fixture.MN(l.tok("a"))
	d.LifecycleGeneration = 8
	d.EntrySpotID = lsStrPtr("entry-2")
	l.expectStored(l.putMN(d, location.IntentNewClaim), numAbove(2, g), l.now(), "MN(a, lifecycle 8, entry-2, g2) NewClaim on K_A")
	l.expectStored(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), numPositive(1), l.now(), "MNE(b, node-b) takes the released entry-1")
	e2 := fixture.MN(c)
	e2.RID = lsRID("node-c")
	e2.EntrySpotID = lsStrPtr("entry-2")
	l.expectFailed(l.putMN(e2, location.IntentNewClaim), location.RejectedConflict, "MN(c, node-c, entry-2) while a holds entry-2")
}

// ls067 checks LS-067 "Same owner, second key, same entry spot" (B. Mesh-node
// descriptors).
func ls067(l *lsCase) {
	a := l.claim("a")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	l.expectFailed(l.putMN(lsMNEOn(a, "node-b"), location.IntentNewClaim), location.RejectedConflict, "MNE(a, node-b): entry-1 is claimed by K_A")
}

// ls068 checks LS-068 "removeAllByOwner releases the claim" (B. Mesh-node
// descriptors).
func ls068(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	require.Equal(l, int64(1), l.removeAll(a), "RemoveAllByOwner(tok(a))")
	l.expectStored(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), numPositive(1), l.now(), "MNE(b, node-b) after the sweep")
}

// ls069 checks LS-069 "Entry claims block authority reservations" (B. Mesh-node
// descriptors; cross-suite).
func ls069(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	nb := fixture.MN(b)
	nb.RID = lsRID("node-b")
	l.expectStored(l.putMN(nb, location.IntentNewClaim), numPositive(1), l.now(), "MN(b, node-b)")
	req := location.ReserveRequest{
		Key: location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: "entry-1"},
		Intent: location.CreationIntent{
			StableType: "lobby", RequestContentReference: "req:entry-1",
			RequestSHA256: bytes.Repeat([]byte{1}, 32), RequestEncodedSize: 10,
		},
		Target:          location.CreationTarget{MeshName: fixture.MeshGame, NodeRID: lsRID("node-b"), NodeLifecycleGeneration: 7, Owner: b},
		CreatingPayload: []byte("creating"),
		Capacity:        location.CapacityVector{Spots: 1},
	}
	res, err := l.S.Reserve(l.Ctx, req)
	require.NoError(l, err)
	require.Equal(l, location.KindConflict, res.Kind, "reserve of the claimed entry spot id")
	require.NotNil(l, res.Current, "conflict carries the current read")
	require.Equal(l, location.KindMissing, res.Current.Kind, "conflict{current: missing}")
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), a), "RemoveMeshNode(K_A, tok(a))")
	res, err = l.S.Reserve(l.Ctx, req)
	require.NoError(l, err)
	require.Equal(l, location.KindReserved, res.Kind, "reserve after the claim was released")
}

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

// Catalogue section C: client-server descriptors (LS-080 … LS-089). Their
// stamps use the channel name as the mesh (A-06, reproduced).

// lsCreateCS claims a (unless claimed) and stores CS(a); it returns the
// generation.
func lsCreateCS(l *lsCase) int64 {
	l.Helper()
	return l.created(l.putCS(fixture.CS(l.claimOnce("a")), location.IntentNewClaim), "CS(a) NewClaim")
}

// ls080 checks LS-080 "Create" (C. Client-server descriptors): a NewClaim
// stores the row and bumps the ClientServer scope only.
func ls080(l *lsCase) {
	a := l.claim("a")
	l.expectStored(l.putCS(fixture.CS(a), location.IntentNewClaim), numPositive(1), T0(), "CS(a) NewClaim")
	want := fixture.CS(a)
	want.UpdatedAt = T0()
	l.expectSameRow([]location.ClientServerDescriptor{want}, l.listCS("orders"), "ListClientServers(orders)")
	l.expectStamp(stampOf(location.LocationClientServer, "orders"), 1)
	l.expectStamp(stampOf(location.LocationClientServer, ""), 1)
	l.expectStamp(stampOf(location.LocationPeer, ""), 0)
}

// ls081 checks LS-081 "Validation" (C. Client-server descriptors): each bad
// field fails with its error class and changes nothing.
func ls081(l *lsCase) {
	a := l.claim("a")
	lsExpectInvalid(l, "CS(a)", fixture.CS(a), l.S.UpdateClientServer, []lsInvalid[location.ClientServerDescriptor]{
		{`channelName ""`, func(d *location.ClientServerDescriptor) { d.ChannelName = "" }, location.ClassType},
		{`serverRid ""`, func(d *location.ClientServerDescriptor) { d.ServerRID = "" }, location.ClassType},
		{`endpoint ""`, func(d *location.ClientServerDescriptor) { d.Endpoint = "" }, location.ClassType},
		{`securityIdentity ""`, func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "" }, location.ClassType},
		{"channelName with U+0000", func(d *location.ClientServerDescriptor) { d.ChannelName = "ord\x00ers" }, location.ClassType},
		{"channelName of 256 bytes", func(d *location.ClientServerDescriptor) { d.ChannelName = strings.Repeat("c", 256) }, location.ClassType},
		{"lifecycleGeneration 0", func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
		{"descriptorRevision 0", func(d *location.ClientServerDescriptor) { d.DescriptorRevision = 0 }, location.ClassRange},
		{"leaseGeneration 0", func(d *location.ClientServerDescriptor) { d.LeaseGeneration = 0 }, location.ClassRange},
		{"weight -1", func(d *location.ClientServerDescriptor) { d.Weight = -1 }, location.ClassRange},
		{"weight 10001", func(d *location.ClientServerDescriptor) { d.Weight = 10001 }, location.ClassRange},
	})
	for _, w := range []int64{0, 10000} {
		d := fixture.CS(a)
		d.ServerRID = lsRID(fmt.Sprintf("srv-w%d", w))
		d.Weight = w
		l.expectStored(l.putCS(d, location.IntentNewClaim), numPositive(1), T0(), "CS(a) with weight %d", w)
	}
}

// ls082 checks LS-082 "Lease checks" (C. Client-server descriptors): a writer
// without a live lease of the right generation is rejected.
func ls082(l *lsCase) {
	a := l.claim("a")
	lsExpectLeaseChecked(l, "CS", func(t location.OwnerToken) location.WriteResult {
		return l.putCS(fixture.CS(t), location.IntentNewClaim)
	})
	l.expire("a")
	before := l.snap()
	l.expectFailed(l.putCS(fixture.CS(a), location.IntentNewClaim), location.RejectedConflict, "CS(a) after expire(a)")
	l.noEffect(before, "write with an expired lease")
}

// ls083 checks LS-083 "Replay" (C. Client-server descriptors): an identical
// Renew keeps generation and updatedAt and bumps nothing.
func ls083(l *lsCase) {
	g := lsCreateCS(l)
	stamps := lsAllStampScopes("orders")
	before := l.readStamps(stamps...)
	l.setClock(5 * time.Second)
	l.expectStored(l.putCS(fixture.CS(l.tok("a")), location.IntentRenew), numEqual(g), T0(), "replay at T0+5 s")
	after := l.readStamps(stamps...)
	for _, s := range stamps {
		l.expectStampDelta(before, after, s, 0)
	}
}

// ls084 checks LS-084 "Revision update" (C. Client-server descriptors).
func ls084(l *lsCase) {
	g := lsCreateCS(l)
	s := stampOf(location.LocationClientServer, "orders")
	before := l.readStamps(s)
	d := fixture.CS(l.tok("a"))
	d.DescriptorRevision, d.Weight, d.State = 2, 50, location.StateDraining
	l.expectStored(l.putCS(d, location.IntentRenew), numEqual(g), l.now(), "revision update")
	l.expectStampNow(before, s, 1, 2)
	d = fixture.CS(l.tok("a"))
	d.DescriptorRevision, d.Weight = 2, 60
	l.expectFailed(l.putCS(d, location.IntentRenew), location.IgnoredStale, "same revision, different content")
}

// ls085 checks LS-085 "Immutable change" (C. Client-server descriptors).
func ls085(l *lsCase) {
	lsCreateCS(l)
	edits := []struct {
		what string
		edit func(*location.ClientServerDescriptor)
	}{
		{"endpoint", func(d *location.ClientServerDescriptor) { d.Endpoint = "tcp://10.0.0.9:7400" }},
		{"securityIdentity", func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "cluster-b" }},
		{"lifecycleGeneration 2", func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 2 }},
	}
	for _, e := range edits {
		before := l.snap()
		d := fixture.CS(l.tok("a"))
		d.DescriptorRevision = 2
		e.edit(&d)
		l.expectFailed(l.putCS(d, location.IntentRenew), location.IgnoredStale, "revision 2 changing %s", e.what)
		l.noEffect(before, "revision 2 changing %s", e.what)
	}
}

// ls086 checks LS-086 "Re-create continues the counter" (C. Client-server
// descriptors).
func ls086(l *lsCase) {
	g := lsCreateCS(l)
	require.Equal(l, location.Stored, l.rmCS(fixture.CSKey(), l.tok("a")))
	l.expectStored(l.putCS(fixture.CS(l.tok("a")), location.IntentNewClaim), numAbove(2, g), l.now(), "CS(a) re-created")
}

// ls087 checks LS-087 "Other owner" (C. Client-server descriptors): another
// owner's NewClaim is ignored until the holder's lease has expired.
func ls087(l *lsCase) {
	g := lsCreateCS(l)
	b := l.claim("b")
	l.expectFailed(l.putCS(fixture.CS(b), location.IntentNewClaim), location.IgnoredStale, "CS(b) NewClaim over live a")
	l.expire("a")
	l.expectStored(l.putCS(fixture.CS(b), location.IntentNewClaim), numAbove(2, g), l.now(), "CS(b) NewClaim after expire(a)")
	require.Equal(l, "b", l.listCS("orders")[0].OwnerID)
}

// ls088 checks LS-088 "List" (C. Client-server descriptors): a list is per
// channel and shows a dead owner's rows.
func ls088(l *lsCase) {
	lsCreateCS(l)
	d := fixture.CS(l.tok("a"))
	d.ChannelName = "orders-2"
	l.expectStored(l.putCS(d, location.IntentNewClaim), numPositive(1), l.now(), "CS(a, orders-2)")
	l.expire("a")
	rows := l.listCS("orders")
	require.Len(l, rows, 1, "exactly the orders row, dead owner still listed")
	require.Equal(l, "orders", rows[0].ChannelName)
	require.Equal(l, "a", rows[0].OwnerID)
}

// ls089 checks LS-089 "Remove" (C. Client-server descriptors): fenced by the
// lease generation; a removal bumps the channel stamp.
func ls089(l *lsCase) {
	lsCreateCS(l)
	a := l.tok("a")
	s := stampOf(location.LocationClientServer, "orders")
	before := l.readStamps(s)
	require.Equal(l, location.IgnoredStale, l.rmCS(fixture.CSKey(), fixture.Token("a", a.LeaseGeneration+1)), "remove with gen(a)+1")
	require.Equal(l, location.Stored, l.rmCS(fixture.CSKey(), a), "remove with tok(a)")
	require.Empty(l, l.listCS("orders"))
	l.expectStampNow(before, s, 1, 2)
}

// Catalogue section D: fanout publishers (LS-090 … LS-097). Fanout writes
// bump no stamp; the list hides owners without a live lease, judged
// by owner id (A-16, reproduced).

// lsFPOn is FP(x) with publisher rid r.
func lsFPOn(owner location.OwnerToken, r string) location.FanoutPublisherDescriptor {
	d := fixture.FP(owner)
	d.PublisherRID = lsRID(r)
	return d
}

// lsCreateFP claims a (unless claimed) and stores FP(a); it returns the
// generation.
func lsCreateFP(l *lsCase) int64 {
	l.Helper()
	return l.created(l.putFP(fixture.FP(l.claimOnce("a")), location.IntentNewClaim), "FP(a) NewClaim")
}

// lsEveryStampZero requires every stamp kind, global and for the names, to
// read 0.
func lsEveryStampZero(l *lsCase, names ...string) {
	l.Helper()
	for _, k := range stampKinds() {
		for _, m := range append([]string{""}, names...) {
			l.expectStamp(stampScope{Kind: k, Mesh: m}, 0)
		}
	}
}

// ls090 checks LS-090 "Create bumps nothing" (D. Fanout publishers).
func ls090(l *lsCase) {
	lsCreateFP(l)
	want := fixture.FP(l.tok("a"))
	want.UpdatedAt = T0()
	l.expectSameRow([]location.FanoutPublisherDescriptor{want}, l.listFP("events"), "ListFanoutPublishers(events)")
	lsEveryStampZero(l, "events")
}

// ls091 checks LS-091 "Revision rules" (D. Fanout publishers): a mutable change
// needs a higher revision and an immutable one a new lifecycle.
func ls091(l *lsCase) {
	g := lsCreateFP(l)
	a := l.tok("a")
	stale := []struct {
		what string
		edit func(*location.FanoutPublisherDescriptor)
	}{
		{"state Draining at the same revision", func(d *location.FanoutPublisherDescriptor) { d.State = location.StateDraining }},
		{"revision 2 with another endpoint", func(d *location.FanoutPublisherDescriptor) {
			d.DescriptorRevision, d.Endpoint = 2, "tcp://10.0.0.2:9501"
		}},
		{"lifecycle 8, revision 2", func(d *location.FanoutPublisherDescriptor) {
			d.LifecycleGeneration, d.DescriptorRevision = 8, 2
		}},
	}
	before := l.snap()
	for _, s := range stale {
		d := fixture.FP(a)
		s.edit(&d)
		l.expectFailed(l.putFP(d, location.IntentRenew), location.IgnoredStale, "FP(a) %s", s.what)
	}
	l.noEffect(before, "stale fanout writes")
	d := fixture.FP(a)
	d.DescriptorRevision, d.State = 2, location.StateDraining
	l.expectStored(l.putFP(d, location.IntentRenew), numEqual(g), l.now(), "FP(a) revision 2, Draining")
	rows := l.listFP("events")
	require.Len(l, rows, 1)
	require.Equal(l, int64(2), rows[0].DescriptorRevision)
	require.Equal(l, location.StateDraining, rows[0].State)
	lsEveryStampZero(l, "events")
}

// ls092 checks LS-092 "Validation" (D. Fanout publishers): each bad field fails
// with its error class and changes nothing.
func ls092(l *lsCase) {
	a := l.claim("a")
	lsExpectInvalid(l, "FP(a)", fixture.FP(a), l.S.UpdateFanoutPublisher, []lsInvalid[location.FanoutPublisherDescriptor]{
		{`endpoint ""`, func(d *location.FanoutPublisherDescriptor) { d.Endpoint = "" }, location.ClassType},
		{`securityIdentity ""`, func(d *location.FanoutPublisherDescriptor) { d.SecurityIdentity = "" }, location.ClassType},
		{`publisherRid ""`, func(d *location.FanoutPublisherDescriptor) { d.PublisherRID = "" }, location.ClassType},
		{"lifecycleGeneration 0", func(d *location.FanoutPublisherDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
	})
}

// ls093 checks LS-093 "Liveness filter" (D. Fanout publishers; A-16 reproduced:
// liveness by owner id).
func ls093(l *lsCase) {
	lsCreateFP(l)
	b := l.claim("b")
	l.expectStored(l.putFP(lsFPOn(b, "pub-b"), location.IntentNewClaim), numPositive(1), l.now(), "FP(b, pub-b)")
	l.expire("b")
	require.Equal(l, []string{"pub-a"}, lsFPRIDs(l.listFP("events")), "b's lease expired")
	l.claim("b")
	require.Equal(l, []string{"pub-a", "pub-b"}, lsFPRIDs(l.listFP("events")), "b holds a new lease: its old row is listed again")
}

// ls094 checks LS-094 "Released owner hidden" (D. Fanout publishers).
func ls094(l *lsCase) {
	g := lsCreateFP(l)
	l.release("a")
	require.Empty(l, l.listFP("events"), "a released owner's publisher is hidden")
	b := l.claim("b")
	l.expectStored(l.putFP(fixture.FP(b), location.IntentNewClaim), numAbove(2, g), l.now(), "FP(b) NewClaim on the hidden row's key")
}

// ls095 checks LS-095 "Paging counts live rows only" (D. Fanout publishers).
func ls095(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	for _, d := range []location.FanoutPublisherDescriptor{lsFPOn(a, "pub-a"), lsFPOn(b, "pub-b"), lsFPOn(a, "pub-c")} {
		l.expectStored(l.putFP(d, location.IntentNewClaim), numPositive(1), l.now(), "FP %s", d.PublisherRID)
	}
	l.expire("b")
	p, err := l.S.ListFanoutPublishers(l.Ctx, "events", location.PageRequest{PageSize: 1})
	require.NoError(l, err)
	require.Equal(l, []string{"pub-a"}, lsFPRIDs(p.Items), "first page")
	l.expectToken(p.ContinuationToken, "1", "first page")
	p, err = l.S.ListFanoutPublishers(l.Ctx, "events", location.PageRequest{PageSize: 1, ContinuationToken: p.ContinuationToken})
	require.NoError(l, err)
	require.Equal(l, []string{"pub-c"}, lsFPRIDs(p.Items), "second page")
	l.expectToken(p.ContinuationToken, "", "second page")
}

// ls096 checks LS-096 "Remove" (D. Fanout publishers): fenced by the lease
// generation, and no stamp moves.
func ls096(l *lsCase) {
	g := lsCreateFP(l)
	a := l.tok("a")
	require.Equal(l, location.IgnoredStale, l.rmFP(fixture.FPKey(), fixture.Token("a", a.LeaseGeneration+1)), "remove with gen(a)+1")
	require.Equal(l, location.Stored, l.rmFP(fixture.FPKey(), a), "remove with tok(a)")
	require.Empty(l, l.listFP("events"))
	lsEveryStampZero(l, "events")
	if l.Caps.denseCounters() {
		// The removed key's generation counter is kept: a re-created row
		// continues it.
		l.expectStored(l.putFP(fixture.FP(a), location.IntentNewClaim), numAbove(2, g), l.now(), "FP(a) re-created")
	}
}

// ls097 checks LS-097 "Lease checks" (D. Fanout publishers): a writer without
// a lease, or with the wrong generation, is rejected.
func ls097(l *lsCase) {
	l.claim("a")
	lsExpectLeaseChecked(l, "FP", func(t location.OwnerToken) location.WriteResult {
		return l.putFP(fixture.FP(t), location.IntentNewClaim)
	})
}
