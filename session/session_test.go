package session_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/session"
)

// The session on memstore, with manual clocks (the store's and the
// session's are one): every time below is exact.

func TestOptionsAreCheckedBeforeAnythingIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts session.Options
		want string // in the error; "" = accepted
	}{
		{name: "defaults", opts: session.Options{}},
		{name: "framework defaults spelled out", opts: session.Options{TTL: 15 * time.Second, RenewInterval: 5 * time.Second,
			RenewTimeout: 3 * time.Second, FencingMargin: 5 * time.Second}},
		{name: "negative TTL", opts: session.Options{TTL: -time.Second}, want: "session TTL -1s is negative"},
		{name: "negative interval", opts: session.Options{RenewInterval: -1}, want: "session RenewInterval -1ns is negative"},
		{name: "negative timeout", opts: session.Options{RenewTimeout: -1}, want: "session RenewTimeout -1ns is negative"},
		{name: "negative margin", opts: session.Options{FencingMargin: -1}, want: "session FencingMargin -1ns is negative"},
		{name: "interval + timeout = TTL - margin", opts: session.Options{RenewInterval: 7 * time.Second},
			want: "RenewInterval + RenewTimeout (7s + 3s = 10s) must be less than TTL − FencingMargin (15s − 5s = 10s)"},
		{name: "margin eats the TTL", opts: session.Options{TTL: 5 * time.Second}, want: "must be less than TTL − FencingMargin (5s − 5s = 0s)"},
		{name: "sub-millisecond TTL", opts: session.Options{TTL: time.Microsecond, RenewInterval: 1, RenewTimeout: 1, FencingMargin: 1},
			want: "session TTL 1µs is under one millisecond"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newMemWorld()
			opts := tc.opts
			opts.Clock = w.clk
			s, err := session.New(t.Context(), w.store, "a", opts)
			if tc.want == "" {
				require.NoError(t, err)
				require.NoError(t, s.Close(t.Context()))
				return
			}
			require.ErrorContains(t, err, tc.want)
			ie, ok := location.AsInputError(err)
			require.True(t, ok, "an *location.InputError: %v", err)
			require.Equal(t, session.CodeTiming, ie.Code)
			require.Equal(t, int64(0), w.store.claims.Load(), "nothing is sent to the store")
			require.Equal(t, location.KindMissing, w.read(t, "a").Kind)
		})
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	w := newMemWorld()
	_, err := session.New(t.Context(), w.store, " ", w.options())
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	_, err = session.New(t.Context(), nil, "a", w.options())
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	require.Equal(t, int64(0), w.store.claims.Load())
}

func TestRenewsOnScheduleAndFencesWithTheMargin(t *testing.T) {
	w := newMemWorld()
	var renewals []session.Renewal
	var mu sync.Mutex
	opts := w.options()
	opts.OnRenewal = func(r session.Renewal) {
		mu.Lock()
		defer mu.Unlock()
		renewals = append(renewals, r)
	}
	s, err := session.New(t.Context(), w.store, "a", opts)
	require.NoError(t, err)
	defer s.Close(context.Background())
	require.Equal(t, location.OwnerToken{OwnerID: "a", LeaseGeneration: 1}, s.Token())
	require.Equal(t, t0.Add(10*time.Second), s.TrustedUntil(), "claim time + TTL − margin")
	require.True(t, s.Valid())

	for i := 1; i <= 3; i++ {
		w.clk.Advance(5 * time.Second)
		eventually(t, func() bool { return s.Status().Renewals == int64(i) }, "renewal %d", i)
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		require.Equal(t, at.Add(15*time.Second), w.read(t, "a").LeaseExpiresAt, "renewed with the TTL from now")
		st := s.Status()
		require.Equal(t, at, st.LastRenewal)
		require.Equal(t, at.Add(10*time.Second), st.TrustedUntil)
		require.NoError(t, st.LastError)
		require.Equal(t, 0, st.Failures)
		require.False(t, st.KeptAlive, "memstore has no OwnerLeaseKeeper")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, renewals, 4, "the claim and three renewals")
	require.Equal(t, location.KindClaimed, renewals[0].Kind)
	for _, r := range renewals[1:] {
		require.Equal(t, location.KindRenewed, r.Kind)
		require.Equal(t, r.Sent.Add(10*time.Second), r.TrustedUntil)
	}
}

