package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section O of the authority catalogue: abort of a creation reservation
// (04 §2.8).

// requireAbortKind requires abort to answer k; every answer but aborted
// changes nothing.
func (e *authEnv) requireAbortKind(r location.AbortRequest, k location.ResultKind, what string) {
	e.c.Helper()
	if k == location.KindAborted {
		require.Equal(e.c, k, e.abort(r), what)
		return
	}
	e.unchanged(what, func() {
		require.Equal(e.c, k, e.abort(r), what)
	})
}

// auth132 AUTH-132 Abort a reservation.
func auth132(c *Case) {
	e := newAuthEnv(c)
	u := e.U(e.NA)
	R := e.RS("x1", e.TA())
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "x1", R, e.TA()), location.KindAborted, "abort")
	e.requireMissing(fixture.KS("x1"))
	e.requireU(e.NA, u)
	next := e.RS("x1b", e.TA())
	e.exactVersion(next.Creating.StoreVersion, "2", "the reservation after an abort (an abort issues no version)")
}

// auth133 AUTH-133 Replay.
func auth133(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("x1", e.TA())
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "x1", R, e.TA()), location.KindAborted, "abort")
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "x1", R, e.TA()), location.KindAlreadyAborted, "abort replay")
}

// auth134 AUTH-134 No liveness needed.
func auth134(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("x2", e.TA())
	e.release(e.A)
	e.removeNode(e.NA, e.A)
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "x2", R, e.TA()), location.KindAborted, "abort on a released owner's removed node")
}

// auth135 AUTH-135 Mismatches.
func auth135(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("x5", e.TA())
	other := e.RS("x5x", e.TA())
	wrongVersion := fixture.AbortRequest(location.ObjectUserSpot, "x5", R, e.TA())
	wrongVersion.ExpectedStoreVersion = other.Creating.StoreVersion
	wrongID := fixture.AbortRequest(location.ObjectUserSpot, "x5", R, e.TA())
	wrongID.ReservationID = authOtherReservationID
	T := e.TA()
	T.NodeLifecycleGeneration = 2
	wrongTarget := fixture.AbortRequest(location.ObjectUserSpot, "x5", R, T)
	e.requireAbortKind(wrongVersion, location.KindStale, "abort with a wrong version")
	e.requireAbortKind(wrongID, location.KindStale, "abort with a wrong reservation id")
	e.requireAbortKind(wrongTarget, location.KindStale, "abort with target lifecycle 2")
	e.requireRow(fixture.KS("x5"), R.Creating)
}

// auth136 AUTH-136 Abort after commit.
func auth136(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("x3", e.TA())
	S := e.requireCommitKind(e.commit(fixture.CommitRequest("x3", R, e.TA())), location.KindCommitted)
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "x3", R, e.TA()), location.KindStale, "abort after commit")
	e.requireRow(fixture.KS("x3"), S)
}

// auth137 AUTH-137 Actors.
func auth137(c *Case) {
	e := newAuthEnv(c)
	u := e.U(e.NA)
	R := e.RA("x4", e.TA())
	e.requireAbortKind(fixture.AbortRequest(location.ObjectActor, "x4", R, e.TA()), location.KindAborted, "abort of an actor")
	e.requireU(e.NA, u)
	e.requireMissing(fixture.KA("x4"))
}

// auth138 AUTH-138 [quirk] Replay under another key: alreadyAborted for any
// key (D-22 kept); an invalid key is an invalid argument (D-22 fixed:
// validate the key first).
func auth138(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("x1", e.TA())
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "x1", R, e.TA()), location.KindAborted, "abort")
	e.requireAbortKind(fixture.AbortRequest(location.ObjectActor, "other", R, e.TA()), location.KindAlreadyAborted, "abort replay under another key")
	e.requireInvalid("abort replay with an invalid key", location.ClassRange, location.CodeAuthorityIdentityLength, func() error {
		return errOf(c.S.AbortCreation(c.Ctx, fixture.AbortRequest(location.ObjectUserSpot, "", R, e.TA())))
	})
}

// auth139 AUTH-139 Abort after a rejected completion.
func auth139(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a2", e.TA())
	e.requireCompleteKind(e.complete(fixture.CompleteRequest("a2", R, e.TA(), location.TerminalRejected, fixture.P(fixture.OP(2), authDeadline()))), location.KindRejected)
	e.rememberOp(fixture.OP(2))
	e.requireAbortKind(fixture.AbortRequest(location.ObjectActor, "a2", R, e.TA()), location.KindStale, "abort after a rejected completion")
}
