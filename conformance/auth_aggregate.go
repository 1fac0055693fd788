package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Sections R, S and T of the authority catalogue: prepareAggregate,
// commitAggregate and abortAggregate (04 §1.9, §2.11–§2.13).

// authTwoRooms is the capacity {spots 2, user_spot/room 2}.
func authTwoRooms() location.CapacityVector {
	return fixture.VSpots(location.ObjectUserSpot, "room", 2)
}

// aggRows creates AUTH-156's participants g1 and g2 on NA.
func (e *authEnv) aggRows() (*location.AuthoritySnapshot, *location.AuthoritySnapshot) {
	e.c.Helper()
	return e.AS("g1", e.TA()), e.AS("g2", e.TA())
}

// auth156Request is AUTH-156's request: AG1 generation 1 moving g1 and g2 to NB.
func (e *authEnv) auth156Request(S1, S2 *location.AuthoritySnapshot) location.AggregatePrepareRequest {
	return e.AGG("AG1", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("g2"), S2)}, authTwoRooms())
}

// auth156Setup is AUTH-156 done: the rows and the prepared aggregate.
func (e *authEnv) auth156Setup() (*location.AuthoritySnapshot, *location.AuthoritySnapshot, location.AggregatePrepareRequest) {
	e.c.Helper()
	S1, S2 := e.aggRows()
	req := e.auth156Request(S1, S2)
	e.requirePrepared(e.prepare(req), req, location.KindPrepared)
	return S1, S2, req
}

// auth166Setup is AUTH-166 done: AG2 adopted the relocation reservation AG2.
func (e *authEnv) auth166Setup() (*location.AuthoritySnapshot, *location.AuthoritySnapshot, location.AggregatePrepareRequest) {
	e.c.Helper()
	S1, S2 := e.aggRows()
	e.REL("AG2", fixture.KS("g1"), S1, e.NA, e.NB, authTwoRooms())
	require.Equal(e.c, int64(2), e.U(e.NB).Spots.Reserved)
	req := e.AGG("AG2", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("g2"), S2)}, authTwoRooms())
	e.requirePrepared(e.prepare(req), req, location.KindPrepared)
	return S1, S2, req
}

// auth171Setup is AUTH-171 done: [g1 preserve, g2 newOwner] prepared.
func (e *authEnv) auth171Setup() (*location.AuthoritySnapshot, *location.AuthoritySnapshot, location.AggregatePrepareRequest) {
	e.c.Helper()
	S1, S2 := e.aggRows()
	req := e.AGG("AG1", 1, []fixture.Part{fixture.PreservePart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("g2"), S2)}, fixture.VS("room"))
	e.requirePrepared(e.prepare(req), req, location.KindPrepared)
	return S1, S2, req
}

// requirePrepareKind requires a prepare answer of kind k (no change unless
// prepared).
func (e *authEnv) requirePrepareKind(req location.AggregatePrepareRequest, k location.ResultKind, what string) {
	e.c.Helper()
	if k == location.KindPrepared {
		e.requirePrepared(e.prepare(req), req, k)
		return
	}
	e.unchanged(what, func() {
		res := e.prepare(req)
		require.Equal(e.c, k, res.Kind, what)
		if k == location.KindAlreadyPrepared {
			require.Equal(e.c, authAggFence(req.AggregateID, req.AggregateGeneration), res.Fence)
		} else {
			require.Equal(e.c, location.AggregateFence{}, res.Fence, "%s: only prepared answers carry a fence", what)
		}
	})
}

// requirePrepareInvalid requires an invalid-argument error of the class and
// code, and no change.
func (e *authEnv) requirePrepareInvalid(req location.AggregatePrepareRequest, class location.ErrorClass, code, what string) {
	e.c.Helper()
	e.requireInvalid(what, class, code, func() error { return errOf(e.c.S.PrepareAggregate(e.c.Ctx, req)) })
}

// requireAggKind requires commit or abort of an aggregate to answer k, with
// no change unless the answer is committed or aborted.
func (e *authEnv) requireAggKind(call func(location.AggregateFence) location.ResultKind, f location.AggregateFence, k location.ResultKind, what string) {
	e.c.Helper()
	if k == location.KindCommitted || k == location.KindAborted {
		require.Equal(e.c, k, call(f), what)
		return
	}
	e.unchanged(what, func() {
		require.Equal(e.c, k, call(f), what)
	})
}