// Finding 3 of issue 12: the holder's Done never closed during an outage.
// The session's closes when no renewal was confirmed for TTL − margin.
func TestUnreachableStoreEndsTheSessionAtTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fault
	}{
		{name: "renewals hang until their timeout", fault: unreachable},
		{name: "renewals fail at once", fault: failing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newMemWorld()
			s, err := session.New(t.Context(), w.store, "a", w.options())
			require.NoError(t, err)
			w.store.setRenewFault(tc.fault)

			w.clk.Advance(5 * time.Second) // the first renewal starts
			eventually(t, func() bool { return w.store.renews.Load() >= 1 }, "the renewal was sent")
			w.clk.Advance(3 * time.Second) // its timeout (or retries)
			eventually(t, func() bool { return s.Status().Failures >= 1 }, "the failure is recorded")
			require.True(t, s.Valid(), "trusted until claim + 10 s")
			select {
			case <-s.Done():
				t.Fatal("the session ended before its deadline")
			default:
			}
			w.clk.Advance(2 * time.Second) // claim + TTL − margin
			waitDone(t, s)
			waitClosed(t, s.Stopped(), "the loop, which logs its last failure, ended")
			st := s.Status()
			require.ErrorIs(t, s.Err(), session.ErrDeadlinePassed)
			require.ErrorIs(t, s.Err(), location.ErrUnavailable, "the last renewal error is wrapped")
			require.Equal(t, t0, st.LastRenewal, "the claim was the last confirmation")
			require.Equal(t, t0.Add(10*time.Second), st.EndedAt, "ended exactly at last confirmation + TTL − margin")
			require.LessOrEqual(t, st.EndedAt.Sub(st.LastRenewal), 15*time.Second-5*time.Second+3*time.Second)
			require.Error(t, st.LastError)
			require.False(t, s.Valid())
			require.Equal(t, st.EndedAt, s.TrustedUntil())
			require.True(t, w.logs.has(slog.LevelWarn, "session: owner-lease renewal failed; retrying"),
				"renewal failures are logged at Warn: %v", w.logs.messages(slog.LevelWarn))
			require.True(t, w.logs.has(slog.LevelWarn, "session: ended"))

			require.Equal(t, location.KindFound, w.read(t, "a").Kind, "the deadline does not release")
			require.NoError(t, s.Close(t.Context()))
			require.Equal(t, location.KindMissing, w.read(t, "a").Kind, "Close releases")
			require.ErrorIs(t, s.Err(), session.ErrDeadlinePassed, "the first cause stays")
		})
	}
}

func TestARenewalThatRecoversKeepsTheSession(t *testing.T) {
	w := newMemWorld()
	s, err := session.New(t.Context(), w.store, "a", w.options())
	require.NoError(t, err)
	defer s.Close(context.Background())
	w.store.setRenewFault(failing)
	w.clk.Advance(5 * time.Second)
	eventually(t, func() bool { return s.Status().Failures == 1 }, "the first attempt fails")
	require.Error(t, s.Status().LastError)
	w.store.setRenewFault(nil)
	w.clk.Advance(200 * time.Millisecond) // past the first retry wait (at most 100 ms)
	eventually(t, func() bool { return s.Status().Renewals == 1 }, "the retry is confirmed")
	st := s.Status()
	require.NoError(t, st.LastError)
	require.Equal(t, 0, st.Failures)
	require.Equal(t, t0.Add(5200*time.Millisecond), st.LastRenewal)
	require.Equal(t, st.LastRenewal.Add(10*time.Second), st.TrustedUntil)
	require.True(t, w.logs.has(slog.LevelInfo, "session: owner-lease renewal confirmed again"))
	require.NoError(t, s.Err())
}

func TestLostLeaseEndsTheSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, w *memWorld, tok location.OwnerToken)
	}{
		{name: "expired", lose: func(t *testing.T, w *memWorld, _ location.OwnerToken) {
			require.NoError(t, w.mem.ExpireOwnerLease(t.Context(), "a"))
		}},
		{name: "released by another process", lose: func(t *testing.T, w *memWorld, tok location.OwnerToken) {
			kind, err := w.mem.ReleaseOwnerLease(t.Context(), tok)
			require.NoError(t, err)
			require.Equal(t, location.KindReleased, kind)
		}},
		{name: "taken over", lose: func(t *testing.T, w *memWorld, tok location.OwnerToken) {
			_, err := w.mem.ReleaseOwnerLease(t.Context(), tok)
			require.NoError(t, err)
			storetest.Claim(t, t.Context(), w.mem, "a", time.Minute)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newMemWorld()
			s, err := session.New(t.Context(), w.store, "a", w.options())
			require.NoError(t, err)
			tc.lose(t, w, s.Token())
			w.clk.Advance(5 * time.Second)
			waitDone(t, s)
			require.ErrorIs(t, s.Err(), session.ErrLeaseLost)
			require.Equal(t, t0.Add(5*time.Second), s.Status().EndedAt)
			require.False(t, s.Valid())
			require.NoError(t, s.Close(t.Context()))
			require.Equal(t, int64(0), w.store.releases.Load(), "a lost lease is not released")
		})
	}
}

// Finding 3 of issue 12: closing the holder did not release the lease.
func TestCloseReleasesTheLease(t *testing.T) {
	w := newMemWorld()
	s, err := session.New(t.Context(), w.store, "a", w.options())
	require.NoError(t, err)
	require.Equal(t, location.KindFound, w.read(t, "a").Kind)
	require.NoError(t, s.Close(t.Context()))
	waitDone(t, s)
	require.ErrorIs(t, s.Err(), session.ErrClosed)
	require.Equal(t, location.KindMissing, w.read(t, "a").Kind, "Close released the lease")
	require.NoError(t, s.Close(t.Context()), "Close is idempotent")
	require.Equal(t, int64(1), w.store.releases.Load())
	require.False(t, s.Valid())
}

func TestOrphanLeavesTheLeaseForAdopt(t *testing.T) {
	w := newMemWorld()
	s, err := session.New(t.Context(), w.store, "a", w.options())
	require.NoError(t, err)
	tok := s.Orphan()
	require.ErrorIs(t, s.Err(), session.ErrOrphaned)
	require.NoError(t, s.Close(t.Context()), "Close after Orphan releases nothing")
	require.Equal(t, int64(0), w.store.releases.Load())
	require.Equal(t, location.KindFound, w.read(t, "a").Kind)

	w.clk.Advance(time.Second)
	next, err := session.Adopt(t.Context(), w.store, tok, w.options())
	require.NoError(t, err)
	require.Equal(t, tok, next.Token())
	require.Equal(t, t0.Add(16*time.Second), w.read(t, "a").LeaseExpiresAt, "Adopt renewed the lease")
	require.Equal(t, t0.Add(11*time.Second), next.TrustedUntil())
	require.NoError(t, next.Close(t.Context()))
	require.Equal(t, location.KindMissing, w.read(t, "a").Kind)

	_, err = session.Adopt(t.Context(), w.store, tok, w.options())
	require.ErrorIs(t, err, session.ErrLeaseLost, "a released token cannot be adopted")
}

// Finding 3 of issue 12: the holder took no context. The session ends with
// the context given to New, and does not release on its own.
func TestContextEndsTheSession(t *testing.T) {
	w := newMemWorld()
	ctx, cancel := context.WithCancel(t.Context())
	s, err := session.New(ctx, w.store, "a", w.options())
	require.NoError(t, err)
	cancel()
	waitDone(t, s)
	require.ErrorIs(t, s.Err(), context.Canceled)
	require.False(t, s.Valid())
	require.Equal(t, location.KindFound, w.read(t, "a").Kind)
	require.NoError(t, s.Close(t.Context()))
	require.Equal(t, location.KindMissing, w.read(t, "a").Kind)
}

func TestNewAnswersALiveLeaseAsHeld(t *testing.T) {
	w := newMemWorld()
	s, err := session.New(t.Context(), w.store, "a", w.options())
	require.NoError(t, err)
	defer s.Close(context.Background())
	_, err = session.New(t.Context(), w.store, "a", w.options())
	require.ErrorIs(t, err, session.ErrLeaseHeld)
}

