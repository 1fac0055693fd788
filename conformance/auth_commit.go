package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section L of the authority catalogue: commit of a spot creation (04 §2.5).

// authOtherReservationID is a well-formed reservation id never issued.
const authOtherReservationID = "00000000-0000-4000-8000-000000000000"

// requireCommitStale requires stale and no change.
func (e *authEnv) requireCommitStale(r location.CommitRequest, what string) {
	e.c.Helper()
	e.unchanged(what, func() {
		e.requireCommitKind(e.commit(r), location.KindStale)
	})
}

// auth096 AUTH-096 Commit a reservation; the key's spot kind may be either
// spot kind (D-28).
func auth096(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k1", e.TA())
	u := e.U(e.NA)
	ready := e.requireCommitKind(e.commit(fixture.CommitRequest("k1", R, e.TA())), location.KindCommitted)
	require.Equal(c, location.AllocationActive, ready.Allocation.State)
	require.Equal(c, "ready", string(ready.Payload))
	require.Nil(c, ready.PendingCreation)
	require.NotEqual(c, R.Creating.StoreVersion, ready.StoreVersion)
	e.exactVersion(ready.StoreVersion, "2", "committed row")
	require.Equal(c, R.Creating.ObjectGeneration, ready.ObjectGeneration)
	require.Equal(c, R.Creating.AuthorityOwnerGeneration, ready.AuthorityOwnerGeneration)
	want := *authNoVersion(R.Creating)
	want.Payload = []byte("ready")
	want.Allocation.State = location.AllocationActive
	want.PendingCreation = nil
	authRequireSameSnap(c, &want, authNoVersion(ready), "committed row")
	e.requireRow(fixture.KS("k1"), ready)
	u = u.plusRooms(-1, 1)
	e.requireU(e.NA, u)
	// User and instance spots share the row (D-28): a commit that names the
	// instance-spot kind commits a user-spot reservation.
	R2 := e.RS("k1b", e.TA())
	other := fixture.CommitRequest("k1b", R2, e.TA())
	other.Key.Kind = location.ObjectInstanceSpot
	e.requireCommitKind(e.commit(other), location.KindCommitted)
}

// auth097 AUTH-097 Replay.
func auth097(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k1", e.TA())
	ready := e.requireCommitKind(e.commit(fixture.CommitRequest("k1", R, e.TA())), location.KindCommitted)
	e.unchanged("a replayed commit", func() {
		again := e.requireCommitKind(e.commit(fixture.CommitRequest("k1", R, e.TA())), location.KindAlreadyCommitted)
		authRequireSameSnap(c, ready, again, "alreadyCommitted.ready")
	})
}

// auth098 AUTH-098 Actors must use completeCreation.
func auth098(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("k2", e.TA())
	req := fixture.CommitRequest("k2", R, e.TA())
	req.Key.Kind = location.ObjectActor
	e.requireInvalid("commit of an actor", location.ClassType, location.CodeAuthorityKindPath, func() error { return errOf(c.S.Commit(c.Ctx, req)) })
	e.requireRow(fixture.KA("k2"), R.Creating)
}

// auth099 AUTH-099 Ready payload too large.
func auth099(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k99", e.TA())
	req := fixture.CommitRequest("k99", R, e.TA())
	req.ReadyPayload = fixture.Bytes(fixture.MiB+1, 'r')
	e.requireInvalid("commit with an oversized payload", location.ClassRange, location.CodeAuthorityPayload, func() error { return errOf(c.S.Commit(c.Ctx, req)) })
	e.requireRow(fixture.KS("k99"), R.Creating)
}

// auth100 AUTH-100 Wrong reservation id.
func auth100(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k100", e.TA())
	req := fixture.CommitRequest("k100", R, e.TA())
	req.ReservationID = authOtherReservationID
	e.requireCommitStale(req, "commit with another reservation id")
}

// auth101 AUTH-101 Wrong expected version.
func auth101(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k101", e.TA())
	other := e.RS("k101x", e.TA())
	req := fixture.CommitRequest("k101", R, e.TA())
	req.ExpectedStoreVersion = other.Creating.StoreVersion
	e.requireCommitStale(req, "commit with a wrong version")
}

// auth102 AUTH-102 Target mismatch.
func auth102(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k102", e.TA())
	edits := map[string]func(t *location.CreationTarget){
		"lifecycle 2":       func(t *location.CreationTarget) { t.NodeLifecycleGeneration = 2 },
		"owner B":           func(t *location.CreationTarget) { t.Owner = e.B },
		"RID node-b":        func(t *location.CreationTarget) { t.NodeRID = "node-b" },
		"mesh other":        func(t *location.CreationTarget) { t.MeshName = "other" },
		"another lease gen": func(t *location.CreationTarget) { t.Owner.LeaseGeneration += 100 },
	}
	for name, edit := range edits {
		T := e.TA()
		edit(&T)
		e.requireCommitStale(fixture.CommitRequest("k102", R, T), "commit with target "+name)
	}
	e.requireRow(fixture.KS("k102"), R.Creating)
}

// auth103 AUTH-103 Target no longer live.
func auth103(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k3", e.TA())
	e.release(e.A)
	e.requireCommitStale(fixture.CommitRequest("k3", R, e.TA()), "commit on a released owner")
	require.Equal(c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectUserSpot, "k3", R, e.TA())))
}

// auth104 AUTH-104 Commit after abort.
func auth104(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k104", e.TA())
	require.Equal(c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectUserSpot, "k104", R, e.TA())))
	e.requireCommitStale(fixture.CommitRequest("k104", R, e.TA()), "commit after abort")
}

// auth105 AUTH-105 Commit after owner removal.
func auth105(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k4", e.TA())
	require.Positive(c, e.removeAll(e.A))
	e.requireCommitStale(fixture.CommitRequest("k4", R, e.TA()), "commit after removeAllByOwner")
}

// auth106 AUTH-106 [quirk] Old replay after re-creation: D-05 is fixed (the
// row's own reservation must match), so the ALT outcome, stale, is expected.
func auth106(c *Case) {
	e := newAuthEnv(c)
	R1 := e.RS("k5", e.TA())
	S1 := e.requireCommitKind(e.commit(fixture.CommitRequest("k5", R1, e.TA())), location.KindCommitted)
	e.requireDeleted(e.cas(fixture.KS("k5"), S1.StoreVersion, fixture.Delete()))
	e.AS("k5", e.TA())
	e.requireCommitStale(fixture.CommitRequest("k5", R1, e.TA()), "an old commit replayed over a new incarnation")
}

// auth107 AUTH-107 [hook] Versions exhausted.
func auth107(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("k6", e.TA())
	e.setCounters(authI64(location.MaxGeneration), nil, nil)
	e.unchanged("commit with exhausted versions", func() {
		e.requireCommitKind(e.commit(fixture.CommitRequest("k6", R, e.TA())), location.KindGenerationExhausted)
	})
	e.requireRow(fixture.KS("k6"), R.Creating)
}