// auth156 AUTH-156 Prepare a two-participant move.
func auth156(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	ua, u := e.U(e.NA), e.U(e.NB)
	req := e.auth156Request(S1, S2)
	e.requirePrepared(e.prepare(req), req, location.KindPrepared)
	u = u.plusRooms(2, 0)
	e.requireU(e.NB, u)
	e.requireU(e.NA, ua)
	e.requireRow(fixture.KS("g1"), S1)
	e.requireRow(fixture.KS("g2"), S2)
}

// auth157 AUTH-157 Identical replay.
func auth157(c *Case) {
	e := newAuthEnv(c)
	_, _, req := e.auth156Setup()
	e.requirePrepareKind(req, location.KindAlreadyPrepared, "an identical prepare")
}

// auth158 AUTH-158 Same fence, other content.
func auth158(c *Case) {
	e := newAuthEnv(c)
	_, _, req := e.auth156Setup()
	edits := map[string]func(r *location.AggregatePrepareRequest){
		"another participant payload": func(r *location.AggregatePrepareRequest) { r.Participants[0].AuthorityPayload = []byte("different") },
		"another membership mutation": func(r *location.AggregatePrepareRequest) { r.Participants[1].MembershipMutation = []byte("different") },
		"another inventory digest":    func(r *location.AggregatePrepareRequest) { r.InventoryDigest = fixture.Digest32(0x08) },
		"another target lifecycle":    func(r *location.AggregatePrepareRequest) { r.TargetDescriptorLifecycleGeneration = 2 },
		"one participant fewer":       func(r *location.AggregatePrepareRequest) { r.Participants = r.Participants[:1] },
	}
	for name, edit := range edits {
		other := req
		other.Participants = append([]location.AggregateParticipant(nil), req.Participants...)
		edit(&other)
		e.requirePrepareKind(other, location.KindConflict, "a prepare with "+name)
	}
}

// auth159 AUTH-159 Validation.
func auth159(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	base := e.auth156Request(S1, S2)
	type bad struct {
		class location.ErrorClass
		code  string
		edit  func(r *location.AggregatePrepareRequest)
	}
	edits := map[string]bad{
		"empty id":          {location.ClassType, location.CodeAggregateID, func(r *location.AggregatePrepareRequest) { r.AggregateID = "" }},
		"generation 0":      {location.ClassRange, location.CodeAggregateShape, func(r *location.AggregatePrepareRequest) { r.AggregateGeneration = 0 }},
		"no participants":   {location.ClassRange, location.CodeAggregateShape, func(r *location.AggregatePrepareRequest) { r.Participants = nil }},
		"digest of 31":      {location.ClassType, location.CodeAggregateDigest, func(r *location.AggregatePrepareRequest) { r.InventoryDigest = fixture.Digest32(7)[:31] }},
		"capacity all zero": {location.ClassRange, location.CodeAuthorityCapacity, func(r *location.AggregatePrepareRequest) { r.Capacity = location.CapacityVector{} }},
		"duplicate participant": {location.ClassType, location.CodeAggregateParticipantOrder, func(r *location.AggregatePrepareRequest) {
			r.Participants = []location.AggregateParticipant{r.Participants[0], r.Participants[0]}
		}},
		"participants not byte-sorted": {location.ClassType, location.CodeAggregateParticipantOrder, func(r *location.AggregatePrepareRequest) {
			r.Participants = []location.AggregateParticipant{r.Participants[1], r.Participants[0]}
		}},
	}
	for name, b := range edits {
		req := base
		req.Participants = append([]location.AggregateParticipant(nil), base.Participants...)
		b.edit(&req)
		e.requirePrepareInvalid(req, b.class, b.code, "prepare with "+name)
	}
}

// auth160 AUTH-160 Target not live.
func auth160(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	e.release(e.B)
	e.requirePrepareKind(e.auth156Request(S1, S2), location.KindConflict, "prepare onto a released target")
}

