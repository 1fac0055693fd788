//go:build stress

package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/etcdproc"
)

// demoKillRuns is how many demo runs TestRunSurvivesLeaderKillRealProcesses
// makes.
const demoKillRuns = 20

// procCluster is a cluster of etcd processes whose leader is killed with
// SIGKILL.
type procCluster struct {
	cl     *etcdproc.Cluster
	status *clientv3.Client
}

// killLeader implements leaderKiller: kill -9 of the member that leads;
// the returned function restarts it and waits until the cluster is
// healthy.
func (p procCluster) killLeader(ctx context.Context) (func(context.Context) error, error) {
	for _, m := range p.cl.Members {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := p.status.Status(sctx, m.Endpoint())
		cancel()
		if err != nil || st.Leader == 0 || st.Leader != st.Header.MemberId {
			continue
		}
		if err := m.Kill(); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error {
			if err := m.Restart(ctx); err != nil {
				return err
			}
			return p.cl.WaitHealthy(ctx)
		}, nil
	}
	return nil, fmt.Errorf("no member leads")
}

// The demo survives its leader being killed with kill -9 (SIGKILL) at a
// random moment, demoKillRuns times in a row, against three upstream etcd
// processes (fsync on). The killed member restarts a second later.
func TestRunSurvivesLeaderKillRealProcesses(t *testing.T) {
	etcd := etcdproc.EtcdOrSkip(t)
	cl, err := etcdproc.StartCluster(t.Context(), 3, etcdproc.Config{Binary: etcd})
	require.NoError(t, err)
	defer func() { require.NoError(t, cl.Close()) }()
	status, err := etcdtest.NewClient(cl.Endpoints())
	require.NoError(t, err)
	defer status.Close()

	seed := uint64(time.Now().UnixNano())
	rnd := rand.New(rand.NewPCG(seed, 2))
	var took []time.Duration
	var lines []string
	for i := range demoKillRuns {
		store := clusterStore(t, cl.Endpoints())
		res := runWithLeaderKill(t.Context(), t, store, procCluster{cl: cl, status: status}, rnd, time.Second)
		require.NoError(t, res.err, "run %d (seed %d), leader killed %v into stage %d:\n%s", i+1, seed, res.delay, res.stage, res.out)
		if res.took > 5*time.Second {
			t.Logf("run %d took %v:\n%s", i+1, res.took, res.out)
		}
		took = append(took, res.took)
		lines = append(lines, fmt.Sprintf("run %2d: leader killed %3dms into stage %d; passed in %v",
			i+1, res.delay.Milliseconds(), res.stage, res.took.Round(time.Millisecond)))
	}
	slices.Sort(took)
	summary := fmt.Sprintf("%s\n%d/%d runs passed; run time median %v, max %v (seed %d)\n", strings.Join(lines, "\n"),
		demoKillRuns, demoKillRuns, took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), seed)
	t.Logf("demo with a leader killed (kill -9) at a random moment:\n%s", summary)
	if path := os.Getenv("ZLINK_RELIABILITY_REPORT"); path != "" {
		fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = fmt.Fprintf(fh, "== TestRunSurvivesLeaderKillRealProcesses (%s)\n%s\n", time.Now().UTC().Format(time.RFC3339), summary)
		require.NoError(t, err)
		require.NoError(t, fh.Close())
	}
}
