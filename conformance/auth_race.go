package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section W of the authority catalogue: concurrency. Every scenario starts
// its calls from separate goroutines behind a barrier (a closed channel),
// repeats authRaceReps times, and checks assertions that hold for every
// interleaving. Each repetition uses fresh nodes (race-a-NN owned by A,
// race-b-NN owned by B) so that capacity starts from zero; the goroutines
// only call the store, and every assertion runs on the test goroutine.

// authRaceReps is how often a race scenario repeats.
const authRaceReps = 50

// authConcurrently runs fns at once: every goroutine waits on one channel,
// which is closed when all are started; it returns when all are done.
func authConcurrently(fns ...func()) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(len(fns))
	for _, f := range fns {
		go func() {
			defer wg.Done()
			<-start
			f()
		}()
	}
	close(start)
	wg.Wait()
}

// raceNodes publishes repetition rep's nodes with the given limits.
func (e *authEnv) raceNodes(rep int, la, lb fixture.Limits) (*authNode, *authNode) {
	e.c.Helper()
	na := e.publishNode(fmt.Sprintf("race-a-%02d", rep), e.A, la, "")
	nb := e.publishNode(fmt.Sprintf("race-b-%02d", rep), e.B, lb, "")
	return na, nb
}

// races runs a race scenario's repetition authRaceReps times, each on the
// repetition's fresh nodes with F's limits and the object id prefix-NN.
func (e *authEnv) races(prefix string, repetition func(rep int, id string, na, nb *authNode)) {
	e.c.Helper()
	e.racesOn(fixture.DefaultLimits(), fixture.DefaultLimits(), prefix, repetition)
}

// racesOn is races on nodes with the limits la and lb.
func (e *authEnv) racesOn(la, lb fixture.Limits, prefix string, repetition func(rep int, id string, na, nb *authNode)) {
	e.c.Helper()
	for rep := 0; rep < authRaceReps; rep++ {
		na, nb := e.raceNodes(rep, la, lb)
		repetition(rep, fmt.Sprintf("%s-%02d", prefix, rep), na, nb)
	}
}

// authOneSpot is F's limits with room for one spot.
func authOneSpot() fixture.Limits {
	l := fixture.DefaultLimits()
	l.Spots = 1
	return l
}

// authRace runs a and b at once (authConcurrently), requires both to
// succeed and returns their answers.
func authRace[A, B any](c *Case, a func() (A, error), b func() (B, error)) (A, B) {
	c.Helper()
	var ra A
	var rb B
	var ea, eb error
	authConcurrently(func() { ra, ea = a() }, func() { rb, eb = b() })
	require.NoError(c, ea)
	require.NoError(c, eb)
	return ra, rb
}

// bind is a call of method with req, for authRace.
func bind[Q, R any](c *Case, method func(location.Store, context.Context, Q) (R, error), req Q) func() (R, error) {
	return func() (R, error) { return method(c.S, c.Ctx, req) }
}

// casCall is a CAS on key from version v, for authRace.
func (e *authEnv) casCall(key location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation) func() (location.CompareExchangeResult, error) {
	return func() (location.CompareExchangeResult, error) {
		return e.c.S.CompareExchangeAuthority(e.c.Ctx, key, v, m)
	}
}

// raceCAS runs two CAS calls concurrently.
func (e *authEnv) raceCAS(key location.AuthorityKey, v1 location.StoreVersion, m1 location.AuthorityMutation, v2 location.StoreVersion, m2 location.AuthorityMutation) (location.CompareExchangeResult, location.CompareExchangeResult) {
	e.c.Helper()
	return authRace(e.c, e.casCall(key, v1, m1), e.casCall(key, v2, m2))
}

// auth198 AUTH-198 Two preserves, one version.
func auth198(c *Case) {
	e := newAuthEnv(c)
	e.races("w1", func(rep int, id string, na, _ *authNode) {
		S := e.AS(id, na.Target())
		a, b := e.raceCAS(fixture.KS(id), S.StoreVersion, fixture.Preserve("one"), S.StoreVersion, fixture.Preserve("two"))
		win, lose := a, b
		if b.Kind == location.KindStored {
			win, lose = b, a
		}
		require.Equal(c, location.KindStored, win.Kind, "rep %d: one preserve stores", rep)
		require.Equal(c, location.KindConflict, lose.Kind, "rep %d: the other conflicts", rep)
		require.NotNil(c, lose.Current.Snapshot)
		require.Equal(c, win.Stored.StoreVersion, lose.Current.Snapshot.StoreVersion, "rep %d: the loser sees the winner", rep)
		e.requireRow(fixture.KS(id), win.Stored)
	})
}

