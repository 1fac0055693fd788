package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section I of the authority catalogue: compareExchangeAuthority put/newOwner,
// the relocation commit (04 §2.2 CX-N1…CX-N9, rule MA).

// setCounters sets the authority counters through the declared hook; a hook
// that is missing or answers ErrUnsupported fails the scenario.
func (e *authEnv) setCounters(version, object, owner *int64) {
	e.c.Helper()
	require.NotNil(e.c, e.c.F.SetAuthorityCounters, "the harness declares AuthorityCounterHook but gives no SetAuthorityCounters")
	require.NoError(e.c, e.c.F.SetAuthorityCounters(version, object, owner), "SetAuthorityCounters")
}

// authI64 returns a pointer to n.
func authI64(n int64) *int64 { return &n }

// auth048 AUTH-048 Relocation commit.
func auth048(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m1")
	ua, ub := e.U(e.NA), e.U(e.NB)
	e.REL("R1", key, S, e.NA, e.NB)
	wantB := ub.plusRooms(1, 0)
	e.requireU(e.NB, wantB)

	got := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R1")))
	require.Equal(c, e.B, got.Owner)
	require.Equal(c, location.PlacementAllocation{
		State: location.AllocationActive, ObjectKind: location.ObjectUserSpot, StableType: "room",
		Descriptor: e.NB.Key(), DescriptorLifecycleGeneration: 1, Capacity: fixture.VS("room"),
	}, got.Allocation)
	require.Nil(c, got.PendingCreation)
	require.Equal(c, S.ObjectGeneration, got.ObjectGeneration)
	require.Greater(c, got.AuthorityOwnerGeneration, S.AuthorityOwnerGeneration)
	require.Equal(c, "moved", string(got.Payload))
	require.NotEqual(c, S.StoreVersion, got.StoreVersion)
	e.exactVersion(got.StoreVersion, "3", "moved row")
	e.exactNumber(got.AuthorityOwnerGeneration, 2, "moved authorityOwnerGeneration")
	e.requireRow(key, got)

	wantA := ua.plusRooms(0, -1)
	e.requireU(e.NA, wantA)
	wantB = ub.plusRooms(0, 1)
	e.requireU(e.NB, wantB)
	require.Equal(c, location.KindAlreadyCommitted, e.abortRel("R1"))
	e.requireU(e.NB, wantB)
}

// auth049 AUTH-049 Source owner may be dead.
func auth049(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m2")
	e.REL("R2", key, S, e.NA, e.NB)
	e.release(e.A)
	got := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R2")))
	require.Equal(c, e.B, got.Owner)
}

// auth050 AUTH-050 Unknown fence.
func auth050(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("m3", e.TA())
	e.requireCASConflict("newOwner with an unknown fence", fixture.KS("m3"), S.StoreVersion, fixture.NewOwner("moved", e.B, "never-issued"), S)
}

// auth051 AUTH-051 Aborted reservation.
func auth051(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("m4", e.TA())
	e.REL("R3", fixture.KS("m4"), S, e.NA, e.NB)
	require.Equal(c, location.KindAborted, e.abortRel("R3"))
	e.requireCASConflict("newOwner with an aborted reservation", fixture.KS("m4"), S.StoreVersion, fixture.NewOwner("moved", e.B, "R3"), S)
}

// auth052 AUTH-052 Fence used twice.
func auth052(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m1")
	e.REL("R1", key, S, e.NA, e.NB)
	S2 := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R1")))
	e.requireCASConflict("newOwner with a used fence", key, S2.StoreVersion, fixture.NewOwner("again", e.B, "R1"), S2)
}

// auth053 AUTH-053 Target owner differs from the reservation.
func auth053(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("m4", e.TA())
	e.REL("R4", fixture.KS("m4"), S, e.NA, e.NB)
	e.requireCASConflict("newOwner with another target owner", fixture.KS("m4"), S.StoreVersion, fixture.NewOwner("moved", e.A, "R4"), S)
	u := e.U(e.NB)
	require.Equal(c, location.KindAborted, e.abortRel("R4"), "R4 is still reserved")
	u = u.plusRooms(-1, 0)
	e.requireU(e.NB, u)
}

// auth054 AUTH-054 Row changed after the reservation.
func auth054(c *Case) {
	e := newAuthEnv(c)
	key := fixture.KS("m5")
	u0 := e.U(e.NB)
	S := e.AS("m5", e.TA())
	e.REL("R5", key, S, e.NA, e.NB)
	S2 := e.requireStored(e.cas(key, S.StoreVersion, fixture.Preserve("changed")))
	for _, v := range []location.StoreVersion{S2.StoreVersion, S.StoreVersion} {
		e.requireCASConflict("newOwner after the row changed", key, v, fixture.NewOwner("moved", e.B, "R5"), S2)
	}
	require.Equal(c, location.KindAborted, e.abortRel("R5"))
	e.requireU(e.NB, u0)
}

