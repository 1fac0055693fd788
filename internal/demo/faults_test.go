package demo

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

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