// auth161 AUTH-161 Participant problems.
func auth161(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	R := e.RS("g0", e.TA())
	missing := e.AGG("AG1", 1, []fixture.Part{{Key: fixture.KS("g-none"), Version: S1.StoreVersion, Transition: location.TransitionNewOwner}, fixture.NewOwnerPart(fixture.KS("g2"), S2)}, authTwoRooms())
	e.requirePrepareKind(missing, location.KindConflict, "prepare with a missing participant")
	reserved := e.AGG("AG1", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g0"), R.Creating), fixture.NewOwnerPart(fixture.KS("g2"), S2)}, authTwoRooms())
	e.requirePrepareKind(reserved, location.KindConflict, "prepare with a reserved participant")
	stale := e.AGG("AG1", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S2), fixture.NewOwnerPart(fixture.KS("g2"), S2)}, authTwoRooms())
	e.requirePrepareKind(stale, location.KindConflict, "prepare with a stale participant version")
	suffixed := e.AGG("AG1", 1, []fixture.Part{{Key: fixture.KS("g1"), Version: S1.StoreVersion + "0", Transition: location.TransitionNewOwner}, fixture.NewOwnerPart(fixture.KS("g2"), S2)}, authTwoRooms())
	e.requirePrepareKind(suffixed, location.KindConflict, "prepare with a participant version that only starts like the row's")
}

// auth162 AUTH-162 Preserve participant needs a live owner.
func auth162(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	e.release(e.A)
	req := e.AGG("AG1", 1, []fixture.Part{fixture.PreservePart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("g2"), S2)}, fixture.VS("room"))
	e.requirePrepareKind(req, location.KindConflict, "prepare with a dead preserve participant")
}

// auth163 AUTH-163 Capacity must equal the moved sum.
func auth163(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	req := e.auth156Request(S1, S2)
	req.Capacity = fixture.VSpots(location.ObjectUserSpot, "room", 3)
	e.requirePrepareKind(req, location.KindConflict, "prepare with a capacity that is not the moved sum")
}

// auth164 AUTH-164 [quirk] Preserve-only aggregate (D-04 kept).
func auth164(c *Case) {
	e := newAuthEnv(c)
	S1, _ := e.aggRows()
	parts := []fixture.Part{fixture.PreservePart(fixture.KS("g1"), S1)}
	e.requirePrepareInvalid(e.AGG("AG1", 1, parts, location.CapacityVector{}), location.ClassRange, location.CodeAuthorityCapacity, "a preserve-only aggregate with capacity {}")
	e.requirePrepareKind(e.AGG("AG1", 1, parts, fixture.VS("room")), location.KindConflict, "a preserve-only aggregate with capacity VS(room)")
}

// auth165 AUTH-165 Target capacity insufficient (D-23 kept: conflict).
func auth165(c *Case) {
	e := newAuthEnv(c, authWithNB(func(l *fixture.Limits) { l.Spots = 1 }))
	S1, S2 := e.aggRows()
	e.requirePrepareKind(e.auth156Request(S1, S2), location.KindConflict, "prepare onto a full target")
}

// auth166 AUTH-166 [newer] Adopting a relocation reservation.
func auth166(c *Case) {
	e := newAuthEnv(c)
	e.auth166Setup()
	require.Equal(c, int64(2), e.U(e.NB).Spots.Reserved)
	require.Equal(c, int64(2), e.U(e.NB).Room.Reserved)
	e.requireAbortRelKind("AG2", location.KindStale, "abortRelocationCapacity of an adopted reservation")
}

// auth167 AUTH-167 [newer] Non-matching reservation is not adopted.
func auth167(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	e.REL("AG3", fixture.KS("g1"), S1, e.NA, e.NB)
	req := e.AGG("AG3", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("g2"), S2)}, authTwoRooms())
	e.requirePrepared(e.prepare(req), req, location.KindPrepared)
	require.Equal(c, int64(3), e.U(e.NB).Spots.Reserved)
	require.Equal(c, int64(3), e.U(e.NB).Room.Reserved)
	require.Equal(c, location.KindAborted, e.abortRel("AG3"))
	require.Equal(c, int64(2), e.U(e.NB).Spots.Reserved)
	require.Equal(c, int64(2), e.U(e.NB).Room.Reserved)
}

