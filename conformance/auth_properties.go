package conformance

import (
	"context"
	"errors"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section Y of the authority catalogue: cross-cutting properties (failures
// without side effects, cancellation) and the two Go fixes added last
// (AUTH-227, AUTH-228). The random-run properties AUTH-223..225 are in
// auth_model.go.

// auth222 AUTH-222 Failures are side-effect free: one fixture, every
// failing answer of every method, each checked against a full fingerprint
// (fresh scan of every row, listMeshNodes, terminals read).
func auth222(c *Case) {
	e := newAuthEnv(c, authWithNB(func(l *fixture.Limits) { l.Spots = 4 }))
	TA := e.TA()
	S := e.AS("f1", TA)
	R := e.RS("f2", TA)
	Ra, _ := e.AA("f3", TA, 1)
	e.readTerminal(fixture.OP(1))
	relReq := e.REL("Rf", fixture.KS("f1"), S, e.NA, e.NB)
	g1, g2 := e.AS("g1", TA), e.AS("g2", TA)
	agg := e.auth156Request(g1, g2)
	e.requirePrepared(e.prepare(agg), agg, location.KindPrepared)
	Rab := e.RS("f4", TA)
	require.Equal(c, location.KindAborted, e.abort(fixture.AbortRequest(location.ObjectUserSpot, "f4", Rab, TA)))

	fail := func(what string, call func() (location.ResultKind, error), want location.ResultKind) {
		c.Helper()
		e.unchanged(what, func() {
			k, err := call()
			require.NoError(c, err, what)
			require.Equal(c, want, k, what)
		})
	}
	invalid := func(what string, call func() error) {
		c.Helper()
		e.unchanged(what, func() { authRequireInvalid(c, call(), what) })
	}
	casKind := func(k location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) {
			r, err := c.S.CompareExchangeAuthority(c.Ctx, k, v, m)
			return r.Kind, err
		}
	}
	reserveKind := func(r location.ReserveRequest) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) { res, err := c.S.Reserve(c.Ctx, r); return res.Kind, err }
	}

	// readAuthority, compareExchangeAuthority, listAuthorities.
	invalid("read of an empty key", func() error { _, err := c.S.ReadAuthority(c.Ctx, ""); return err })
	fail("CAS with a wrong version", casKind(fixture.KS("f1"), R.Creating.StoreVersion, fixture.Preserve("x")), location.KindConflict)
	fail("CAS on a reserved row", casKind(fixture.KS("f2"), R.Creating.StoreVersion, fixture.Preserve("x")), location.KindConflict)
	fail("CAS restore with another owner", casKind(fixture.KS("f1"), S.StoreVersion, fixture.Restore("x", e.B)), location.KindConflict)
	fail("CAS newOwner with an unknown fence", casKind(fixture.KS("f1"), S.StoreVersion, fixture.NewOwner("x", e.B, "nope")), location.KindConflict)
	invalid("CAS with a bad shape", func() error {
		m := fixture.Preserve("x")
		m.TargetOwner = &e.B
		_, err := c.S.CompareExchangeAuthority(c.Ctx, fixture.KS("f1"), S.StoreVersion, m)
		return err
	})
	invalid("list with limit 0", func() error { _, err := c.S.ListAuthorities(c.Ctx, "", "", 0); return err })
	first := e.listPage("", "", 1)
	fail("list with another prefix's cursor", func() (location.ResultKind, error) {
		r, err := c.S.ListAuthorities(c.Ctx, "zla1:a:", first.NextCursor, 1)
		return r.Kind, err
	}, location.KindScanExpired)

	// reserve.
	fail("reserve of an active key", reserveKind(fixture.SpotRequest(location.ObjectUserSpot, "f1", TA, "room")), location.KindAlreadyExists)
	fail("reserve of a reserved key", reserveKind(fixture.SpotRequest(location.ObjectUserSpot, "f2", TA, "room")), location.KindConflict)
	fail("reserve with another kind", reserveKind(fixture.SpotRequest(location.ObjectInstanceSpot, "f1", TA, "shard")), location.KindTypeMismatch)
	fail("reserve of a type not offered", reserveKind(fixture.SpotRequest(location.ObjectUserSpot, "f9", TA, "arena")), location.KindPlacementCapacityExhausted)
	badTarget := TA
	badTarget.NodeLifecycleGeneration = 9
	fail("reserve on a dead target", reserveKind(fixture.SpotRequest(location.ObjectUserSpot, "f9", badTarget, "room")), location.KindConflict)
	invalid("reserve with an empty id", func() error {
		_, err := c.S.Reserve(c.Ctx, fixture.SpotRequest(location.ObjectUserSpot, "", TA, "room"))
		return err
	})

	// commit, completeCreation, readCreationTerminal, abort.
	commitKind := func(r location.CommitRequest) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) { res, err := c.S.Commit(c.Ctx, r); return res.Kind, err }
	}
	stale := fixture.CommitRequest("f2", R, TA)
	stale.ReservationID = authOtherReservationID
	fail("commit with another reservation", commitKind(stale), location.KindStale)
	invalid("commit of an actor", func() error {
		r := fixture.CommitRequest("f3", Ra, TA)
		r.Key.Kind = location.ObjectActor
		_, err := c.S.Commit(c.Ctx, r)
		return err
	})
	completeKind := func(r location.CompleteCreationRequest) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) { res, err := c.S.CompleteCreation(c.Ctx, r); return res.Kind, err }
	}
	fail("a replayed completion", completeKind(fixture.CompleteRequest("f3", Ra, TA, location.TerminalCreated, fixture.P(fixture.OP(1), authDeadline()))), location.KindAlreadyCompleted)
	e.rememberOp(fixture.OP(2))
	fail("a second completion", completeKind(fixture.CompleteRequest("f3", Ra, TA, location.TerminalCreated, fixture.P(fixture.OP(2), authDeadline()))), location.KindStale)
	invalid("completion of a spot", func() error {
		r := fixture.CompleteRequest("f2", R, TA, location.TerminalCreated, fixture.P(fixture.OP(3), authDeadline()))
		r.Key.Kind = location.ObjectUserSpot
		_, err := c.S.CompleteCreation(c.Ctx, r)
		return err
	})
	invalid("terminal read with generation 0", func() error {
		op := fixture.OP(1)
		op.SourceNodeGeneration = 0
		_, err := c.S.ReadCreationTerminal(c.Ctx, op)
		return err
	})
	abortKind := func(r location.AbortRequest) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) { return c.S.AbortCreation(c.Ctx, r) }
	}
	fail("abort replay", abortKind(fixture.AbortRequest(location.ObjectUserSpot, "f4", Rab, TA)), location.KindAlreadyAborted)
	fail("abort of a committed reservation", abortKind(fixture.AbortRequest(location.ObjectActor, "f3", Ra, TA)), location.KindStale)
	invalid("abort with an empty id", func() error {
		_, err := c.S.AbortCreation(c.Ctx, fixture.AbortRequest(location.ObjectUserSpot, "", R, TA))
		return err
	})

	// Relocation capacity.
	relKind := func(r location.RelocationReservationRequest) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) {
			res, err := c.S.ReserveRelocationCapacity(c.Ctx, r)
			return res.Kind, err
		}
	}
	fail("relocation replay", relKind(relReq), location.KindAlreadyReserved)
	other := relReq
	other.TargetNodeLifecycleGeneration = 2
	fail("relocation with other content", relKind(other), location.KindConflict)
	full := fixture.RelRequest("Rfull", fixture.KS("f1"), S, e.NA.Desc, e.NB.Desc, fixture.VSpots(location.ObjectUserSpot, "room", 2))
	fail("relocation beyond capacity", relKind(full), location.KindPlacementCapacityExhausted)
	invalid("relocation with an empty id", func() error {
		_, err := c.S.ReserveRelocationCapacity(c.Ctx, fixture.RelRequest("", fixture.KS("f1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room")))
		return err
	})
	abortRelKind := func(f string) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) {
			return c.S.AbortRelocationCapacity(c.Ctx, location.RelocationFence(f))
		}
	}
	fail("abortRelocationCapacity of an unknown fence", abortRelKind("nope"), location.KindStale)

	// Aggregates.
	prepKind := func(r location.AggregatePrepareRequest) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) { res, err := c.S.PrepareAggregate(c.Ctx, r); return res.Kind, err }
	}
	fail("prepare replay", prepKind(agg), location.KindAlreadyPrepared)
	changed := agg
	changed.InventoryDigest = fixture.Digest32(0x08)
	fail("prepare with other content", prepKind(changed), location.KindConflict)
	invalid("prepare with generation 0", func() error {
		r := agg
		r.AggregateGeneration = 0
		_, err := c.S.PrepareAggregate(c.Ctx, r)
		return err
	})
	aggKind := func(commit bool, f location.AggregateFence) func() (location.ResultKind, error) {
		return func() (location.ResultKind, error) {
			if commit {
				return c.S.CommitAggregate(c.Ctx, f)
			}
			return c.S.AbortAggregate(c.Ctx, f)
		}
	}
	fail("commit of an unknown aggregate", aggKind(true, authAggFence("nope", 1)), location.KindStale)
	fail("abort of an unknown aggregate", aggKind(false, authAggFence("nope", 1)), location.KindStale)
	require.Equal(c, location.KindCommitted, e.commitAgg(authAggFence(agg.AggregateID, 1)))
	fail("commit replay", aggKind(true, authAggFence(agg.AggregateID, 1)), location.KindAlreadyCommitted)
	fail("abort of a committed aggregate", aggKind(false, authAggFence(agg.AggregateID, 1)), location.KindStale)
	fail("prepare after commit", prepKind(agg), location.KindStale)

	// Relocation answers after use and abort.
	require.Equal(c, location.KindAborted, e.abortRel("Rf"))
	fail("abortRelocationCapacity twice", abortRelKind("Rf"), location.KindAlreadyAborted)

	// Dead owners last.
	e.release(e.B)
	target := fixture.RelRequest("Rt", fixture.KS("f1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room"))
	fail("relocation to a dead target", relKind(target), location.KindTargetUnavailable)
	e.release(e.A)
	e.unchanged("removeAllByOwner of a released lease", func() {
		require.Zero(c, e.removeAll(e.A))
	})
}