// auth199 AUTH-199 Preserve vs delete.
func auth199(c *Case) {
	e := newAuthEnv(c)
	e.races("w1b", func(rep int, id string, na, _ *authNode) {
		S := e.AS(id, na.Target())
		p, d := e.raceCAS(fixture.KS(id), S.StoreVersion, fixture.Preserve("p"), S.StoreVersion, fixture.Delete())
		switch {
		case d.Kind == location.KindDeleted:
			require.Equal(c, location.KindConflict, p.Kind, "rep %d", rep)
			require.Equal(c, location.KindMissing, p.Current.Kind, "rep %d: the preserve sees the row gone", rep)
			e.requireMissing(fixture.KS(id))
		case p.Kind == location.KindStored:
			require.Equal(c, location.KindConflict, d.Kind, "rep %d", rep)
			require.NotNil(c, d.Current.Snapshot)
			require.Equal(c, p.Stored.StoreVersion, d.Current.Snapshot.StoreVersion, "rep %d", rep)
			e.requireRow(fixture.KS(id), p.Stored)
		default:
			require.Failf(c, "neither succeeded", "rep %d: preserve %s, delete %s", rep, p.Kind, d.Kind)
		}
	})
}

// auth200 AUTH-200 No lost update.
func auth200(c *Case) {
	e := newAuthEnv(c)
	const writers = 16
	e.races("w2", func(rep int, id string, na, _ *authNode) {
		S := e.AS(id, na.Target())
		key := fixture.KS(id)
		versions := make([]location.StoreVersion, writers)
		errs := make([]error, writers)
		fns := make([]func(), writers)
		for w := 0; w < writers; w++ {
			tag := fmt.Sprintf("<%02d>", w)
			fns[w] = func() {
				for attempt := 0; attempt < 100000; attempt++ {
					r, err := c.S.ReadAuthority(c.Ctx, key)
					if err != nil || r.Snapshot == nil {
						errs[w] = fmt.Errorf("read: %v (%s)", err, r.Kind)
						return
					}
					res, err := c.S.CompareExchangeAuthority(c.Ctx, key, r.Snapshot.StoreVersion, fixture.Preserve(string(r.Snapshot.Payload)+tag))
					if err != nil {
						errs[w] = err
						return
					}
					if res.Kind == location.KindStored {
						versions[w] = res.Stored.StoreVersion
						return
					}
					if res.Kind != location.KindConflict {
						errs[w] = fmt.Errorf("preserve answered %s", res.Kind)
						return
					}
				}
				errs[w] = fmt.Errorf("writer %s never stored", tag)
			}
		}
		authConcurrently(fns...)
		seen := map[location.StoreVersion]bool{S.StoreVersion: true}
		for w := 0; w < writers; w++ {
			require.NoError(c, errs[w], "rep %d writer %d", rep, w)
			require.False(c, seen[versions[w]], "rep %d: version %q returned twice", rep, versions[w])
			seen[versions[w]] = true
		}
		final := string(e.read(key).Snapshot.Payload)
		for w := 0; w < writers; w++ {
			require.Equal(c, 1, strings.Count(final, fmt.Sprintf("<%02d>", w)), "rep %d: tag %d in %q", rep, w, final)
		}
	})
}

// auth201 AUTH-201 Two reserves, one key.
func auth201(c *Case) {
	e := newAuthEnv(c)
	e.races("w0", func(rep int, id string, na, _ *authNode) {
		req := fixture.SpotRequest(location.ObjectUserSpot, id, na.Target(), "room")
		a, b := authRace(c, bind(c, location.Store.Reserve, req), bind(c, location.Store.Reserve, req))
		win, lose := a, b
		if b.Kind == location.KindReserved {
			win, lose = b, a
		}
		require.Equal(c, location.KindReserved, win.Kind, "rep %d", rep)
		require.Equal(c, location.KindConflict, lose.Kind, "rep %d", rep)
		e.requireReadIs(lose.Current, win.Creating, "the loser's current")
		e.requireU(na, authUsage{Spots: authSlot{Reserved: 1}, Room: authSlot{Reserved: 1}})
	})
}