// auth168 AUTH-168 [quirk] Two spot types (D-23 kept: invalid argument).
func auth168(c *Case) {
	e := newAuthEnv(c)
	S1, _ := e.aggRows()
	H := e.AS("h1", e.TA(), "hall")
	req := e.AGG("AG1", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("h1"), H)}, authTwoRooms())
	e.requirePrepareInvalid(req, location.ClassType, location.CodeAggregateSpotTypes, "prepare moving two spot types")
}

// auth169 AUTH-169 Re-prepare after commit (D-25 kept: stale).
func auth169(c *Case) {
	e := newAuthEnv(c)
	_, _, req := e.auth156Setup()
	require.Equal(c, location.KindCommitted, e.commitAgg(authAggFence("AG1", 1)))
	e.requirePrepareKind(req, location.KindStale, "prepare after commit")
}

// auth170 AUTH-170 Re-prepare after abort (D-25 kept: conflict).
func auth170(c *Case) {
	e := newAuthEnv(c)
	_, _, req := e.auth156Setup()
	require.Equal(c, location.KindAborted, e.abortAgg(authAggFence("AG1", 1)))
	e.requirePrepareKind(req, location.KindConflict, "prepare after abort")
	gen2 := req
	gen2.AggregateGeneration = 2
	e.requirePrepareKind(gen2, location.KindPrepared, "prepare generation 2")
}

// auth171 AUTH-171 Mixed transitions.
func auth171(c *Case) {
	e := newAuthEnv(c)
	u := e.U(e.NB)
	e.auth171Setup()
	u = u.plusRooms(1, 0)
	e.requireU(e.NB, u)
}

// auth172 AUTH-172 [quirk] Participants are not locked (D-26 kept).
func auth172(c *Case) {
	e := newAuthEnv(c)
	S1, _, _ := e.auth156Setup()
	u := e.U(e.NB)
	e.requireStored(e.cas(fixture.KS("g1"), S1.StoreVersion, fixture.Preserve("changed")))
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindStale, "commit after a participant changed")
	e.requireAggKind(e.abortAgg, authAggFence("AG1", 1), location.KindAborted, "abort")
	u = u.plusRooms(-2, 0)
	e.requireU(e.NB, u)
	require.Zero(c, u.Spots.Reserved)
}

// auth173 AUTH-173 Commit the move.
func auth173(c *Case) {
	e := newAuthEnv(c)
	S1, S2, _ := e.auth156Setup()
	ua, ub := e.U(e.NA), e.U(e.NB)
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindCommitted, "commitAggregate")
	for i, S := range []*location.AuthoritySnapshot{S1, S2} {
		key := fixture.KS([]string{"g1", "g2"}[i])
		got := e.read(key).Snapshot
		require.NotNil(c, got)
		require.Equal(c, e.B, got.Owner)
		require.Equal(c, location.PlacementAllocation{
			State: location.AllocationActive, ObjectKind: location.ObjectUserSpot, StableType: "room",
			Descriptor: e.NB.Key(), DescriptorLifecycleGeneration: 1, Capacity: fixture.VS("room"),
		}, got.Allocation)
		require.Equal(c, S.ObjectGeneration, got.ObjectGeneration)
		require.Greater(c, got.AuthorityOwnerGeneration, S.AuthorityOwnerGeneration)
		require.Equal(c, []string{"agg-0", "agg-1"}[i], string(got.Payload))
		require.NotEqual(c, S.StoreVersion, got.StoreVersion)
		require.Nil(c, got.PendingCreation)
		e.exactVersion(got.StoreVersion, []string{"5", "6"}[i], "moved row")
		e.exactNumber(got.AuthorityOwnerGeneration, []int64{3, 4}[i], "moved authorityOwnerGeneration")
	}
	ua = ua.plusRooms(0, -2)
	e.requireU(e.NA, ua)
	ub = ub.plusRooms(-2, 2)
	e.requireU(e.NB, ub)
	require.Zero(c, ub.Spots.Reserved)
}

// auth174 AUTH-174 Replay.
func auth174(c *Case) {
	e := newAuthEnv(c)
	e.auth156Setup()
	require.Equal(c, location.KindCommitted, e.commitAgg(authAggFence("AG1", 1)))
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindAlreadyCommitted, "commitAggregate replay")
}

