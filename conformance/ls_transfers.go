package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section J: actor transfers (LS-170 … LS-189). A-26 (re-prepare
// ignores content) and A-27 (an expired recovery owner keeps its rights) are
// reproduced.

// lsPrepared prepares r and requires a stored prepared record.
func lsPrepared(l *lsCase, r location.ActorTransferPrepareRequest) location.ActorTransferRecord {
	l.Helper()
	res := l.prepare(r)
	l.expectXferStatus(res, location.TransferStored, "prepare %s", r.TransferID)
	l.expectSameRow(fixture.XferRecord(r, l.now()), *res.Record, "prepared record")
	return *res.Record
}

// lsMoved runs a transition and requires a stored record in the state.
func lsMoved(l *lsCase, t lsTransition, r location.ActorTransferPrepareRequest, owner string, state location.TransferState) location.ActorTransferRecord {
	l.Helper()
	res := l.move(t, fixture.XferRef(r), owner)
	l.expectXferStatus(res, location.TransferStored, "%s %s", t, r.TransferID)
	require.Equalf(l, state, res.Record.State, "%s %s: state", t, r.TransferID)
	l.expectTime(res.Record.UpdatedAt, l.now(), "%s %s: updatedAt", t, r.TransferID)
	return *res.Record
}

// ls170 checks LS-170 "Prepare" (J. Actor transfers): the prepared record
// copies the request and gives the recovery owner its lease.
func ls170(l *lsCase) {
	rec := lsPrepared(l, fixture.XFER())
	require.Equal(l, location.TransferPrepared, rec.State)
	require.Equal(l, "recovery-a", rec.RecoveryOwnerID)
	l.expectTime(rec.RecoveryLeaseExpiresAt, lsAt(30*time.Second), "recoveryLeaseExpiresAt")
	l.expectTime(rec.UpdatedAt, T0(), "updatedAt")
	require.Equal(l, []location.RoutingID{"node-a", "node-b"}, rec.Participants)
	l.expectSameRow(&rec, l.resolveXfer(fixture.MeshGame, "actor-1"), "ResolveActorTransfer(game, actor-1)")
	lsEveryStampZero(l, fixture.MeshGame)
}

// ls171 checks LS-171 "Prepare validation" (J. Actor transfers).
func ls171(l *lsCase) {
	for _, c := range []struct {
		what  string
		edit  func(*location.ActorTransferPrepareRequest)
		class location.ErrorClass
	}{
		{`meshName "  "`, func(r *location.ActorTransferPrepareRequest) { r.MeshName = "  " }, location.ClassType},
		{`actorId ""`, func(r *location.ActorTransferPrepareRequest) { r.ActorID = "" }, location.ClassType},
		{"upper-case transferId", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "01234567-89AB-CDEF-0123-456789ABCDEF" }, location.ClassType},
		{"transferId not-a-uuid", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "not-a-uuid" }, location.ClassType},
		{"transferId in braces", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "{" + fixture.XferID + "}" }, location.ClassType},
		{`recoveryOwnerId " "`, func(r *location.ActorTransferPrepareRequest) { r.RecoveryOwnerID = " " }, location.ClassType},
		{"TTL 0", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = 0 }, location.ClassType},
		{"TTL -1 ms", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = -time.Millisecond }, location.ClassType},
		{"expectedActorGeneration 0", func(r *location.ActorTransferPrepareRequest) { r.ExpectedActorGeneration = 0 }, location.ClassRange},
		{"expectedMembershipEpoch 0", func(r *location.ActorTransferPrepareRequest) { r.ExpectedMembershipEpoch = 0 }, location.ClassRange},
		{"no participants", func(r *location.ActorTransferPrepareRequest) { r.Participants = nil }, location.ClassType},
	} {
		r := fixture.XFER()
		c.edit(&r)
		before := l.snap()
		_, err := l.S.PrepareActorTransfer(l.Ctx, r)
		l.expectInputError(err, c.class, "prepare with %s", c.what)
		require.Nilf(l, l.resolveXfer(fixture.MeshGame, "actor-1"), "prepare with %s: nothing stored", c.what)
		l.noEffect(before, "prepare with %s", c.what)
	}
}