// auth202 AUTH-202 Two reserves, last slot.
func auth202(c *Case) {
	e := newAuthEnv(c)
	e.racesOn(authOneSpot(), fixture.DefaultLimits(), "w3", func(rep int, id string, na, _ *authNode) {
		r1 := fixture.SpotRequest(location.ObjectUserSpot, id, na.Target(), "room")
		r2 := fixture.SpotRequest(location.ObjectUserSpot, fmt.Sprintf("w4-%02d", rep), na.Target(), "room")
		a, b := authRace(c, bind(c, location.Store.Reserve, r1), bind(c, location.Store.Reserve, r2))
		kinds := []location.ResultKind{a.Kind, b.Kind}
		require.ElementsMatch(c, []location.ResultKind{location.KindReserved, location.KindPlacementCapacityExhausted}, kinds, "rep %d", rep)
		e.requireU(na, authUsage{Spots: authSlot{Reserved: 1}, Room: authSlot{Reserved: 1}})
	})
}

// raceFirstWins requires exactly one of two racing calls to have won: the
// first when its answer a is winA, else the second when b is winB; the
// loser must answer stale. It reports whether the first won.
func raceFirstWins(c *Case, rep int, a, winA, b, winB location.ResultKind) bool {
	c.Helper()
	switch {
	case a == winA:
		require.Equal(c, location.KindStale, b, "rep %d: the second call lost", rep)
		return true
	case b == winB:
		require.Equal(c, location.KindStale, a, "rep %d: the first call lost", rep)
		return false
	}
	require.Failf(c, "neither won", "rep %d: %s, %s", rep, a, b)
	return false
}

// auth203 AUTH-203 Commit vs abort.
func auth203(c *Case) {
	e := newAuthEnv(c)
	e.races("w6", func(rep int, id string, na, _ *authNode) {
		R := e.RS(id, na.Target())
		cr, ak := authRace(c, bind(c, location.Store.Commit, fixture.CommitRequest(id, R, na.Target())),
			bind(c, location.Store.AbortCreation, fixture.AbortRequest(location.ObjectUserSpot, id, R, na.Target())))
		if raceFirstWins(c, rep, cr.Kind, location.KindCommitted, ak, location.KindAborted) {
			e.requireU(na, authUsage{Spots: authSlot{Active: 1}, Room: authSlot{Active: 1}})
			e.requireRow(fixture.KS(id), cr.Ready)
		} else {
			e.requireU(na, authUsage{})
			e.requireMissing(fixture.KS(id))
		}
	})
}

// auth204 AUTH-204 Two commits.
func auth204(c *Case) {
	e := newAuthEnv(c)
	e.races("w7", func(rep int, id string, na, _ *authNode) {
		R := e.RS(id, na.Target())
		a, b := authRace(c, bind(c, location.Store.Commit, fixture.CommitRequest(id, R, na.Target())), bind(c, location.Store.Commit, fixture.CommitRequest(id, R, na.Target())))
		require.ElementsMatch(c, []location.ResultKind{location.KindCommitted, location.KindAlreadyCommitted}, []location.ResultKind{a.Kind, b.Kind}, "rep %d", rep)
		authRequireSameSnap(c, a.Ready, b.Ready, "both answers carry the committed row")
		e.requireU(na, authUsage{Spots: authSlot{Active: 1}, Room: authSlot{Active: 1}})
	})
}

// raceOP is OP(n) of repetition rep (each repetition's own operation).
func raceOP(n uint64, rep int) location.OperationIdentity {
	op := fixture.OP(n)
	op.OperationID.High = uint64(rep + 1)
	return op
}

// auth205 AUTH-205 Two identical completions.
func auth205(c *Case) {
	e := newAuthEnv(c)
	e.races("w8", func(rep int, id string, na, _ *authNode) {
		R := e.RA(id, na.Target())
		op := raceOP(40, rep)
		req := fixture.CompleteRequest(id, R, na.Target(), location.TerminalCreated, fixture.P(op, authDeadline()))
		a, b := authRace(c, bind(c, location.Store.CompleteCreation, req), bind(c, location.Store.CompleteCreation, req))
		require.ElementsMatch(c, []location.ResultKind{location.KindCreated, location.KindAlreadyCompleted}, []location.ResultKind{a.Kind, b.Kind}, "rep %d", rep)
		require.Equal(c, authDescribeTerminal(a.Terminal), authDescribeTerminal(b.Terminal), "rep %d: one terminal", rep)
		e.requireU(na, authUsage{Actors: authSlot{Active: 1}})
	})
}