// auth175 AUTH-175 Unknown or aborted aggregate.
func auth175(c *Case) {
	e := newAuthEnv(c)
	e.requireAggKind(e.commitAgg, authAggFence("nope", 1), location.KindStale, "commit of an unknown aggregate")
	e.auth156Setup()
	require.Equal(c, location.KindAborted, e.abortAgg(authAggFence("AG1", 1)))
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindStale, "commit of an aborted aggregate")
}

// auth176 AUTH-176 Participant changed after prepare.
func auth176(c *Case) {
	e := newAuthEnv(c)
	_, S2, _ := e.auth156Setup()
	u := e.U(e.NB)
	e.requireStored(e.cas(fixture.KS("g2"), S2.StoreVersion, fixture.Preserve("changed")))
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindStale, "commit after a participant changed")
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindStale, "commit again")
	e.requireAggKind(e.abortAgg, authAggFence("AG1", 1), location.KindAborted, "abort")
	u = u.plusRooms(-2, 0)
	e.requireU(e.NB, u)
	require.Zero(c, u.Spots.Reserved)
}

// requireCommitAfterRelease releases owner's lease, then requires
// commitAggregate(AG1, 1) to answer want.
func (e *authEnv) requireCommitAfterRelease(owner location.OwnerToken, want location.ResultKind, what string) {
	e.c.Helper()
	e.release(owner)
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), want, what)
}

// auth177 AUTH-177 Target no longer live.
func auth177(c *Case) {
	e := newAuthEnv(c)
	e.auth156Setup()
	e.requireCommitAfterRelease(e.B, location.KindStale, "commit onto a released target")
}

// auth178 AUTH-178 Preserve participant's owner gone.
func auth178(c *Case) {
	e := newAuthEnv(c)
	e.auth171Setup()
	e.requireCommitAfterRelease(e.A, location.KindStale, "commit with a dead preserve participant")
}

// auth179 AUTH-179 [hook] Exhaustion boundary: two participants need two
// versions and two owner generations. The hook sets the last issued value,
// and commitAggregate needs counter + participants ≤ MAX (04 §1.4, the
// reference's check), so the boundary is current MAX−1 (one issue left:
// generationExhausted) and MAX−2 (exactly two left: committed). The
// catalogue's 2^63-2 / 2^63-3 is one off (the hook scenarios were not run
// against the reference); this follows the reference.
func auth179(c *Case) {
	e := newAuthEnv(c)
	e.auth156Setup()
	g3, g4 := e.AS("g3", e.TA()), e.AS("g4", e.TA())
	second := e.AGG("AG9", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g3"), g3), fixture.NewOwnerPart(fixture.KS("g4"), g4)}, authTwoRooms())
	e.requirePrepared(e.prepare(second), second, location.KindPrepared)

	e.setCounters(authI64(location.MaxGeneration-1), nil, nil)
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindGenerationExhausted, "commit with one version too few")
	e.setCounters(authI64(location.MaxGeneration-2), nil, nil)
	e.requireAggKind(e.commitAgg, authAggFence("AG1", 1), location.KindCommitted, "commit with exactly enough versions")
	e.exactVersion(e.read(fixture.KS("g2")).Snapshot.StoreVersion, "9223372036854775807", "the last version issued")

	e.setCounters(authI64(1<<62), nil, authI64(location.MaxGeneration-1))
	e.requireAggKind(e.commitAgg, authAggFence("AG9", 1), location.KindGenerationExhausted, "commit with one owner generation too few")
	e.setCounters(nil, nil, authI64(location.MaxGeneration-2))
	e.requireAggKind(e.commitAgg, authAggFence("AG9", 1), location.KindCommitted, "commit with exactly enough owner generations")
	require.Equal(c, location.MaxGeneration, e.read(fixture.KS("g4")).Snapshot.AuthorityOwnerGeneration, "the last owner generation issued")
}

