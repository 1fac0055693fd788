package demo

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

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

// stageHeader matches the line that starts a stage: "== 3/8 relocate: …".
var stageHeader = regexp.MustCompile(`(?m)^== (\d+)/\d+ `)

// stageTrigger is the demo's output: it keeps what the run printed and
// closes reached when the run starts stage `at`.
type stageTrigger struct {
	at int

	mu      sync.Mutex
	out     bytes.Buffer
	reached chan struct{}
}

func newStageTrigger(at int) *stageTrigger {
	return &stageTrigger{at: at, reached: make(chan struct{})}
}

// Write implements io.Writer.
func (s *stageTrigger) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range stageHeader.FindAllSubmatch(p, -1) {
		if k, _ := strconv.Atoi(string(m[1])); k == s.at {
			close(s.reached)
		}
	}
	return s.out.Write(p)
}

// String returns what the run printed.
func (s *stageTrigger) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// leaderKiller kills the leader of a cluster and brings it back.
type leaderKiller interface {
	// killLeader kills the member that leads and returns a function that
	// restarts it.
	killLeader(ctx context.Context) (restart func(ctx context.Context) error, err error)
}

// killRun is the result of one run with a leader kill.
type killRun struct {
	stage int
	delay time.Duration
	took  time.Duration
	err   error
	out   string
}

// runWithLeaderKill runs the demo on store and kills the leader when the
// run reaches a random stage, after a random delay of up to 100 ms; the
// killed member restarts after downFor. The run must reach every state.
func runWithLeaderKill(ctx context.Context, t *testing.T, store Store, k leaderKiller, rnd *rand.Rand, downFor time.Duration) killRun {
	t.Helper()
	stages := 8
	res := killRun{stage: 1 + rnd.IntN(stages), delay: time.Duration(rnd.IntN(100)) * time.Millisecond}
	out := newStageTrigger(res.stage)
	killed := make(chan error, 1)
	go func() {
		select {
		case <-out.reached:
		case <-ctx.Done():
			killed <- nil
			return
		}
		pause(ctx, res.delay) // the random moment within the stage
		restart, err := k.killLeader(ctx)
		if err != nil {
			killed <- err
			return
		}
		pause(ctx, downFor) // the member stays dead for a while
		killed <- restart(ctx)
	}()
	rctx, cancel := context.WithCancel(ctx)
	start := time.Now()
	_, res.err = Run(rctx, store, Options{Quick: true, Out: out})
	res.took = time.Since(start)
	cancel()
	require.NoError(t, <-killed)
	res.out = out.String()
	return res
}

// pause waits d (the length of a fault), or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// inProcCluster is an etcdtest cluster whose leader is hard-stopped.
type inProcCluster struct{ cl *etcdtest.Cluster }

// killLeader implements leaderKiller: the leader stops without handing
// its leadership over; it restarts from its data once its listeners have
// closed.
func (c inProcCluster) killLeader(ctx context.Context) (func(context.Context) error, error) {
	i := c.cl.Leader()
	if i < 0 {
		return nil, fmt.Errorf("no leader")
	}
	m := c.cl.Members[i]
	m.Etcd().Server.HardStop()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		m.Stop(false) // closes the listeners of the stopped server
	}()
	return func(ctx context.Context) error {
		<-closed
		return m.Restart(ctx)
	}, nil
}

// clusterStore is a store over every member of a cluster, with client
// keepalives that notice a dead member quickly.
func clusterStore(t *testing.T, endpoints []string) *etcdstore.Store {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second,
		DialKeepAliveTime: 500 * time.Millisecond, DialKeepAliveTimeout: 500 * time.Millisecond, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	s, err := etcdstore.New(c, etcdstore.Options{Root: etcdtest.UniquePrefix(t)})
	require.NoError(t, err)
	return s
}

// The demo survives its leader being stopped at a random stage: its
// stages wait on state and retry what failed within their budget (the
// short form of TestRunSurvivesLeaderKillRealProcesses, make stress).
func TestRunSurvivesLeaderStop(t *testing.T) {
	cl, err := etcdtest.StartCluster(t.Context(), 3, etcdtest.Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, cl.Close()) }()
	store := clusterStore(t, cl.Endpoints())
	seed := uint64(time.Now().UnixNano())
	res := runWithLeaderKill(t.Context(), t, store, inProcCluster{cl}, rand.New(rand.NewPCG(seed, 1)), time.Second)
	require.NoError(t, res.err, "seed %d, leader stopped %v into stage %d:\n%s", seed, res.delay, res.stage, res.out)
	t.Logf("leader stopped %v into stage %d; the run took %v", res.delay, res.stage, res.took.Round(time.Millisecond))
}
