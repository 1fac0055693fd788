package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Sections P and Q of the authority catalogue: reserveRelocationCapacity and
// abortRelocationCapacity (04 §1.8, §2.9, §2.10).

// requireRelKind requires a relocation reserve result of kind k; conflict
// carries current = want (nil = missing); every answer but reserved changes
// nothing.
func (e *authEnv) requireRelKind(req location.RelocationReservationRequest, k location.ResultKind, want *location.AuthoritySnapshot, what string) {
	e.c.Helper()
	check := func() {
		res := e.reserveRel(req)
		require.Equal(e.c, k, res.Kind, "%s: %+v", what, res)
		switch k {
		case location.KindConflict:
			e.requireReadIs(res.Current, want, what+": conflict.current")
			require.Empty(e.c, res.Fence, "%s: a conflict carries no fence", what)
		case location.KindReserved, location.KindAlreadyReserved:
			require.Equal(e.c, location.RelocationFence(req.ReservationID), res.Fence, what)
			require.Nil(e.c, res.Current, "%s: a reservation carries no current read", what)
		default:
			require.Equal(e.c, location.RelocationReserveResult{Kind: k}, res, "%s: the bare %s result", what, k)
		}
	}
	if k == location.KindReserved {
		check()
		return
	}
	e.unchanged(what, check)
}

// auth140 AUTH-140 Reserve target capacity.
func auth140(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	u := e.U(e.NB)
	e.REL("R1", fixture.KS("r1"), S, e.NA, e.NB)
	e.requireRow(fixture.KS("r1"), S)
	u = u.plusRooms(1, 0)
	e.requireU(e.NB, u)
	next := e.requireStored(e.cas(fixture.KS("r1"), S.StoreVersion, fixture.Preserve("next")))
	e.exactVersion(next.StoreVersion, "3", "the write after a relocation reservation (which issues no version)")
}

// auth141 AUTH-141 Identical replay.
func auth141(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	req := e.REL("R1", fixture.KS("r1"), S, e.NA, e.NB)
	e.requireRelKind(req, location.KindAlreadyReserved, nil, "an identical relocation replay")
}

// auth142 AUTH-142 Same id, other content.
func auth142(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	req := e.REL("R1", fixture.KS("r1"), S, e.NA, e.NB)
	lc := req
	lc.TargetNodeLifecycleGeneration = 2
	e.requireRelKind(lc, location.KindConflict, S, "relocation R1 with target lifecycle 2")
	capacity := req
	capacity.Capacity = fixture.VSpots(location.ObjectUserSpot, "room", 2)
	e.requireRelKind(capacity, location.KindConflict, S, "relocation R1 with another capacity")
}

// auth143 AUTH-143 Validation.
func auth143(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	edits := map[string]func(r *location.RelocationReservationRequest){
		"empty reservation id":    func(r *location.RelocationReservationRequest) { r.ReservationID = "" },
		"reservation id with NUL": func(r *location.RelocationReservationRequest) { r.ReservationID = "R\x001" },
		"empty stable type":       func(r *location.RelocationReservationRequest) { r.StableType = "" },
		"capacity all zero":       func(r *location.RelocationReservationRequest) { r.Capacity = location.CapacityVector{} },
		"capacity spot type count -1": func(r *location.RelocationReservationRequest) {
			r.Capacity = fixture.VSpots(location.ObjectUserSpot, "room", -1)
		},
	}
	for name, edit := range edits {
		req := fixture.RelRequest("R1", fixture.KS("r1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room"))
		edit(&req)
		e.unchanged("relocation with "+name, func() {
			_, err := c.S.ReserveRelocationCapacity(c.Ctx, req)
			authRequireInvalid(c, err, "relocation with "+name)
		})
	}
}

