package conformance

import (
	"crypto/sha256"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Sections M and N of the authority catalogue: completeCreation of actors
// and readCreationTerminal (04 §1.7, §2.6, §2.7).

// authDeadline is the operation deadline of the catalogue's publications.
func authDeadline() time.Time { return T0().Add(60 * time.Second) }

// authRetention is how long a terminal stays readable after its deadline.
const authRetention = 5 * time.Minute

// requireTerminal checks a terminal record's fields (storeNow inside the
// record is the publication time and is not checked, D-14).
func (e *authEnv) requireTerminal(rec *location.TerminalRecord, state location.TerminalState, op location.OperationIdentity, reservationID string, expiresAt time.Time) {
	e.c.Helper()
	require.NotNil(e.c, rec, "terminal record")
	require.Equal(e.c, state, rec.State, "terminal state")
	require.Equal(e.c, op, rec.Operation, "terminal operation")
	require.Equal(e.c, reservationID, rec.ReservationID, "terminal reservation id")
	require.Equal(e.c, location.ObjectActor, rec.ObjectKind, "terminal object kind")
	require.Equal(e.c, "env", string(rec.TerminalEnvelope), "terminal envelope")
	require.Equal(e.c, fixture.EnvSHA(), rec.TerminalEnvelopeSHA256, "terminal digest")
	require.Equal(e.c, expiresAt, rec.ExpiresAt, "terminal expiresAt")
}

// requireCompleteKind requires a completion result of kind k.
func (e *authEnv) requireCompleteKind(res location.CompleteCreationResult, k location.ResultKind) {
	e.c.Helper()
	require.Equal(e.c, k, res.Kind, "completeCreation result")
	switch k {
	case location.KindCreated:
		require.NotNil(e.c, res.Ready)
		require.Equal(e.c, e.now(), res.Ready.StoreNow, "ready.storeNow")
		require.NotNil(e.c, res.Terminal)
	case location.KindRejected, location.KindFailed, location.KindAlreadyCompleted:
		require.Nil(e.c, res.Ready, "a %s completion carries no snapshot", k)
		require.NotNil(e.c, res.Terminal)
	default:
		require.Nil(e.c, res.Ready, "a %s completion carries no snapshot", k)
		require.Nil(e.c, res.Terminal, "a %s completion carries no terminal", k)
	}
}

// requireCompleteStale requires stale, no change, and no terminal for the
// request's operation.
func (e *authEnv) requireCompleteStale(r location.CompleteCreationRequest, what string) {
	e.c.Helper()
	e.rememberOp(r.Completion.Terminal.Operation)
	e.unchanged(what, func() {
		e.requireCompleteKind(e.complete(r), location.KindStale)
	})
	require.Equal(e.c, location.KindMissing, e.readTerminal(r.Completion.Terminal.Operation).Kind, "%s: no terminal", what)
}

// auth108Setup is AUTH-108: RA("a1") completed created with OP(1).
func (e *authEnv) auth108Setup() (location.ReserveResult, location.CompleteCreationResult) {
	e.c.Helper()
	return e.AA("a1", e.TA(), 1)
}

// auth108 AUTH-108 Created.
func auth108(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a1", e.TA())
	u := e.U(e.NA)
	res := e.complete(fixture.CompleteRequest("a1", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(1), authDeadline())))
	e.requireCompleteKind(res, location.KindCreated)
	require.Equal(c, location.AllocationActive, res.Ready.Allocation.State)
	require.Equal(c, "ready-actor", string(res.Ready.Payload))
	require.Nil(c, res.Ready.PendingCreation)
	require.NotEqual(c, R.Creating.StoreVersion, res.Ready.StoreVersion)
	e.exactVersion(res.Ready.StoreVersion, "2", "created row")
	e.requireRow(fixture.KA("a1"), res.Ready)
	e.requireTerminal(res.Terminal, location.TerminalCreated, fixture.OP(1), R.ReservationID, authDeadline().Add(authRetention))
	found := e.readTerminal(fixture.OP(1))
	require.Equal(c, location.KindFound, found.Kind)
	e.requireTerminal(found.Record, location.TerminalCreated, fixture.OP(1), R.ReservationID, authDeadline().Add(authRetention))
	u.Actors.Reserved--
	u.Actors.Active++
	e.requireU(e.NA, u)
}