// ls172 checks LS-172 "Idempotent re-prepare ignores content" (J. Actor
// transfers; A-26 reproduced).
func ls172(l *lsCase) {
	rec := lsPrepared(l, fixture.XFER())
	l.setClock(time.Second)
	r := fixture.XFER()
	r.RecoveryOwnerID = "recovery-z"
	r.Participants = []location.RoutingID{"node-z"}
	res := l.prepare(r)
	l.expectXferStatus(res, location.TransferStored, "re-prepare with other content")
	l.expectSameRow(rec, *res.Record, "the original record")
	l.expectSameRow(&rec, l.resolveXfer(fixture.MeshGame, "actor-1"), "resolve")
}

// ls173 checks LS-173 "A second transfer while one is active" (J. Actor
// transfers).
func ls173(l *lsCase) {
	rec := lsPrepared(l, fixture.XFER())
	l.expectXferStatus(l.prepare(fixture.XFER2()), location.TransferRejectedConflict, "prepare XFER2 while XFER is active")
	l.expectSameRow(&rec, l.resolveXfer(fixture.MeshGame, "actor-1"), "resolve")
}

// ls174 checks LS-174 "Same id while committed" (J. Actor transfers).
func ls174(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	lsMoved(l, trCommit, fixture.XFER(), "recovery-a", location.TransferCommitted)
	l.expectXferStatus(l.prepare(fixture.XFER()), location.TransferRejectedConflict, "re-prepare a committed transfer")
}

// ls175 checks LS-175 "Commit" (J. Actor transfers): only the recovery owner
// commits a prepared transfer, once.
func ls175(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	ref := fixture.XferRef(fixture.XFER())
	l.expectXferStatus(l.move(trCommit, ref, "wrong"), location.TransferRejectedConflict, "commit by the wrong recovery owner")
	l.setClock(time.Second)
	rec := lsMoved(l, trCommit, fixture.XFER(), "recovery-a", location.TransferCommitted)
	l.expectTime(rec.UpdatedAt, lsAt(time.Second), "updatedAt")
	l.expectTime(rec.RecoveryLeaseExpiresAt, lsAt(30*time.Second), "recoveryLeaseExpiresAt unchanged")
	l.expectSameRow(&rec, l.resolveXfer(fixture.MeshGame, "actor-1"), "resolve shows committed")
	l.expectXferStatus(l.move(trCommit, ref, "recovery-a"), location.TransferInvalidState, "commit again")
}

// lsActivated prepares, commits and activates XFER.
func lsActivated(l *lsCase) {
	l.Helper()
	lsPrepared(l, fixture.XFER())
	ref := fixture.XferRef(fixture.XFER())
	l.expectXferStatus(l.move(trActivate, ref, "recovery-a"), location.TransferInvalidState, "activate a prepared transfer")
	lsMoved(l, trCommit, fixture.XFER(), "recovery-a", location.TransferCommitted)
	lsMoved(l, trActivate, fixture.XFER(), "recovery-a", location.TransferActivated)
	require.Nil(l, l.resolveXfer(fixture.MeshGame, "actor-1"), "an activated transfer is not active")
	for _, t := range lsTransitions() {
		l.expectXferStatus(l.move(t, ref, "recovery-a"), location.TransferNotFound, "%s after activation", t)
	}
}

// ls176 checks LS-176 "Activate" (J. Actor transfers): only a committed
// transfer activates, which frees the slot.
func ls176(l *lsCase) { lsActivated(l) }

// ls177 checks LS-177 "Abort" (J. Actor transfers): a prepared transfer aborts
// and frees the slot; a committed one does not.
func ls177(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	lsMoved(l, trAbort, fixture.XFER(), "recovery-a", location.TransferAborted)
	require.Nil(l, l.resolveXfer(fixture.MeshGame, "actor-1"))
	lsPrepared(l, fixture.XFER2())
	lsMoved(l, trCommit, fixture.XFER2(), "recovery-a", location.TransferCommitted)
	l.expectXferStatus(l.move(trAbort, fixture.XferRef(fixture.XFER2()), "recovery-a"), location.TransferInvalidState, "abort a committed transfer")
}