// auth206 AUTH-206 Two completions, different operations, one reservation.
func auth206(c *Case) {
	e := newAuthEnv(c)
	e.races("w9", func(rep int, id string, na, _ *authNode) {
		R := e.RA(id, na.Target())
		op1, op2 := raceOP(41, rep), raceOP(42, rep)
		a, b := authRace(c, bind(c, location.Store.CompleteCreation, fixture.CompleteRequest(id, R, na.Target(), location.TerminalCreated, fixture.P(op1, authDeadline()))),
			bind(c, location.Store.CompleteCreation, fixture.CompleteRequest(id, R, na.Target(), location.TerminalCreated, fixture.P(op2, authDeadline()))))
		require.ElementsMatch(c, []location.ResultKind{location.KindCreated, location.KindStale}, []location.ResultKind{a.Kind, b.Kind}, "rep %d", rep)
		winner, loser := op1, op2
		if b.Kind == location.KindCreated {
			winner, loser = op2, op1
		}
		require.Equal(c, location.KindFound, e.readTerminal(winner).Kind, "rep %d: the winner's terminal", rep)
		require.Equal(c, location.KindMissing, e.readTerminal(loser).Kind, "rep %d: no terminal for the loser", rep)
		e.requireU(na, authUsage{Actors: authSlot{Active: 1}})
	})
}

// auth207 AUTH-207 Completion vs abort.
func auth207(c *Case) {
	e := newAuthEnv(c)
	e.races("w10", func(rep int, id string, na, _ *authNode) {
		R := e.RA(id, na.Target())
		op := raceOP(43, rep)
		cr, ak := authRace(c, bind(c, location.Store.CompleteCreation, fixture.CompleteRequest(id, R, na.Target(), location.TerminalCreated, fixture.P(op, authDeadline()))),
			bind(c, location.Store.AbortCreation, fixture.AbortRequest(location.ObjectActor, id, R, na.Target())))
		if raceFirstWins(c, rep, cr.Kind, location.KindCreated, ak, location.KindAborted) {
			e.requireU(na, authUsage{Actors: authSlot{Active: 1}})
		} else {
			require.Equal(c, location.KindMissing, e.readTerminal(op).Kind, "rep %d", rep)
			e.requireU(na, authUsage{})
		}
	})
}

// auth208 AUTH-208 [newer] Identical relocation reservations.
func auth208(c *Case) {
	e := newAuthEnv(c)
	e.races("w11", func(rep int, id string, na, nb *authNode) {
		S := e.AS(id, na.Target())
		req := fixture.RelRequest("Rw-"+id, fixture.KS(id), S, na.Desc, nb.Desc, fixture.VS("room"))
		a, b := authRace(c, bind(c, location.Store.ReserveRelocationCapacity, req), bind(c, location.Store.ReserveRelocationCapacity, req))
		require.ElementsMatch(c, []location.ResultKind{location.KindReserved, location.KindAlreadyReserved}, []location.ResultKind{a.Kind, b.Kind}, "rep %d", rep)
		e.requireU(nb, authUsage{Spots: authSlot{Reserved: 1}, Room: authSlot{Reserved: 1}})
	})
}

// auth209 AUTH-209 [newer] Relocation reservations, last slot.
func auth209(c *Case) {
	e := newAuthEnv(c)
	e.racesOn(fixture.DefaultLimits(), authOneSpot(), "wx", func(rep int, x string, na, nb *authNode) {
		y := fmt.Sprintf("wy-%02d", rep)
		Sx, Sy := e.AS(x, na.Target()), e.AS(y, na.Target())
		a, b := authRace(c, bind(c, location.Store.ReserveRelocationCapacity, fixture.RelRequest("Rx-"+x, fixture.KS(x), Sx, na.Desc, nb.Desc, fixture.VS("room"))),
			bind(c, location.Store.ReserveRelocationCapacity, fixture.RelRequest("Ry-"+y, fixture.KS(y), Sy, na.Desc, nb.Desc, fixture.VS("room"))))
		require.ElementsMatch(c, []location.ResultKind{location.KindReserved, location.KindPlacementCapacityExhausted}, []location.ResultKind{a.Kind, b.Kind}, "rep %d", rep)
		e.requireU(nb, authUsage{Spots: authSlot{Reserved: 1}, Room: authSlot{Reserved: 1}})
	})
}

// raceRelocation stores spot id on na and reserves its relocation to nb
// under the fence prefix-id.
func (e *authEnv) raceRelocation(prefix, id string, na, nb *authNode) (*location.AuthoritySnapshot, string) {
	e.c.Helper()
	S := e.AS(id, na.Target())
	fence := prefix + "-" + id
	e.REL(fence, fixture.KS(id), S, na, nb)
	return S, fence
}