// auth180 AUTH-180 [newer] Adopted reservation follows the aggregate.
func auth180(c *Case) {
	e := newAuthEnv(c)
	e.auth166Setup()
	require.Equal(c, location.KindCommitted, e.commitAgg(authAggFence("AG2", 1)))
	e.requireAbortRelKind("AG2", location.KindAlreadyCommitted, "abortRelocationCapacity after the aggregate committed")
	u := e.U(e.NB)
	require.Equal(c, authSlot{Active: 2}, u.Spots)
	require.Equal(c, authSlot{Active: 2}, u.Room)
}

// auth181 AUTH-181 Preserve participant in a committed aggregate.
func auth181(c *Case) {
	e := newAuthEnv(c)
	S1, S2, _ := e.auth171Setup()
	require.Equal(c, location.KindCommitted, e.commitAgg(authAggFence("AG1", 1)))
	g1 := e.read(fixture.KS("g1")).Snapshot
	require.Equal(c, "agg-0", string(g1.Payload))
	require.Equal(c, e.A, g1.Owner)
	require.Equal(c, S1.AuthorityOwnerGeneration, g1.AuthorityOwnerGeneration)
	require.Equal(c, S1.Allocation, g1.Allocation)
	require.NotEqual(c, S1.StoreVersion, g1.StoreVersion)
	e.exactVersion(g1.StoreVersion, "5", "the preserved participant")
	g2 := e.read(fixture.KS("g2")).Snapshot
	require.Equal(c, e.B, g2.Owner)
	require.Equal(c, e.NB.Key(), g2.Allocation.Descriptor)
	require.Greater(c, g2.AuthorityOwnerGeneration, S2.AuthorityOwnerGeneration)
	e.exactNumber(g2.AuthorityOwnerGeneration, 3, "the moved participant's authorityOwnerGeneration")
	require.Equal(c, "agg-1", string(g2.Payload))
	ua := e.U(e.NA)
	require.Equal(c, authSlot{Active: 1}, ua.Spots, "U(NA): the preserved row stays")
	require.Equal(c, authSlot{Active: 1}, e.U(e.NB).Spots, "U(NB): the moved row arrives")
}

// auth182 AUTH-182 Source owner may be dead.
func auth182(c *Case) {
	e := newAuthEnv(c)
	e.auth156Setup()
	e.requireCommitAfterRelease(e.A, location.KindCommitted, "commit with a dead source owner")
}

// auth183 AUTH-183 Abort a prepared aggregate.
func auth183(c *Case) {
	e := newAuthEnv(c)
	u := e.U(e.NB)
	S1, S2, _ := e.auth156Setup()
	e.requireAggKind(e.abortAgg, authAggFence("AG1", 1), location.KindAborted, "abortAggregate")
	e.requireU(e.NB, u)
	e.requireRow(fixture.KS("g1"), S1)
	e.requireRow(fixture.KS("g2"), S2)
}

// auth184 AUTH-184 Abort twice.
func auth184(c *Case) {
	e := newAuthEnv(c)
	e.auth156Setup()
	require.Equal(c, location.KindAborted, e.abortAgg(authAggFence("AG1", 1)))
	e.requireAggKind(e.abortAgg, authAggFence("AG1", 1), location.KindAlreadyAborted, "abortAggregate twice")
}

// auth185 AUTH-185 Abort a committed or unknown aggregate.
func auth185(c *Case) {
	e := newAuthEnv(c)
	e.auth156Setup()
	require.Equal(c, location.KindCommitted, e.commitAgg(authAggFence("AG1", 1)))
	e.requireAggKind(e.abortAgg, authAggFence("AG1", 1), location.KindStale, "abort of a committed aggregate")
	e.requireAggKind(e.abortAgg, authAggFence("nope", 1), location.KindStale, "abort of an unknown aggregate")
}

// auth186 AUTH-186 [newer] Adopted reservation is released once.
func auth186(c *Case) {
	e := newAuthEnv(c)
	e.auth166Setup()
	e.requireAggKind(e.abortAgg, authAggFence("AG2", 1), location.KindAborted, "abortAggregate")
	e.requireAbortRelKind("AG2", location.KindAlreadyAborted, "abortRelocationCapacity after the aggregate aborted")
	require.Zero(c, e.U(e.NB).Spots.Reserved)
	require.Zero(c, e.U(e.NB).Room.Reserved)
}