// auth144 AUTH-144 Authority missing or reserved.
func auth144(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	missing := fixture.RelRequest("R1", fixture.KS("r-missing"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room"))
	e.requireRelKind(missing, location.KindConflict, nil, "relocation of a missing authority")
	R := e.RS("r-reserved", e.TA())
	reserved := fixture.RelRequest("R2", fixture.KS("r-reserved"), R.Creating, e.NA.Desc, e.NB.Desc, fixture.VS("room"))
	e.requireRelKind(reserved, location.KindConflict, R.Creating, "relocation of a reserved authority")
}

// auth145 AUTH-145 Stale expected version.
func auth145(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	S2 := e.requireStored(e.cas(fixture.KS("r1"), S.StoreVersion, fixture.Preserve("changed")))
	e.requireRelKind(fixture.RelRequest("R1", fixture.KS("r1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room")), location.KindConflict, S2, "relocation with a stale version")
}

// auth146 AUTH-146 Source mismatch.
func auth146(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	edits := map[string]func(r *location.RelocationReservationRequest){
		"object kind instance_spot": func(r *location.RelocationReservationRequest) { r.ObjectKind = location.ObjectInstanceSpot },
		"stable type hall":          func(r *location.RelocationReservationRequest) { r.StableType = "hall" },
		"source RID node-b":         func(r *location.RelocationReservationRequest) { r.SourceDescriptor.RID = "node-b" },
		"source lifecycle 2":        func(r *location.RelocationReservationRequest) { r.SourceNodeLifecycleGeneration = 2 },
		"source owner B":            func(r *location.RelocationReservationRequest) { r.SourceOwner = e.B },
	}
	for name, edit := range edits {
		req := fixture.RelRequest("R1", fixture.KS("r1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room"))
		edit(&req)
		e.requireRelKind(req, location.KindConflict, S, "relocation with "+name)
	}
	actor := fixture.RelRequest("R1", fixture.KA("r1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room"))
	e.requireRelKind(actor, location.KindConflict, nil, "relocation of the actor key of the same id")
}

// auth147 AUTH-147 Target and source liveness.
func auth147(c *Case) {
	e := newAuthEnv(c)
	S1 := e.AS("r1", e.TA())
	S2 := e.AS("r2", e.TA())
	e.release(e.A)
	e.requireRelKind(fixture.RelRequest("Rs", fixture.KS("r1"), S1, e.NA.Desc, e.NB.Desc, fixture.VS("room")), location.KindReserved, nil, "relocation from a released source")
	e.release(e.B)
	e.requireRelKind(fixture.RelRequest("Rt", fixture.KS("r2"), S2, e.NA.Desc, e.NB.Desc, fixture.VS("room")), location.KindTargetUnavailable, nil, "relocation to a released target")
}

// auth148 AUTH-148 Target full.
func auth148(c *Case) {
	e := newAuthEnv(c, authWithNB(func(l *fixture.Limits) { l.Spots = 1 }))
	S := e.AS("r1", e.TA())
	e.AS("r2", e.TB())
	e.requireRelKind(fixture.RelRequest("R2", fixture.KS("r1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room")), location.KindPlacementCapacityExhausted, nil, "relocation to a full node")
}

// auth149 AUTH-149 [quirk] Replay after use (D-10 kept: alreadyReserved in
// any state).
func auth149(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m1")
	req := e.REL("R1", key, S, e.NA, e.NB)
	e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R1")))
	e.requireRelKind(req, location.KindAlreadyReserved, nil, "a relocation replay after use")
}

// auth150 AUTH-150 Competing reservations.
func auth150(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("r3")
	ub := e.U(e.NB)
	e.REL("RA1", key, S, e.NA, e.NB)
	e.REL("RA2", key, S, e.NA, e.NB)
	want := ub.plusRooms(2, 0)
	e.requireU(e.NB, want)
	S2 := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "RA1")))
	e.requireCASConflict("newOwner with the competing reservation", key, S2.StoreVersion, fixture.NewOwner("again", e.B, "RA2"), S2)
	require.Equal(c, location.KindAborted, e.abortRel("RA2"))
	want = ub.plusRooms(0, 1)
	e.requireU(e.NB, want)
}

// auth151 AUTH-151 Abort a reservation.
func auth151(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	u := e.U(e.NB)
	e.REL("R1", fixture.KS("r1"), S, e.NA, e.NB)
	require.Equal(c, location.KindAborted, e.abortRel("R1"))
	e.requireU(e.NB, u)
	e.requireRow(fixture.KS("r1"), S)
}

// requireAbortRelKind requires abortRelocationCapacity to answer k without
// changing anything.
func (e *authEnv) requireAbortRelKind(fence string, k location.ResultKind, what string) {
	e.c.Helper()
	e.unchanged(what, func() {
		require.Equal(e.c, k, e.abortRel(fence), what)
	})
}

// auth152 AUTH-152 Abort twice.
func auth152(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r1", e.TA())
	e.REL("R1", fixture.KS("r1"), S, e.NA, e.NB)
	require.Equal(c, location.KindAborted, e.abortRel("R1"))
	e.requireAbortRelKind("R1", location.KindAlreadyAborted, "abortRelocationCapacity twice")
}

// auth153 AUTH-153 Abort after use.
func auth153(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("m1")
	e.REL("R1", key, S, e.NA, e.NB)
	e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "R1")))
	e.requireAbortRelKind("R1", location.KindAlreadyCommitted, "abortRelocationCapacity after use")
}

// auth154 AUTH-154 Unknown fence.
func auth154(c *Case) {
	e := newAuthEnv(c)
	e.requireAbortRelKind("nope", location.KindStale, "abortRelocationCapacity of an unknown fence")
}

// auth155 AUTH-155 Adopted reservation.
func auth155(c *Case) {
	e := newAuthEnv(c)
	e.auth166Setup()
	e.requireAbortRelKind("AG2", location.KindStale, "abortRelocationCapacity of an adopted reservation")
	require.Equal(c, int64(2), e.U(e.NB).Spots.Reserved)
	require.Equal(c, int64(2), e.U(e.NB).Room.Reserved)
}