// ls178 checks LS-178 "New transfer after completion" (J. Actor transfers).
func ls178(l *lsCase) {
	lsActivated(l)
	rec := lsPrepared(l, fixture.XFER2())
	l.expectSameRow(&rec, l.resolveXfer(fixture.MeshGame, "actor-1"), "resolve returns XFER2")
}

// ls179 checks LS-179 "Re-preparing a finished id" (J. Actor transfers).
func ls179(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	lsMoved(l, trAbort, fixture.XFER(), "recovery-a", location.TransferAborted)
	l.setClock(time.Second)
	rec := lsPrepared(l, fixture.XFER())
	l.expectTime(rec.UpdatedAt, lsAt(time.Second), "a fresh record")
	l.expectSameRow(&rec, l.resolveXfer(fixture.MeshGame, "actor-1"), "resolve")
}

// ls180 checks LS-180 "Unknown transfers" (J. Actor transfers).
func ls180(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	for _, t := range lsTransitions() {
		l.expectXferStatus(l.move(t, fixture.XferRef(fixture.XFER2()), "recovery-a"), location.TransferNotFound, "%s of XFER2's id", t)
		ref := fixture.XferRef(fixture.XFER())
		ref.ActorID = "actor-9"
		l.expectXferStatus(l.move(t, ref, "recovery-a"), location.TransferNotFound, "%s on (game, actor-9)", t)
	}
	l.expectXferStatus(l.takeOver(fixture.XferRef(fixture.XFER2()), "recovery-b", lsTTL), location.TransferNotFound, "takeover of an unknown id")
}

// lsTakenOver is LS-181: XFER prepared at T0, taken over by recovery-b at
// T0+30 s.
func lsTakenOver(l *lsCase) {
	l.Helper()
	lsPrepared(l, fixture.XFER())
	ref := fixture.XferRef(fixture.XFER())
	l.setClock(29999 * time.Millisecond)
	l.expectXferStatus(l.takeOver(ref, "recovery-b", 30000*time.Millisecond), location.TransferRejectedConflict, "takeover before expiry")
	l.setClock(30 * time.Second)
	res := l.takeOver(ref, "recovery-b", 30000*time.Millisecond)
	l.expectXferStatus(res, location.TransferStored, "takeover at expiry")
	want := fixture.XferRecord(fixture.XFER(), T0())
	want.RecoveryOwnerID = "recovery-b"
	want.RecoveryLeaseExpiresAt = lsAt(60 * time.Second)
	want.UpdatedAt = lsAt(30 * time.Second)
	l.expectSameRow(want, *res.Record, "taken-over record")
	l.expectSameRow(&want, l.resolveXfer(fixture.MeshGame, "actor-1"), "the taken-over transfer is still the slot's active one")
}

// ls181 checks LS-181 "Takeover timing" (J. Actor transfers).
func ls181(l *lsCase) { lsTakenOver(l) }

// ls182 checks LS-182 "After takeover" (J. Actor transfers).
func ls182(l *lsCase) {
	lsTakenOver(l)
	l.expectXferStatus(l.move(trCommit, fixture.XferRef(fixture.XFER()), "recovery-a"), location.TransferRejectedConflict, "commit by the former recovery owner")
	lsMoved(l, trCommit, fixture.XFER(), "recovery-b", location.TransferCommitted)
}

// ls183 checks LS-183 "Takeover of a committed transfer" (J. Actor transfers).
func ls183(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	lsMoved(l, trCommit, fixture.XFER(), "recovery-a", location.TransferCommitted)
	l.setClock(30 * time.Second)
	res := l.takeOver(fixture.XferRef(fixture.XFER()), "recovery-b", lsTTL)
	l.expectXferStatus(res, location.TransferStored, "takeover of a committed transfer")
	require.Equal(l, location.TransferCommitted, res.Record.State)
	require.Equal(l, "recovery-b", res.Record.RecoveryOwnerID)
}