// New tries a claim again when nothing was written or when its outcome is
// unknown. With a store that cannot settle its own claim whose outcome was
// unknown (no location.OwnerLeaseClaimSettler, as here; etcdstore is one,
// inflight_test.go), the next attempt conflicts with that claim's lease:
// ErrLeaseHeld, saying so.
func TestNewRetriesAClaimThatFailed(t *testing.T) {
	tests := []struct {
		name    string
		fault   fault
		faults  int
		applies bool // the failed claim applied
		claims  int64
		wantErr string // "" for a session
	}{
		{name: "nothing written", fault: failing, faults: 2, claims: 3},
		{name: "outcome unknown, not applied", fault: answerLost, faults: 2, claims: 3},
		{name: "outcome unknown, applied, not settled by the store", fault: answerLost, faults: 1, applies: true,
			claims: 2, wantErr: `session: the owner id holds a live lease: owner id "a" (maybe by an earlier claim of this call ` +
				"whose outcome is unknown, which the store cannot settle: it expires within the TTL)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newMemWorld()
			w.store.claimFault, w.store.claimFaults, w.store.claimApplies = tc.fault, tc.faults, tc.applies
			type result struct {
				s   *session.Session
				err error
			}
			done := make(chan result, 1)
			go func() {
				s, err := session.New(t.Context(), w.store, "a", w.options())
				done <- result{s, err}
			}()
			// Each failed attempt is logged, then New sleeps on the clock
			// (its attempt's timer stopped, its wait's armed) for at most
			// 100 ms, doubled each time: move the clock only then, so that
			// an attempt never sees it move.
			wait := 100 * time.Millisecond
			for retry := 1; int64(retry) < tc.claims; retry++ {
				eventually(t, func() bool {
					return len(w.logs.messages(slog.LevelWarn)) == retry && w.clk.Timers() == 1
				}, "attempt %d failed and New waits", retry)
				w.clk.Advance(wait)
				wait *= 2
			}
			r := <-done
			require.Equal(t, tc.claims, w.store.claims.Load())
			if tc.wantErr != "" {
				require.ErrorIs(t, r.err, session.ErrLeaseHeld)
				require.EqualError(t, r.err, tc.wantErr)
				return
			}
			require.NoError(t, r.err)
			require.NoError(t, r.s.Close(t.Context()))
		})
	}
}

func TestNewGivesUpWithTheContext(t *testing.T) {
	w := newMemWorld()
	w.store.claimFault, w.store.claimFaults = unreachable, 1
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := session.New(ctx, w.store, "a", w.options())
		done <- err
	}()
	eventually(t, func() bool { return w.store.claims.Load() == 1 }, "the claim was sent")
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, location.ErrUnavailable)
}

func TestKeeperPath(t *testing.T) {
	t.Run("a lease the keeper reports lost ends the session at once", func(t *testing.T) {
		w := newMemWorld()
		ks := &keeperStore{faultyStore: w.store, lost: make(chan struct{})}
		s, err := session.New(t.Context(), ks, "a", w.options())
		require.NoError(t, err)
		eventually(t, func() bool { return s.Status().Renewals == 1 }, "the first renewal, right after the claim, keeps the lease")
		require.True(t, s.Status().KeptAlive)
		require.Equal(t, int64(1), ks.keeps.Load())
		w.clk.Advance(5 * time.Second)
		eventually(t, func() bool { return s.Status().Renewals == 2 }, "the second goes through the kept lease")
		require.Equal(t, int64(1), ks.keeps.Load())
		close(ks.lost)
		waitDone(t, s)
		require.ErrorIs(t, s.Err(), session.ErrLeaseLost)
		require.Equal(t, t0.Add(5*time.Second), s.Status().EndedAt, "without waiting for a renewal")
		require.NoError(t, s.Close(t.Context()))
	})
	t.Run("an unsupported keeper falls back to RenewOwnerLease", func(t *testing.T) {
		w := newMemWorld()
		ks := &keeperStore{faultyStore: w.store, lost: make(chan struct{}), unsupported: true}
		s, err := session.New(t.Context(), ks, "a", w.options())
		require.NoError(t, err)
		eventually(t, func() bool { return s.Status().Renewals == 1 }, "the first renewal, right after the claim")
		w.clk.Advance(5 * time.Second)
		eventually(t, func() bool { return s.Status().Renewals == 2 }, "the second, on schedule")
		require.False(t, s.Status().KeptAlive)
		require.Equal(t, int64(1), ks.keeps.Load(), "asked once")
		require.NoError(t, s.Close(t.Context()))
	})
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{session.ErrLeaseLost, session.ErrDeadlinePassed, session.ErrClosed, session.ErrOrphaned,
		session.ErrLeaseHeld, session.ErrGenerationExhausted}
	for i, a := range all {
		for j, b := range all {
			require.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}
