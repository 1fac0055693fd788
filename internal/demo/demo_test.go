package demo

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/checktest"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// newStore returns a store over the shared member under a fresh prefix.
func newStore(t *testing.T) *etcdstore.Store {
	t.Helper()
	c := etcdtest.Connect(t)
	// The first request opens the connection, so that its goroutines
	// exist before a leak check starts.
	_, err := c.Get(t.Context(), "warm-up")
	require.NoError(t, err)
	s, err := etcdstore.New(c, etcdstore.Options{Root: etcdtest.UniquePrefix(t)})
	require.NoError(t, err)
	return s
}

func TestOptions(t *testing.T) {
	checktest.Run(t, []checktest.Case[Options]{
		{Name: "defaults", Opts: Options{}},
		{Name: "quick", Opts: Options{Quick: true, Nodes: 3}},
		{Name: "two nodes", Opts: Options{Nodes: 2}, WantErr: "nodes 2 must be in 3..20"},
		{Name: "too many nodes", Opts: Options{Nodes: 21}, WantErr: "nodes 21 must be in 3..20"},
		{Name: "no actors", Opts: Options{Actors: -1}, WantErr: "actors -1 must be in 1..50"},
		{Name: "short lease", Opts: Options{LeaseTTL: 500 * time.Millisecond}, WantErr: "lease TTL 500ms must be at least 1s"},
		{Name: "polling above ttl", Opts: Options{PollingInterval: time.Minute}, WantErr: "polling interval 1m0s"},
		{Name: "negative timeout", Opts: Options{StageTimeout: -time.Second}, WantErr: "stage timeout -1s"},
	})
	o, err := Options{Quick: true}.resolve()
	require.NoError(t, err)
	require.Equal(t, QuickPollingInterval, o.PollingInterval)
	require.Equal(t, DefaultNodes, o.Nodes)
}

func TestRun(t *testing.T) {
	s := newStore(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	defer func() { _ = s.Close() }() // the store's watches run until it is closed
	var out bytes.Buffer
	sum, err := Run(t.Context(), s, Options{Nodes: 4, Actors: 5, Quick: true, Out: &out})
	require.NoError(t, err, out.String())
	require.True(t, sum.OK())
	var names []string
	for _, st := range sum.Stages {
		names = append(names, st.Name)
		require.Equal(t, outcomeOK, st.Outcome, st.Name)
	}
	require.Equal(t, []string{"join", "actors", "relocate", "crash", "adopt", "gc", "rejoin", "shutdown"}, names)
	require.Equal(t, "4 nodes, 6 links", sum.Stages[0].Detail)
	require.Equal(t, "5 actors created", sum.Stages[1].Detail)
	require.Equal(t, "player-1 moved node-1 → node-4", sum.Stages[2].Detail)
	require.Equal(t, "node-3 crashed; 3 survivors, 3 links", sum.Stages[3].Detail)
	require.Equal(t, "node-4 adopted player-3", sum.Stages[4].Detail)
	require.Equal(t, "1 dead owner (node-3), 2 rows removed", sum.Stages[5].Detail)
	require.Regexp(t, `^node-3 back \(lease gen \d+, lifecycle 2\); 6 links$`, sum.Stages[6].Detail)
	require.Equal(t, "4 nodes left; nothing remains", sum.Stages[7].Detail)
	require.Contains(t, out.String(), "demo: every expected state was reached")
}

// brokenGC answers every collection with an empty report.
type brokenGC struct{ *etcdstore.Store }

// CollectGarbage implements Store.
func (brokenGC) CollectGarbage(context.Context, etcdstore.GCOptions) (etcdstore.GCReport, error) {
	return etcdstore.GCReport{}, nil
}

// A stage that does not reach its state fails the run with a clear error,
// the later stages are skipped, and nothing keeps running.
func TestRunFailure(t *testing.T) {
	s := newStore(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	defer func() { _ = s.Close() }() // the store's watches run until it is closed
	var out bytes.Buffer
	sum, err := Run(t.Context(), brokenGC{s}, Options{Nodes: 3, Actors: 1, Quick: true, Out: &out})
	require.EqualError(t, err, "stage gc: dry run found 0 rows of dead owners [], want 2 rows (descriptor and peer row) of [node-2]")
	require.False(t, sum.OK())
	outcomes := map[string]string{}
	for _, st := range sum.Stages {
		outcomes[st.Name] = st.Outcome
	}
	require.Equal(t, map[string]string{"join": "ok", "actors": "ok", "relocate": "ok", "crash": "ok", "adopt": "ok",
		"gc": "FAILED", "rejoin": "skipped", "shutdown": "skipped"}, outcomes)
	require.Contains(t, out.String(), "  FAILED: dry run found 0 rows of dead owners [], want 2 rows (descriptor and peer row) of [node-2]")
	require.True(t, strings.HasSuffix(strings.TrimSpace(out.String()), "demo: FAILED after "+seconds(sum.Took)), out.String())
	// The teardown released every lease.
	for _, n := range []string{"node-1", "node-2", "node-3"} {
		res, err := s.ReadOwnerLease(t.Context(), n)
		require.NoError(t, err)
		require.Equal(t, "missing", string(res.Kind), n)
	}
}

// An interrupted run stops at once with the context's error.
func TestRunCancelled(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	sum, err := Run(ctx, s, Options{Nodes: 3, Quick: true})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, outcomeFailed, sum.Stages[0].Outcome)
}
