package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/session"
)

// WhileTrusted's context ends with the first of: its parent, the session's
// end, the trust deadline as it stood at the call (session clock), its
// cancel function; each with its own cause. Everything runs on the manual
// clock: a timer fires in the goroutine that moves the clock, so the
// deadline is checked without waiting; the session's end is seen by a
// watcher goroutine, so it is waited for.
func TestWhileTrusted(t *testing.T) {
	errParent := errors.New("test: the parent was cancelled")
	for _, tc := range []struct {
		name string
		// before runs before WhileTrusted is called.
		before func(t *testing.T, w *memWorld, s *session.Session, until time.Time)
		// act ends the context (it is open when act starts, unless
		// atOnce). It returns once it is done, or fails.
		act func(t *testing.T, w *memWorld, s *session.Session, until time.Time,
			ctx context.Context, cancelParent context.CancelCauseFunc, cancel context.CancelFunc)
		// atOnce: the context is done when WhileTrusted returns.
		atOnce bool
		want   error
		// ended: the session ended, and want is in its end error too.
		ended bool
		// timers is the number of timers left on the clock once the
		// context is done (the context's own is stopped): the session's
		// deadline and renewal sleep while it runs, none once it ended.
		timers int
	}{
		{
			name: "the trust deadline as it stood at the call is reached",
			act: func(t *testing.T, w *memWorld, s *session.Session, until time.Time,
				ctx context.Context, _ context.CancelCauseFunc, _ context.CancelFunc) {
				// A renewal moves the session's deadline, not the context's.
				w.clk.Advance(5 * time.Second)
				eventually(t, func() bool { return s.Status().Renewals == 1 }, "the renewal is confirmed")
				require.True(t, s.TrustedUntil().After(until))
				eventually(t, func() bool { return w.clk.Timers() == 3 }, "the renewal loop is asleep again")
				// The manual clock holds whole milliseconds: until − 1 ns
				// reads until − 1 ms, the last time it can show before until.
				w.clk.Set(until.Add(-time.Nanosecond))
				require.Equal(t, until.Add(-time.Millisecond), w.clk.Now())
				requireOpen(t, ctx.Done(), "done before the deadline")
				w.clk.Set(until)
				requireClosed(t, ctx.Done(), "not done at the deadline")
				require.NoError(t, s.Err(), "the session runs: the context's own deadline ended it")
				require.True(t, s.Valid())
				require.Contains(t, context.Cause(ctx).Error(), until.Format(time.RFC3339Nano))
			},
			want: session.ErrDeadlinePassed,
			// The renewal the clock's move woke may re-arm its sleep later:
			// not counted.
			timers: -1,
		},
		{
			name: "the session is closed",
			act: func(t *testing.T, _ *memWorld, s *session.Session, _ time.Time,
				ctx context.Context, _ context.CancelCauseFunc, _ context.CancelFunc) {
				require.NoError(t, s.Close(t.Context()))
				waitClosed(t, ctx.Done(), "the context's end at the session's")
			},
			want:  session.ErrClosed,
			ended: true,
		},
		{
			name: "the lease is lost",
			act: func(t *testing.T, w *memWorld, s *session.Session, until time.Time,
				ctx context.Context, _ context.CancelCauseFunc, _ context.CancelFunc) {
				require.NoError(t, w.mem.ExpireOwnerLease(t.Context(), "a"))
				w.clk.Advance(5 * time.Second) // the renewal answers stale
				waitClosed(t, ctx.Done(), "the context's end at the session's")
				require.True(t, w.clk.Now().Before(until))
			},
			want:  session.ErrLeaseLost,
			ended: true,
		},
		{
			name: "the parent is cancelled",
			act: func(t *testing.T, _ *memWorld, s *session.Session, _ time.Time,
				ctx context.Context, cancelParent context.CancelCauseFunc, _ context.CancelFunc) {
				cancelParent(errParent)
				requireClosed(t, ctx.Done(), "not done with its parent")
				require.NoError(t, s.Err())
			},
			want:   errParent,
			timers: 2,
		},
		{
			name: "the cancel function",
			act: func(t *testing.T, w *memWorld, s *session.Session, until time.Time,
				ctx context.Context, _ context.CancelCauseFunc, cancel context.CancelFunc) {
				cancel()
				requireClosed(t, ctx.Done(), "not done when cancelled")
				require.Equal(t, 2, w.clk.Timers(), "the cancel function stopped the context's timer")
				require.NoError(t, s.Err())
			},
			want:   context.Canceled,
			timers: 2,
		},
		{
			name: "the session was closed before the call",
			before: func(t *testing.T, _ *memWorld, s *session.Session, _ time.Time) {
				require.NoError(t, s.Close(t.Context()))
			},
			atOnce: true,
			want:   session.ErrClosed,
			ended:  true,
		},
		{
			name: "the session ended at its deadline before the call",
			before: func(t *testing.T, w *memWorld, s *session.Session, until time.Time) {
				w.store.setRenewFault(unreachable)
				w.clk.Set(until)
				waitDone(t, s)
				waitClosed(t, s.Stopped(), "the session's goroutines ended")
				require.ErrorIs(t, s.Err(), session.ErrDeadlinePassed)
			},
			atOnce: true,
			want:   session.ErrDeadlinePassed,
			ended:  true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newMemWorld()
			s, err := session.New(t.Context(), w.store, "a", w.options())
			require.NoError(t, err)
			defer s.Close(context.Background())
			sleeping(t, w.clk)
			until := s.TrustedUntil()
			require.Equal(t, t0.Add(10*time.Second), until)
			if tc.before != nil {
				tc.before(t, w, s, until)
			}
			timers := w.clk.Timers()

			parent, cancelParent := context.WithCancelCause(t.Context())
			defer cancelParent(nil)
			ctx, cancel := s.WhileTrusted(parent)
			defer cancel()
			if tc.atOnce {
				requireClosed(t, ctx.Done(), "not done at once")
				require.Equal(t, timers, w.clk.Timers(), "no timer armed")
			} else {
				requireOpen(t, ctx.Done(), "done at once")
				require.Equal(t, timers+1, w.clk.Timers(), "the context's timer is armed")
				tc.act(t, w, s, until, ctx, cancelParent, cancel)
			}
			cause := context.Cause(ctx)
			require.ErrorIs(t, cause, tc.want)
			require.ErrorIs(t, ctx.Err(), context.Canceled, "Err is Canceled, whatever the cause")
			if tc.want != session.ErrDeadlinePassed {
				require.NotErrorIs(t, cause, session.ErrDeadlinePassed)
			}
			if tc.timers >= 0 {
				eventually(t, func() bool { return w.clk.Timers() == tc.timers }, "timers left: %d, want %d", w.clk.Timers(), tc.timers)
			}

			// Nothing changes the cause once it is done: not the cancel
			// function, not the clock reaching the deadline.
			cancel()
			if w.clk.Now().Before(until) {
				w.clk.Set(until)
			}
			require.Equal(t, cause, context.Cause(ctx))
			if tc.ended {
				require.ErrorIs(t, s.Err(), tc.want, "the cause wraps the session's end error")
			}
		})
	}
}

// requireClosed fails when ch is open.
func requireClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal(msg)
	}
}