// auth226 AUTH-226 Cancellation: every authority method called with a
// cancelled context answers the context's error and changes nothing.
func auth226(c *Case) {
	e := newAuthEnv(c)
	TA := e.TA()
	S := e.AS("k1", TA)
	R := e.RS("k2", TA)
	Ra := e.RA("k3", TA)
	S4 := e.AS("k4", TA)
	relReq := e.REL("Rk", fixture.KS("k4"), S4, e.NA, e.NB)
	g1, g2 := e.aggRows()
	agg := e.auth156Request(g1, g2)
	e.requirePrepared(e.prepare(agg), agg, location.KindPrepared)
	g3 := e.AS("g3", TA)
	agg2 := e.AGG("AG2", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g3"), g3)}, fixture.VS("room"))
	e.readTerminal(fixture.OP(1))

	ctx, cancel := context.WithCancel(c.Ctx)
	cancel()
	calls := map[string]func() error{
		"ReadAuthority": func() error { _, err := c.S.ReadAuthority(ctx, fixture.KS("k1")); return err },
		"CompareExchangeAuthority": func() error {
			_, err := c.S.CompareExchangeAuthority(ctx, fixture.KS("k1"), S.StoreVersion, fixture.Preserve("x"))
			return err
		},
		"ListAuthorities": func() error { _, err := c.S.ListAuthorities(ctx, "", "", 10); return err },
		"Reserve": func() error {
			_, err := c.S.Reserve(ctx, fixture.SpotRequest(location.ObjectUserSpot, "k9", TA, "room"))
			return err
		},
		"Commit": func() error { _, err := c.S.Commit(ctx, fixture.CommitRequest("k2", R, TA)); return err },
		"CompleteCreation": func() error {
			_, err := c.S.CompleteCreation(ctx, fixture.CompleteRequest("k3", Ra, TA, location.TerminalCreated, fixture.P(fixture.OP(1), authDeadline())))
			return err
		},
		"ReadCreationTerminal": func() error { _, err := c.S.ReadCreationTerminal(ctx, fixture.OP(1)); return err },
		"AbortCreation": func() error {
			_, err := c.S.AbortCreation(ctx, fixture.AbortRequest(location.ObjectUserSpot, "k2", R, TA))
			return err
		},
		"ReserveRelocationCapacity": func() error {
			_, err := c.S.ReserveRelocationCapacity(ctx, fixture.RelRequest("Rk2", fixture.KS("k1"), S, e.NA.Desc, e.NB.Desc, fixture.VS("room")))
			return err
		},
		"AbortRelocationCapacity": func() error {
			_, err := c.S.AbortRelocationCapacity(ctx, location.RelocationFence(relReq.ReservationID))
			return err
		},
		"PrepareAggregate": func() error { _, err := c.S.PrepareAggregate(ctx, agg2); return err },
		"CommitAggregate":  func() error { _, err := c.S.CommitAggregate(ctx, authAggFence("AG1", 1)); return err },
		"AbortAggregate":   func() error { _, err := c.S.AbortAggregate(ctx, authAggFence("AG1", 1)); return err },
		"RemoveAllByOwner": func() error { _, err := c.S.RemoveAllByOwner(ctx, e.A); return err },
	}
	for name, call := range calls {
		e.unchanged(name+" with a cancelled context", func() {
			err := call()
			require.Error(c, err, name)
			require.True(c, errors.Is(err, context.Canceled), "%s: want context.Canceled, got %v", name, err)
		})
	}
	// Every call would have succeeded with a live context.
	e.requireStored(e.cas(fixture.KS("k1"), S.StoreVersion, fixture.Preserve("x")))
	e.requirePrepared(e.prepare(agg2), agg2, location.KindPrepared)
	require.Equal(c, location.KindCommitted, e.commitAgg(authAggFence("AG1", 1)))
}

// auth227 AUTH-227 Oversized aggregate participant payload (D-03, Go fix).
func auth227(c *Case) {
	e := newAuthEnv(c)
	S1, S2 := e.aggRows()
	req := e.auth156Request(S1, S2)
	big := req
	big.Participants = append([]location.AggregateParticipant(nil), req.Participants...)
	big.Participants[1].AuthorityPayload = fixture.Bytes(fixture.MiB+1, 'a')
	e.requireInvalid("prepare with an oversized participant payload", location.ClassRange, location.CodeAuthorityPayload, func() error { return errOf(c.S.PrepareAggregate(c.Ctx, big)) })
	e.requirePrepareKind(req, location.KindPrepared, "the same aggregate with valid payloads")
}

// auth228 AUTH-228 Completion without a terminal publication (D-35, Go fix).
func auth228(c *Case) {
	e := newAuthEnv(c)
	R := e.RA("a228", e.TA())
	for _, k := range []location.TerminalState{location.TerminalCreated, location.TerminalRejected, location.TerminalFailed} {
		req := fixture.CompleteRequest("a228", R, e.TA(), k, location.TerminalPublication{})
		e.requireCompleteInvalid(req, R, location.ClassType, "", "a "+strings.ToLower(string(k))+" completion without a terminal")
	}
	res := e.complete(fixture.CompleteRequest("a228", R, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(228), authDeadline())))
	e.requireCompleteKind(res, location.KindCreated)
}
