package observe_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/observe/internal/promtest"
	"github.com/zlink-systems/zlink-etcd/session"
)

// fakeSession is a TrackedSession whose state the test sets.
type fakeSession struct {
	status atomic.Pointer[session.Status]
	valid  atomic.Bool
	done   chan struct{}
}

func newFakeSession(lastRenewal, trustedUntil time.Time) *fakeSession {
	f := &fakeSession{done: make(chan struct{})}
	f.status.Store(&session.Status{LastRenewal: lastRenewal, TrustedUntil: trustedUntil})
	f.valid.Store(true)
	return f
}

func (f *fakeSession) Valid() bool { return f.valid.Load() }

func (f *fakeSession) Status() session.Status { return *f.status.Load() }

func (f *fakeSession) Done() <-chan struct{} { return f.done }

func (f *fakeSession) Err() error { return f.Status().Err }

// end ends the session with err: it is no longer valid.
func (f *fakeSession) end(err error) {
	st := f.Status()
	st.Err = err
	f.status.Store(&st)
	f.valid.Store(false)
	close(f.done)
}

func newNodeMetrics(t *testing.T) (*observe.NodeMetrics, *prometheus.Registry, *clock.Manual) {
	t.Helper()
	reg := prometheus.NewRegistry()
	clk := clock.NewManual(fixture.T0())
	m, err := observe.NewNodeMetrics(reg, observe.NodeOptions{Clock: clk})
	require.NoError(t, err)
	return m, reg, clk
}

func TestRenewals(t *testing.T) {
	m, reg, _ := newNodeMetrics(t)
	t0 := fixture.T0()
	for _, r := range []session.Renewal{
		{Kind: location.KindClaimed, Sent: t0, Answered: t0.Add(2 * time.Millisecond)},
		{Kind: location.KindRenewed, Sent: t0, Answered: t0.Add(time.Millisecond)},
		{Kind: location.KindRenewed, Sent: t0, Answered: t0.Add(time.Millisecond)},
		{Err: errors.New("etcd: no leader"), Sent: t0, Answered: t0.Add(time.Second)},
		{Kind: location.KindStale, Sent: t0, Answered: t0.Add(time.Millisecond)},
	} {
		m.OnRenewal(r)
	}
	require.Equal(t, []string{"result=claimed", "result=error", "result=renewed", "result=stale"},
		promtest.Labels(t, reg, "zlink_session_renewals_total"))
	require.Equal(t, 2.0, promtest.Value(t, reg, "zlink_session_renewals_total", "result", "renewed"))
	h := promtest.Series(t, reg, "zlink_session_renewal_duration_seconds")
	require.Len(t, h, 1)
	require.Equal(t, uint64(5), h[0].GetHistogram().GetSampleCount())
	require.InDelta(t, 1.005, h[0].GetHistogram().GetSampleSum(), 1e-9)
}

// Tracked sessions are read at scrape (on the sessions' clock) until they
// end; each end is counted once by cause.
func TestTrackedSessions(t *testing.T) {
	m, reg, clk := newNodeMetrics(t)
	t0 := fixture.T0()
	require.Equal(t, 0.0, promtest.Value(t, reg, "zlink_sessions_running"))
	require.False(t, promtest.Has(t, reg, "zlink_session_last_renewal_age_seconds"), "no session, no age")

	a := newFakeSession(t0, t0.Add(10*time.Second))
	b := newFakeSession(t0.Add(-3*time.Second), t0.Add(7*time.Second))
	m.TrackSession(a)
	m.TrackSession(b)
	m.TrackSession(a) // tracked once
	clk.Advance(2 * time.Second)
	require.Equal(t, 2.0, promtest.Value(t, reg, "zlink_sessions_running"))
	require.Equal(t, 0.0, promtest.Value(t, reg, "zlink_sessions_untrusted"))
	require.Equal(t, 5.0, promtest.Value(t, reg, "zlink_session_last_renewal_age_seconds"), "the oldest renewal: b's")
	require.Equal(t, 5.0, promtest.Value(t, reg, "zlink_session_trust_remaining_seconds"), "the shortest trust: b's")

	b.valid.Store(false)
	clk.Advance(6 * time.Second)
	require.Equal(t, 1.0, promtest.Value(t, reg, "zlink_sessions_untrusted"))
	require.Equal(t, 0.0, promtest.Value(t, reg, "zlink_session_trust_remaining_seconds"), "never negative")

	b.end(fmt.Errorf("%w: renewing, the store answered stale", session.ErrLeaseLost))
	a.end(session.ErrClosed)
	require.Eventually(t, func() bool { return promtest.Value(t, reg, "zlink_session_ends_total") == 2 }, 10*time.Second, time.Millisecond)
	require.Equal(t, []string{"cause=closed", "cause=lease_lost"}, promtest.Labels(t, reg, "zlink_session_ends_total"))
	require.Equal(t, 0.0, promtest.Value(t, reg, "zlink_sessions_running"))
	require.False(t, promtest.Has(t, reg, "zlink_session_last_renewal_age_seconds"))
}