// authRejectOrFail is AUTH-109 / AUTH-110.
func authRejectOrFail(c *Case, state location.TerminalState, kind location.ResultKind) {
	e := newAuthEnv(c)
	R := e.RA("a2", e.TA())
	u := e.U(e.NA)
	res := e.complete(fixture.CompleteRequest("a2", R, e.TA(), state, fixture.P(fixture.OP(2), authDeadline())))
	e.requireCompleteKind(res, kind)
	require.Nil(c, res.Ready)
	e.requireTerminal(res.Terminal, state, fixture.OP(2), R.ReservationID, authDeadline().Add(authRetention))
	e.requireMissing(fixture.KA("a2"))
	u.Actors.Reserved--
	e.requireU(e.NA, u)
	found := e.readTerminal(fixture.OP(2))
	require.Equal(c, location.KindFound, found.Kind)
	e.requireTerminal(found.Record, state, fixture.OP(2), R.ReservationID, authDeadline().Add(authRetention))
	// The finished row's version is consumed (D-29): the next issue is 3.
	again := e.RA("a2", e.TA())
	e.exactVersion(again.Creating.StoreVersion, "3", "the reservation after a "+string(state)+" completion")
}

// auth109 AUTH-109 Rejected.
func auth109(c *Case) { authRejectOrFail(c, location.TerminalRejected, location.KindRejected) }

// auth110 AUTH-110 Failed.
func auth110(c *Case) { authRejectOrFail(c, location.TerminalFailed, location.KindFailed) }

// auth111 AUTH-111 Replay.
func auth111(c *Case) {
	e := newAuthEnv(c)
	R, first := e.auth108Setup()
	e.rememberOp(fixture.OP(1))
	c.F.Clock.Advance(time.Second)
	e.unchanged("a replayed completion", func() {
		res := e.complete(fixture.CompleteRequest("a1", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(1), authDeadline())))
		e.requireCompleteKind(res, location.KindAlreadyCompleted)
		require.Equal(c, authDescribeTerminal(first.Terminal), authDescribeTerminal(res.Terminal))
	})
}

// auth112 AUTH-112 Spots are rejected.
func auth112(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("a112", e.TA())
	req := fixture.CompleteRequest("a112", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(112), authDeadline()))
	req.Key.Kind = location.ObjectUserSpot
	e.rememberOp(fixture.OP(112))
	e.requireInvalid("completeCreation of a spot", location.ClassType, location.CodeAuthorityKindPath, func() error { return errOf(c.S.CompleteCreation(c.Ctx, req)) })
}

// requireCompleteInvalid requires an invalid argument of the class and code
// (code "": any), no change, the row still reserved and no terminal.
func (e *authEnv) requireCompleteInvalid(req location.CompleteCreationRequest, R location.ReserveResult, class location.ErrorClass, code, what string) {
	e.c.Helper()
	e.requireInvalid(what, class, code, func() error { return errOf(e.c.S.CompleteCreation(e.c.Ctx, req)) })
	e.requireRow(authKey(e.c, req.Key.Kind, req.Key.GlobalID), R.Creating)
}

// auth113 AUTH-113 Ready payload too large.
func auth113(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a113", e.TA())
	req := fixture.CompleteRequest("a113", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(113), authDeadline()))
	req.Completion.ReadyPayload = fixture.Bytes(fixture.MiB+1, 'r')
	e.rememberOp(fixture.OP(113))
	e.requireCompleteInvalid(req, R, location.ClassRange, location.CodeAuthorityPayload, "created with an oversized payload")
	require.Equal(c, location.KindMissing, e.readTerminal(fixture.OP(113)).Kind)
}