// ls184 checks LS-184 "Takeover of finished transfers" (J. Actor transfers).
func ls184(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	lsMoved(l, trCommit, fixture.XFER(), "recovery-a", location.TransferCommitted)
	lsMoved(l, trActivate, fixture.XFER(), "recovery-a", location.TransferActivated)
	l.expectXferStatus(l.takeOver(fixture.XferRef(fixture.XFER()), "recovery-b", lsTTL), location.TransferInvalidState, "takeover of an activated transfer")
	lsPrepared(l, fixture.XFER2())
	lsMoved(l, trAbort, fixture.XFER2(), "recovery-a", location.TransferAborted)
	l.expectXferStatus(l.takeOver(fixture.XferRef(fixture.XFER2()), "recovery-b", lsTTL), location.TransferInvalidState, "takeover of an aborted transfer")
}

// ls185 checks LS-185 "Takeover validation" (J. Actor transfers).
func ls185(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	before := l.snap()
	for _, c := range []struct {
		what      string
		edit      func(*location.ActorTransferRef)
		successor string
		ttl       time.Duration
	}{
		{`successor " "`, nil, " ", lsTTL},
		{"TTL 0", nil, "recovery-b", 0},
		{"upper-case transferId", func(r *location.ActorTransferRef) { r.TransferID = "01234567-89AB-CDEF-0123-456789ABCDEF" }, "recovery-b", lsTTL},
		{`meshName ""`, func(r *location.ActorTransferRef) { r.MeshName = "" }, "recovery-b", lsTTL},
	} {
		ref := fixture.XferRef(fixture.XFER())
		if c.edit != nil {
			c.edit(&ref)
		}
		_, err := l.S.TakeOverActorTransfer(l.Ctx, ref, c.successor, c.ttl)
		l.expectInputError(err, location.ClassType, "takeover with %s", c.what)
	}
	l.noEffect(before, "rejected takeovers")
}

// ls186 checks LS-186 "An expired recovery owner keeps its rights" (J. Actor
// transfers; A-27 reproduced).
func ls186(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	l.setClock(31 * time.Second)
	lsMoved(l, trCommit, fixture.XFER(), "recovery-a", location.TransferCommitted)
}

// ls187 checks LS-187 "Self-takeover after expiry" (J. Actor transfers).
func ls187(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	l.setClock(31 * time.Second)
	res := l.takeOver(fixture.XferRef(fixture.XFER()), "recovery-a", 10000*time.Millisecond)
	l.expectXferStatus(res, location.TransferStored, "self-takeover after expiry")
	l.expectTime(res.Record.RecoveryLeaseExpiresAt, lsAt(41*time.Second), "recoveryLeaseExpiresAt")
}

// ls188 checks LS-188 "Slots are independent" (J. Actor transfers).
func ls188(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	r := fixture.XFER2()
	r.ActorID = "actor-2"
	lsPrepared(l, r)
	r = fixture.XFER2()
	r.MeshName = "other"
	lsPrepared(l, r)
}

// ls189 checks LS-189 "Transition validation" (J. Actor transfers).
func ls189(l *lsCase) {
	lsPrepared(l, fixture.XFER())
	ref := fixture.XferRef(fixture.XFER())
	ref.TransferID = "01234567-89AB-CDEF-0123-456789ABCDEF"
	_, err := l.S.CommitActorTransfer(l.Ctx, ref, "recovery-a")
	l.expectInputError(err, location.ClassType, "commit with an upper-case transferId")
	ref = fixture.XferRef(fixture.XFER())
	ref.MeshName = ""
	_, err = l.S.CommitActorTransfer(l.Ctx, ref, "recovery-a")
	l.expectInputError(err, location.ClassType, `commit with meshName ""`)
	l.expectXferStatus(l.move(trCommit, fixture.XferRef(fixture.XFER()), ""), location.TransferRejectedConflict, `commit with recoveryOwnerId ""`)
}