func TestEndCause(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: stale", session.ErrLeaseLost), observe.EndLeaseLost},
		{fmt.Errorf("%w; last renewal error: timeout", session.ErrDeadlinePassed), observe.EndDeadlinePassed},
		{session.ErrClosed, observe.EndClosed},
		{session.ErrOrphaned, observe.EndOrphaned},
		{fmt.Errorf("session: %w", context.Canceled), observe.EndContext},
		{context.DeadlineExceeded, observe.EndContext},
		{errors.New("something else"), observe.EndOther},
	} {
		require.Equal(t, tc.want, observe.EndCause(tc.err), "%v", tc.err)
	}
}

// fakeReconciler reports targets; withDesired also tells its desired set.
type fakeReconciler struct{ active, desired int }

func (f fakeReconciler) ActiveTargets() []autoconnect.Target {
	return make([]autoconnect.Target, f.active)
}

type withDesired struct{ fakeReconciler }

func (f withDesired) DesiredTargets() []autoconnect.Target {
	return make([]autoconnect.Target, f.desired)
}

func TestAutoConnect(t *testing.T) {
	m, reg, _ := newNodeMetrics(t)
	for _, r := range []autoconnect.TickReport{
		{Took: 20 * time.Millisecond},
		{Took: time.Millisecond, Skipped: true},
		{Took: time.Millisecond, Skipped: true},
		{Took: 3 * time.Second, StoreFailed: true},
		{Took: time.Millisecond, Err: context.Canceled},
	} {
		m.OnTick(r)
	}
	require.Equal(t, []string{"result=error", "result=reconciled", "result=skipped", "result=store_failure"},
		promtest.Labels(t, reg, "zlink_autoconnect_ticks_total"))
	require.Equal(t, 2.0, promtest.Value(t, reg, "zlink_autoconnect_ticks_total", "result", "skipped"))
	require.Equal(t, 5.0, promtest.Value(t, reg, "zlink_autoconnect_tick_duration_seconds"))
	require.Equal(t, 0.0, promtest.Value(t, reg, "zlink_autoconnect_store_failed"), "the last tick's")
	m.OnTick(autoconnect.TickReport{StoreFailed: true})
	require.Equal(t, 1.0, promtest.Value(t, reg, "zlink_autoconnect_store_failed"))
	require.Greater(t, promtest.Value(t, reg, "zlink_autoconnect_last_tick_timestamp_seconds"), 0.0)

	var sink autoconnect.EventSink = m
	sink.DesiredSetChanged(autoconnect.DesiredSetChange{ConnectedEndpoints: []string{"a", "b"}, DisconnectedEndpoints: []string{"c"}})
	sink.DesiredSetChanged(autoconnect.DesiredSetChange{ConnectedEndpoints: []string{"c"}})
	require.Equal(t, 3.0, promtest.Value(t, reg, "zlink_autoconnect_connects_total"))
	require.Equal(t, 1.0, promtest.Value(t, reg, "zlink_autoconnect_disconnects_total"))

	require.False(t, promtest.Has(t, reg, "zlink_autoconnect_connected_targets"), "no source, no gauge")
	m.SetAutoConnect(observe.ReconcilerStatus(fakeReconciler{active: 2}))
	require.Equal(t, 2.0, promtest.Value(t, reg, "zlink_autoconnect_connected_targets"))
	require.False(t, promtest.Has(t, reg, "zlink_autoconnect_desired_targets"), "a reconciler that cannot tell its desired set")
	m.SetAutoConnect(observe.ReconcilerStatus(withDesired{fakeReconciler{active: 2, desired: 3}}))
	require.Equal(t, 3.0, promtest.Value(t, reg, "zlink_autoconnect_desired_targets"))
	require.Equal(t, 2.0, promtest.Value(t, reg, "zlink_autoconnect_connected_targets"))
	m.SetAutoConnect(nil)
	require.False(t, promtest.Has(t, reg, "zlink_autoconnect_connected_targets"))
}