// auth210 AUTH-210 [newer] newOwner vs preserve on one version.
func auth210(c *Case) {
	e := newAuthEnv(c)
	e.races("w12", func(rep int, id string, na, nb *authNode) {
		S, fence := e.raceRelocation("Rp", id, na, nb)
		n, p := e.raceCAS(fixture.KS(id), S.StoreVersion, fixture.NewOwner("moved", nb.Owner(), fence), S.StoreVersion, fixture.Preserve("kept"))
		switch {
		case n.Kind == location.KindStored:
			require.Equal(c, location.KindConflict, p.Kind, "rep %d", rep)
			require.Equal(c, location.KindAlreadyCommitted, e.abortRel(fence), "rep %d", rep)
			e.requireU(nb, authUsage{Spots: authSlot{Active: 1}, Room: authSlot{Active: 1}})
			e.requireU(na, authUsage{})
		case p.Kind == location.KindStored:
			require.Equal(c, location.KindConflict, n.Kind, "rep %d", rep)
			require.Equal(c, location.KindAborted, e.abortRel(fence), "rep %d: the reservation is still reserved", rep)
			e.requireU(nb, authUsage{})
			e.requireU(na, authUsage{Spots: authSlot{Active: 1}, Room: authSlot{Active: 1}})
		default:
			require.Failf(c, "neither succeeded", "rep %d: newOwner %s, preserve %s", rep, n.Kind, p.Kind)
		}
	})
}

// auth211 AUTH-211 [newer] newOwner vs abortRelocationCapacity.
func auth211(c *Case) {
	e := newAuthEnv(c)
	e.races("w13", func(rep int, id string, na, nb *authNode) {
		S, fence := e.raceRelocation("Rq", id, na, nb)
		n, ak := authRace(c, e.casCall(fixture.KS(id), S.StoreVersion, fixture.NewOwner("moved", nb.Owner(), fence)),
			func() (location.ResultKind, error) {
				return c.S.AbortRelocationCapacity(c.Ctx, location.RelocationFence(fence))
			})
		switch {
		case n.Kind == location.KindStored:
			require.Equal(c, location.KindAlreadyCommitted, ak, "rep %d", rep)
			e.requireU(na, authUsage{})
			e.requireU(nb, authUsage{Spots: authSlot{Active: 1}, Room: authSlot{Active: 1}})
		case n.Kind == location.KindConflict:
			require.Equal(c, location.KindAborted, ak, "rep %d", rep)
			e.requireU(na, authUsage{Spots: authSlot{Active: 1}, Room: authSlot{Active: 1}})
			e.requireU(nb, authUsage{})
		default:
			require.Failf(c, "unexpected", "rep %d: newOwner %s, abort %s", rep, n.Kind, ak)
		}
	})
}

// raceAggregate creates two rows on na and returns the request moving both
// to nb.
func (e *authEnv) raceAggregate(rep int, na, nb *authNode) (*location.AuthoritySnapshot, location.AggregatePrepareRequest) {
	e.c.Helper()
	g1, g2 := fmt.Sprintf("g1-%02d", rep), fmt.Sprintf("g2-%02d", rep)
	S1, S2 := e.AS(g1, na.Target()), e.AS(g2, na.Target())
	req := fixture.AGG(nb.Desc, fmt.Sprintf("AG1-%02d", rep), 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS(g1), S1), fixture.NewOwnerPart(fixture.KS(g2), S2)}, authTwoRooms())
	return S1, req
}

// racePrepared prepares the race aggregate; it returns the first row, the
// request and the aggregate's fence.
func (e *authEnv) racePrepared(rep int, na, nb *authNode) (*location.AuthoritySnapshot, location.AggregatePrepareRequest, location.AggregateFence) {
	e.c.Helper()
	S1, req := e.raceAggregate(rep, na, nb)
	e.requirePrepared(e.prepare(req), req, location.KindPrepared)
	return S1, req, authAggFence(req.AggregateID, 1)
}

// auth212 AUTH-212 Two identical prepares.
func auth212(c *Case) {
	e := newAuthEnv(c)
	e.races("", func(rep int, _ string, na, nb *authNode) {
		_, req := e.raceAggregate(rep, na, nb)
		prepare := func() (location.AggregatePrepareResult, error) { return c.S.PrepareAggregate(c.Ctx, req) }
		a, b := authRace(c, prepare, prepare)
		require.ElementsMatch(c, []location.ResultKind{location.KindPrepared, location.KindAlreadyPrepared}, []location.ResultKind{a.Kind, b.Kind}, "rep %d", rep)
		e.requireU(nb, authUsage{Spots: authSlot{Reserved: 2}, Room: authSlot{Reserved: 2}})
	})
}

