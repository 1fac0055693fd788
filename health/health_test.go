package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/session"
)

// switchable is a check whose answer the test sets.
type switchable struct{ err atomic.Pointer[error] }

func (s *switchable) set(err error) { s.err.Store(&err) }

func (s *switchable) run(context.Context) error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

// The probes answer like the Kubernetes API server's: "ok", or the list of
// checks with the failed ones' reasons; liveness runs the liveness checks
// only; verbose, exclude and single checks.
func TestHandler(t *testing.T) {
	var etcd, stuck switchable
	h, err := health.NewHandler(
		health.Check{Name: "etcd", Run: etcd.run},
		health.Check{Name: "worker", Run: stuck.run, Liveness: true},
	)
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Install(mux)

	for _, tc := range []struct {
		name       string
		etcd       error
		stuck      error
		target     string
		wantStatus int
		wantBody   string
	}{
		{name: "ready", target: "/readyz", wantStatus: 200, wantBody: "ok"},
		{name: "live", target: "/livez", wantStatus: 200, wantBody: "ok"},
		{name: "ready, verbose", target: "/readyz?verbose", wantStatus: 200,
			wantBody: "[+]ping ok\n[+]etcd ok\n[+]worker ok\nreadyz check passed\n"},
		{name: "live, verbose: the liveness checks only", target: "/livez?verbose", wantStatus: 200,
			wantBody: "[+]ping ok\n[+]worker ok\nlivez check passed\n"},
		{name: "etcd down: unready", etcd: errors.New("etcd has no leader"), target: "/readyz", wantStatus: 503,
			wantBody: "[+]ping ok\n[-]etcd failed: etcd has no leader\n[+]worker ok\nreadyz check failed\n"},
		{name: "etcd down: still live", etcd: errors.New("etcd has no leader"), target: "/livez", wantStatus: 200, wantBody: "ok"},
		{name: "excluded", etcd: errors.New("etcd has no leader"), target: "/readyz?exclude=etcd&verbose", wantStatus: 200,
			wantBody: "[+]ping ok\n[+]worker ok\nreadyz check passed\n"},
		{name: "a liveness check failing", stuck: errors.New("deadlocked"), target: "/livez", wantStatus: 503,
			wantBody: "[+]ping ok\n[-]worker failed: deadlocked\nlivez check failed\n"},
		{name: "one check", etcd: errors.New("etcd has no leader"), target: "/readyz/worker", wantStatus: 200, wantBody: "ok"},
		{name: "one failing check", etcd: errors.New("etcd has no leader"), target: "/readyz/etcd", wantStatus: 503,
			wantBody: "[-]etcd failed: etcd has no leader\nreadyz check failed\n"},
		{name: "a readiness check is no liveness check", target: "/livez/etcd", wantStatus: 404,
			wantBody: "health: no livez check named \"etcd\"\n"},
		{name: "under a prefix", target: "/debug/readyz", wantStatus: 200, wantBody: "ok"},
		{name: "not a probe", target: "/healthz", wantStatus: 404, wantBody: "404 page not found\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			etcd.set(tc.etcd)
			stuck.set(tc.stuck)
			target := tc.target
			var handler http.Handler = mux
			if tc.name == "under a prefix" || tc.name == "not a probe" {
				handler = h
			}
			status, body := get(t, handler, target)
			require.Equal(t, tc.wantStatus, status)
			require.Equal(t, tc.wantBody, body)
		})
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/readyz", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
}

// A check that does not answer within its timeout fails as timed out, and
// a check that panics fails with the panic; the others are not held up.
func TestTimeoutsAndPanics(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h, err := health.NewHandler(
		health.Check{Name: "slow", Timeout: 20 * time.Millisecond, Run: func(ctx context.Context) error {
			<-release // ignores ctx: the handler must not wait for it
			return nil
		}},
		health.Check{Name: "panics", Run: func(context.Context) error { panic("boom") }},
	)
	require.NoError(t, err)
	rep, err := h.Run(t.Context(), health.Readiness, "")
	require.NoError(t, err)
	require.False(t, rep.Healthy())
	require.Len(t, rep.Results, 3)
	require.NoError(t, rep.Results[0].Err)
	require.EqualError(t, rep.Results[1].Err, "no answer within 20ms: context deadline exceeded")
	require.ErrorIs(t, rep.Results[1].Err, context.DeadlineExceeded)
	require.EqualError(t, rep.Results[2].Err, "the check panicked: boom")
}

func TestNewHandlerRefusesBadChecks(t *testing.T) {
	ok := func(context.Context) error { return nil }
	for _, tc := range []struct {
		checks []health.Check
		want   string
	}{
		{[]health.Check{{Name: "", Run: ok}}, `health: check 1: name "" must be letters, digits, '-', '_' or '.'`},
		{[]health.Check{{Name: "a/b", Run: ok}}, `health: check 1: name "a/b" must be letters, digits, '-', '_' or '.'`},
		{[]health.Check{{Name: "a", Run: ok}, {Name: "a", Run: ok}}, `health: check "a" is given twice`},
		{[]health.Check{{Name: "ping", Run: ok}}, `health: check "ping" is given twice`},
		{[]health.Check{{Name: "a"}}, `health: check "a" has no Run function`},
		{[]health.Check{{Name: "a", Run: ok, Timeout: -1}}, `health: check "a": timeout -1ns is negative`},
	} {
		_, err := health.NewHandler(tc.checks...)
		require.EqualError(t, err, tc.want)
	}
}

// fakeSession is a health.Session whose state the test sets.
type fakeSession struct {
	valid  bool
	status session.Status
}

func (f fakeSession) Valid() bool            { return f.valid }
func (f fakeSession) Status() session.Status { return f.status }

func TestSessionCheck(t *testing.T) {
	t0 := time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC)
	tok := location.OwnerToken{OwnerID: "node-7", LeaseGeneration: 3}
	for _, tc := range []struct {
		name string
		s    fakeSession
		want string // "" = healthy
	}{
		{name: "trusted", s: fakeSession{valid: true}},
		{name: "ended", s: fakeSession{status: session.Status{Token: tok, EndedAt: t0, Err: fmt.Errorf("%w: stale", session.ErrLeaseLost)}},
			want: `the owner-lease session of "node-7" ended at 2026-07-03T00:00:00Z: session: owner lease lost: stale`},
		{name: "not trusted", s: fakeSession{status: session.Status{Token: tok, LastRenewal: t0, TrustedUntil: t0.Add(10 * time.Second),
			LastError: errors.New("etcd: no leader"), Failures: 4}},
			want: `the owner lease of "node-7" is not trusted: its last renewal confirmed was sent at 2026-07-03T00:00:00Z, trusted until 2026-07-03T00:00:10Z; 4 renewals failed since, the last with: etcd: no leader`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := health.SessionCheck(tc.s)
			require.Equal(t, "session", c.Name)
			require.False(t, c.Liveness)
			err := c.Run(t.Context())
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.want)
		})
	}
}

type storeFailer bool

func (f storeFailer) StoreFailed() bool { return bool(f) }

func TestAutoConnectCheck(t *testing.T) {
	c := health.AutoConnectCheck(storeFailer(false))
	require.Equal(t, "autoconnect", c.Name)
	require.False(t, c.Liveness)
	require.NoError(t, c.Run(t.Context()))
	require.EqualError(t, health.AutoConnectCheck(storeFailer(true)).Run(t.Context()),
		"auto-connect's last tick could not read the store: connections are kept and the loop retries")
}