// auth114 AUTH-114 Envelope validation.
func auth114(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a114", e.TA())
	big := fixture.Bytes(fixture.MiB+1, 'e')
	bigSum := sha256.Sum256(big)
	other := sha256.Sum256([]byte("other"))
	edits := map[string]struct {
		class location.ErrorClass
		code  string
		edit  func(p *location.TerminalPublication)
	}{
		"envelope 1 MiB + 1": {location.ClassRange, location.CodeTerminalEnvelope, func(p *location.TerminalPublication) {
			p.TerminalEnvelope = big
			p.TerminalEnvelopeSHA256 = bigSum[:]
		}},
		"envelope 1 MiB + 1, digest of env": {location.ClassRange, location.CodeTerminalEnvelope, func(p *location.TerminalPublication) { p.TerminalEnvelope = big }},
		"digest of 31 bytes":                {location.ClassRange, location.CodeTerminalEnvelope, func(p *location.TerminalPublication) { p.TerminalEnvelopeSHA256 = fixture.EnvSHA()[:31] }},
		"digest of other bytes":             {location.ClassType, location.CodeTerminalDigestMismatch, func(p *location.TerminalPublication) { p.TerminalEnvelopeSHA256 = other[:] }},
	}
	e.rememberOp(fixture.OP(114))
	for name, x := range edits {
		req := fixture.CompleteRequest("a114", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(114), authDeadline()))
		x.edit(&req.Completion.Terminal)
		e.requireCompleteInvalid(req, R, x.class, x.code, "completion with "+name)
	}
}

// authBadIdentities are the invalid operation identities of AUTH-115.
func authBadIdentities() map[string]location.OperationIdentity {
	bad := map[string]location.OperationIdentity{}
	for name, b := range authBadIdentityErrors() {
		bad[name] = b.op
	}
	return bad
}

// authBadIdentity is an invalid operation identity and the error code a
// completion gives for it.
type authBadIdentity struct {
	op    location.OperationIdentity
	class location.ErrorClass
	code  string
}

// authBadIdentityErrors are AUTH-115's identities with their errors.
func authBadIdentityErrors() map[string]authBadIdentity {
	id := func(rid string, gen int64, hi, lo uint64) location.OperationIdentity {
		return location.OperationIdentity{SourceNodeRID: location.RoutingID(rid), SourceNodeGeneration: gen, OperationID: location.OperationID{High: hi, Low: lo}}
	}
	return map[string]authBadIdentity{
		"empty RID":         {id("", 1, 0, 1), location.ClassType, location.CodeTerminalOperationRID},
		"RID with NUL":      {id("s\x00", 1, 0, 1), location.ClassType, location.CodeTerminalOperationRID},
		"RID of 256 bytes":  {id(strings.Repeat("s", 256), 1, 0, 1), location.ClassType, location.CodeTerminalOperationRID},
		"source generation": {id("src", 0, 0, 1), location.ClassRange, location.CodeTerminalOperationIDs},
		"operation id 0":    {id("src", 1, 0, 0), location.ClassRange, location.CodeTerminalOperationIDs},
	}
}

// auth115 AUTH-115 Operation identity validation.
func auth115(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a115", e.TA())
	for name, b := range authBadIdentityErrors() {
		req := fixture.CompleteRequest("a115", R, e.TA(), location.TerminalCreated, fixture.P(b.op, authDeadline()))
		e.requireCompleteInvalid(req, R, b.class, b.code, "completion with "+name)
	}
	for i, op := range []location.OperationIdentity{
		{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{High: 1, Low: 0}},
		{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{High: 0, Low: 1}},
	} {
		id := []string{"a115b", "a115c"}[i]
		Rv := e.RA(id, e.TA())
		e.requireCompleteKind(e.complete(fixture.CompleteRequest(id, Rv, e.TA(), location.TerminalCreated, fixture.P(op, authDeadline()))), location.KindCreated)
	}
}

// auth116 AUTH-116 Publication window.
func auth116(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a116", e.TA())
	late := fixture.CompleteRequest("a116", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(116), T0().Add(-authRetention)))
	e.rememberOp(fixture.OP(116))
	e.requireCompleteInvalid(late, R, location.ClassRange, location.CodeTerminalWindow, "completion whose window has closed")
	ok := fixture.CompleteRequest("a116", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(116), T0().Add(-authRetention+time.Millisecond)))
	res := e.complete(ok)
	e.requireCompleteKind(res, location.KindCreated)
	require.Equal(c, T0().Add(time.Millisecond), res.Terminal.ExpiresAt)
}