// auth055 AUTH-055 Target lease released before the CAS.
func auth055(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("m6", e.TA())
	e.REL("R6", fixture.KS("m6"), S, e.NA, e.NB)
	e.release(e.B)
	e.requireCASConflict("newOwner with a released target lease", fixture.KS("m6"), S.StoreVersion, fixture.NewOwner("moved", e.B, "R6"), S)
	require.Equal(c, location.KindAborted, e.abortRel("R6"), "R6 is still reserved")
}

// auth056 AUTH-056 Reservation capacity replaces row capacity.
func auth056(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m7")
	ua, ub := e.U(e.NA), e.U(e.NB)
	two := fixture.VSpots(location.ObjectUserSpot, "room", 2)
	e.REL("R7", key, S, e.NA, e.NB, two)
	got := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R7")))
	require.Equal(c, two, got.Allocation.Capacity)
	ua = ua.plusRooms(0, -1)
	e.requireU(e.NA, ua)
	ub = ub.plusRooms(0, 2)
	e.requireU(e.NB, ub)
}

// auth057 AUTH-057 Reservation for another authority.
func auth057(c *Case) {
	e := newAuthEnv(c)
	S8 := e.AS("m8", e.TA())
	S9 := e.AS("m9", e.TA())
	e.REL("R8", fixture.KS("m8"), S8, e.NA, e.NB)
	e.requireCASConflict("newOwner with another row's reservation", fixture.KS("m9"), S9.StoreVersion, fixture.NewOwner("moved", e.B, "R8"), S9)
}

// auth058 AUTH-058 Reservation adopted by an aggregate.
func auth058(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("mx")
	e.REL("AGX", key, S, e.NA, e.NB)
	req := e.AGG("AGX", 1, []fixture.Part{fixture.NewOwnerPart(key, S)}, fixture.VS("room"))
	e.requirePrepared(e.prepare(req), req, location.KindPrepared)
	e.requireCASConflict("newOwner with an adopted reservation", key, S.StoreVersion, fixture.NewOwner("moved", e.B, "AGX"), S)
}

// auth059 AUTH-059 [hook] Owner generations exhausted; with one generation
// left the move goes through and issues the maximum.
func auth059(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m9")
	e.REL("R9", key, S, e.NA, e.NB)
	u := e.U(e.NB)
	e.setCounters(nil, nil, authI64(location.MaxGeneration))
	e.unchanged("newOwner with exhausted owner generations", func() {
		r := e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R9"))
		require.Equal(c, location.CompareExchangeResult{Kind: location.KindGenerationExhausted}, r, "CAS: %s", authDescribeCAS(r))
	})
	e.requireRow(key, S)
	e.requireU(e.NB, u)
	e.setCounters(nil, nil, authI64(location.MaxGeneration-1))
	got := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R9")))
	require.Equal(c, location.MaxGeneration, got.AuthorityOwnerGeneration, "the last owner generation is issued")
	u = u.plusRooms(-1, 1)
	e.requireU(e.NB, u)
}

// auth060 AUTH-060 [hook] Versions exhausted: preserve, restore, delete,
// rebind (AUTH-035 set-up) and newOwner (AUTH-048 set-up).
func auth060(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m11")
	moveKey := fixture.KS("m1")
	Sm := e.AS("m1", e.TA())
	e.REL("R1", moveKey, Sm, e.NA, e.NB)
	Sb := e.AS("b1", e.TA())

	e.setCounters(authI64(location.MaxGeneration), nil, nil)
	exhausted := func(what string, k location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation) {
		c.Helper()
		e.unchanged(what+" with exhausted versions", func() {
			r := e.cas(k, v, m)
			require.Equal(c, location.CompareExchangeResult{Kind: location.KindGenerationExhausted}, r, "%s: %s", what, authDescribeCAS(r))
		})
	}
	exhausted("preserve", key, S.StoreVersion, fixture.Preserve("p"))
	exhausted("restore", key, S.StoreVersion, fixture.Restore("p", e.A))
	exhausted("delete", key, S.StoreVersion, fixture.Delete())
	exhausted("newOwner", moveKey, Sm.StoreVersion, fixture.NewOwner("moved", e.B, "R1"))

	e.release(e.A)
	A2, _ := e.claim("owner-a")
	e.republish(e.NA, location.IntentNewClaim, func(d *location.MeshNodeDescriptor) {
		d.LeaseGeneration = A2.LeaseGeneration
	})
	exhausted("rebind", fixture.KS("b1"), Sb.StoreVersion, fixture.Rebind("rebound", e.A, A2))
	e.requireRow(key, S)
	e.requireRow(moveKey, Sm)
	e.requireRow(fixture.KS("b1"), Sb)
	require.Equal(c, location.KindAborted, e.abortRel("R1"), "R1 is still reserved")
}

// auth061 AUTH-061 Relocation onto the same node.
func auth061(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m10")
	u := e.U(e.NA)
	e.REL("R10", key, S, e.NA, e.NA)
	held := u.plusRooms(1, 0)
	e.requireU(e.NA, held)
	got := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.A, "R10")))
	require.Greater(c, got.AuthorityOwnerGeneration, S.AuthorityOwnerGeneration)
	e.exactNumber(got.AuthorityOwnerGeneration, 2, "authorityOwnerGeneration")
	require.Equal(c, e.A, got.Owner)
	e.requireU(e.NA, u)
}