// aggCall is a CommitAggregate (commit) or AbortAggregate of f, for
// authRace.
func (e *authEnv) aggCall(f location.AggregateFence, commit bool) func() (location.ResultKind, error) {
	return func() (location.ResultKind, error) {
		if commit {
			return e.c.S.CommitAggregate(e.c.Ctx, f)
		}
		return e.c.S.AbortAggregate(e.c.Ctx, f)
	}
}

// auth213 AUTH-213 Commit vs abort of an aggregate.
func auth213(c *Case) {
	e := newAuthEnv(c)
	e.races("", func(rep int, _ string, na, nb *authNode) {
		_, _, f := e.racePrepared(rep, na, nb)
		ck, ak := authRace(c, e.aggCall(f, true), e.aggCall(f, false))
		if raceFirstWins(c, rep, ck, location.KindCommitted, ak, location.KindAborted) {
			e.requireU(na, authUsage{})
			e.requireU(nb, authUsage{Spots: authSlot{Active: 2}, Room: authSlot{Active: 2}})
		} else {
			e.requireU(na, authUsage{Spots: authSlot{Active: 2}, Room: authSlot{Active: 2}})
			e.requireU(nb, authUsage{})
		}
	})
}

// auth214 AUTH-214 Aggregate commit vs participant CAS.
func auth214(c *Case) {
	e := newAuthEnv(c)
	e.races("", func(rep int, _ string, na, nb *authNode) {
		S1, req, f := e.racePrepared(rep, na, nb)
		ck, p := authRace(c, e.aggCall(f, true), e.casCall(req.Participants[0].AuthorityKey, S1.StoreVersion, fixture.Preserve("p")))
		switch ck {
		case location.KindCommitted:
			require.Equal(c, location.KindConflict, p.Kind, "rep %d", rep)
		case location.KindStale:
			require.Equal(c, location.KindStored, p.Kind, "rep %d", rep)
		default:
			require.Failf(c, "unexpected", "rep %d: commit %s, preserve %s", rep, ck, p.Kind)
		}
	})
}

// auth215 AUTH-215 Two aggregate commits.
func auth215(c *Case) {
	e := newAuthEnv(c)
	e.races("", func(rep int, _ string, na, nb *authNode) {
		S1, req, f := e.racePrepared(rep, na, nb)
		a, b := authRace(c, e.aggCall(f, true), e.aggCall(f, true))
		require.ElementsMatch(c, []location.ResultKind{location.KindCommitted, location.KindAlreadyCommitted}, []location.ResultKind{a, b}, "rep %d", rep)
		e.requireU(na, authUsage{})
		e.requireU(nb, authUsage{Spots: authSlot{Active: 2}, Room: authSlot{Active: 2}})
		g1 := e.read(req.Participants[0].AuthorityKey).Snapshot
		require.Equal(c, nb.Owner(), g1.Owner)
		require.Greater(c, g1.AuthorityOwnerGeneration, S1.AuthorityOwnerGeneration)
		// g1 and g2 were issued owner generations n and n+1; one commit
		// issues n+2 and n+3, so g1 moved exactly once.
		e.exactNumber(g1.AuthorityOwnerGeneration, S1.AuthorityOwnerGeneration+2, "moved once")
		require.Equal(c, "agg-0", string(g1.Payload))
	})
}

// auth216 AUTH-216 removeAllByOwner vs commit.
func auth216(c *Case) {
	e := newAuthEnv(c)
	e.races("w5", func(rep int, id string, na, _ *authNode) {
		R := e.RS(id, na.Target())
		removed, cr := authRace(c, func() (int64, error) { return c.S.RemoveAllByOwner(c.Ctx, e.A) },
			bind(c, location.Store.Commit, fixture.CommitRequest(id, R, na.Target())))
		require.Positive(c, removed, "rep %d", rep)
		require.Contains(c, []location.ResultKind{location.KindCommitted, location.KindStale}, cr.Kind, "rep %d", rep)
		e.requireMissing(fixture.KS(id))
		e.publish(na, location.IntentNewClaim)
		require.True(c, e.U(na).zero(), "rep %d: U after removal: %+v", rep, e.U(na))
	})
}