// auth117 AUTH-117 Reservation id text.
func auth117(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a117", e.TA())
	req := fixture.CompleteRequest("a117", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(117), authDeadline()))
	req.ReservationID = ""
	e.rememberOp(fixture.OP(117))
	e.requireCompleteInvalid(req, R, location.ClassType, location.CodeTerminalReservationID, "completion with an empty reservation id")
}

// auth118 AUTH-118 Wrong expected version; likewise another reservation id
// or another target lifecycle.
func auth118(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a118", e.TA())
	other := e.RA("a118x", e.TA())
	req := fixture.CompleteRequest("a118", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(118), authDeadline()))
	req.ExpectedStoreVersion = other.Creating.StoreVersion
	e.requireCompleteStale(req, "completion with a wrong version")
	wrongID := fixture.CompleteRequest("a118", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(1181), authDeadline()))
	wrongID.ReservationID = authOtherReservationID
	e.requireCompleteStale(wrongID, "completion with another reservation id")
	T := e.TA()
	T.NodeLifecycleGeneration = 3
	e.requireCompleteStale(fixture.CompleteRequest("a118", R, T, location.TerminalCreated, fixture.P(fixture.OP(1182), authDeadline())), "completion with target lifecycle 3")
}

// auth119 AUTH-119 Target no longer live.
func auth119(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a119", e.TA())
	e.release(e.A)
	e.requireCompleteStale(fixture.CompleteRequest("a119", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(119), authDeadline())), "completion on a released owner")
}

// auth120 AUTH-120 After abort.
func auth120(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a120", e.TA())
	require.Equal(c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectActor, "a120", R, e.TA())))
	e.requireCompleteStale(fixture.CompleteRequest("a120", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(120), authDeadline())), "completion after abort")
}

// auth121 AUTH-121 Second completion with another operation.
func auth121(c *Case) {
	e := newAuthEnv(c)
	R, _ := e.auth108Setup()
	e.requireCompleteStale(fixture.CompleteRequest("a1", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(9), authDeadline())), "a second completion with another operation")
}

// auth122 AUTH-122 [quirk] Operation identity reused (D-07 kept: the
// identity is the idempotency key).
func auth122(c *Case) {
	e := newAuthEnv(c)
	R3 := e.RA("a3", e.TA())
	first := e.complete(fixture.CompleteRequest("a3", R3, e.TA(), location.TerminalRejected, fixture.P(fixture.OP(5), authDeadline())))
	e.requireCompleteKind(first, location.KindRejected)
	R4 := e.RA("a4", e.TA())
	e.rememberOp(fixture.OP(5))
	e.unchanged("a completion reusing an operation identity", func() {
		res := e.complete(fixture.CompleteRequest("a4", R4, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(5), authDeadline())))
		e.requireCompleteKind(res, location.KindAlreadyCompleted)
		e.requireTerminal(res.Terminal, location.TerminalRejected, fixture.OP(5), R3.ReservationID, authDeadline().Add(authRetention))
	})
	e.requireRow(fixture.KA("a4"), R4.Creating)
}

// auth123 AUTH-123 [time] Replay after retention, after a read.
func auth123(c *Case) {
	e := newAuthEnv(c)
	R, _ := e.auth108Setup()
	c.F.Clock.Set(authDeadline().Add(authRetention))
	require.Equal(c, location.KindMissing, e.readTerminal(fixture.OP(1)).Kind)
	orig := fixture.CompleteRequest("a1", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(1), authDeadline()))
	e.requireInvalid("a replay whose window has closed", location.ClassRange, location.CodeTerminalWindow, func() error { return errOf(c.S.CompleteCreation(c.Ctx, orig)) })
	e.requireCompleteStale(fixture.CompleteRequest("a1", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(1), e.now().Add(60*time.Second))), "a replay after retention")
}

