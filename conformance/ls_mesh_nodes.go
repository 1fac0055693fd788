package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

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
	l.expectStampDelta(before, l.readStamps(peerGame), peerGame, 0)
	l.expectStamp(peerGame, 1)
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
	l.expectStampDelta(before, l.readStamps(peerGame), peerGame, 1)
	l.expectStamp(peerGame, 2)
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
	l.expectStampDelta(before, l.readStamps(peerGame), peerGame, 1)
	l.expectStamp(peerGame, 2)
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