// auth124 AUTH-124 [time][quirk] Replay after retention, no read: D-06 is
// fixed (an expired terminal is absent), so the ALT outcome, stale, is
// expected.
func auth124(c *Case) {
	e := newAuthEnv(c)
	R, _ := e.auth108Setup()
	c.F.Clock.Set(authDeadline().Add(authRetention))
	e.requireCompleteStale(fixture.CompleteRequest("a1", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(1), e.now().Add(60*time.Second))), "a replay after retention without a read")
}

// auth125 AUTH-125 [hook] Versions exhausted.
func auth125(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a125", e.TA())
	e.setCounters(authI64(location.MaxGeneration), nil, nil)
	e.rememberOp(fixture.OP(125))
	e.unchanged("completion with exhausted versions", func() {
		e.requireCompleteKind(e.complete(fixture.CompleteRequest("a125", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(125), authDeadline()))), location.KindGenerationExhausted)
	})
	require.Equal(c, location.KindMissing, e.readTerminal(fixture.OP(125)).Kind)
	e.requireRow(fixture.KA("a125"), R.Creating)
}

// auth126 AUTH-126 Rejection frees the identity.
func auth126(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a2", e.TA())
	e.requireCompleteKind(e.complete(fixture.CompleteRequest("a2", R, e.TA(), location.TerminalRejected, fixture.P(fixture.OP(2), authDeadline()))), location.KindRejected)
	again := e.RA("a2", e.TA())
	require.Greater(c, again.Creating.ObjectGeneration, R.Creating.ObjectGeneration)
}

// auth127 AUTH-127 Unknown operation.
func auth127(c *Case) {
	e := newAuthEnv(c)
	r := e.readTerminal(fixture.OP(127))
	require.Equal(c, location.KindMissing, r.Kind)
	require.Equal(c, T0(), r.StoreNow)
}

// auth128 AUTH-128 Found record fields, read a minute after publication.
func auth128(c *Case) {
	e := newAuthEnv(c)
	R, _ := e.auth108Setup()
	c.F.Clock.Advance(time.Minute)
	r := e.readTerminal(fixture.OP(1))
	require.Equal(c, location.KindFound, r.Kind)
	e.requireTerminal(r.Record, location.TerminalCreated, fixture.OP(1), R.ReservationID, authDeadline().Add(authRetention))
	require.Equal(c, T0(), r.Record.StoreNow, "a terminal's storeNow is its publication time (D-14)")
	r.Record.TerminalEnvelope[0] = 'X'
	require.Equal(c, "env", string(e.readTerminal(fixture.OP(1)).Record.TerminalEnvelope), "a read record is a copy")
}

// auth129 AUTH-129 [time] Retention boundary.
func auth129(c *Case) {
	e := newAuthEnv(c)
	e.auth108Setup()
	expires := authDeadline().Add(authRetention)
	c.F.Clock.Set(expires.Add(-time.Millisecond))
	require.Equal(c, location.KindFound, e.readTerminal(fixture.OP(1)).Kind)
	c.F.Clock.Set(expires)
	require.Equal(c, location.KindMissing, e.readTerminal(fixture.OP(1)).Kind)
}

// auth130 AUTH-130 Identity validation.
func auth130(c *Case) {
	e := newAuthEnv(c)
	e.auth108Setup()
	for name, op := range authBadIdentities() {
		e.unchanged("readCreationTerminal with "+name, func() {
			_, err := c.S.ReadCreationTerminal(c.Ctx, op)
			authRequireInvalid(c, err, "readCreationTerminal with "+name)
		})
	}
}

// auth131 AUTH-131 Identities are exact.
func auth131(c *Case) {
	e := newAuthEnv(c)
	e.auth108Setup()
	variants := []location.OperationIdentity{fixture.OP(1), fixture.OP(1), fixture.OP(1)}
	variants[0].SourceNodeRID = "src2"
	variants[1].SourceNodeGeneration = 2
	variants[2].OperationID = location.OperationID{High: 1, Low: 1}
	for _, op := range variants {
		require.Equal(c, location.KindMissing, e.readTerminal(op).Kind, "readCreationTerminal(%+v)", op)
	}
	require.Equal(c, location.KindFound, e.readTerminal(fixture.OP(1)).Kind)
}
