//go:build stress

package meshbench_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/internal/etcdproc"
	"github.com/zlink-systems/zlink-etcd/internal/meshbench"
)

// The long runs (make stress, or by hand):
//
//	nice -n 10 go test -tags stress -timeout 0 -run TestScale ./internal/meshbench/ \
//	    -args -scale.nodes 10,100,1000 -scale.label after -scale.record
var (
	scaleNodes    = flag.String("scale.nodes", "10", "comma-separated node counts of TestScale")
	scaleSteady   = flag.Duration("scale.steady", meshbench.DefaultSteady, "steady-state duration of TestScale")
	scaleLabel    = flag.String("scale.label", "after", "label of TestScale's results (before, after)")
	scaleConverge = flag.Duration("scale.converge", 10*time.Minute, "bound of every wait for agreement in TestScale")
	scaleJoin     = flag.Int("scale.join", meshbench.DefaultJoinParallelism, "nodes joining at once while TestScale sets the mesh up")
	scaleRecord   = flag.Bool("scale.record", false, "record TestScale's results in "+resultsPath)
)

// TestScale runs the harness at each -scale.nodes against one real etcd
// process with fsync on (so that etcd's CPU is its own), and with
// -scale.record stores the results in docs/scale/results.json (render
// them with go test ./internal/meshbench/ -run TestScaleDoc -update).
func TestScale(t *testing.T) {
	bin := etcdproc.EtcdOrSkip(t)
	var sizes []int
	for _, f := range strings.Split(*scaleNodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(t, err, "-scale.nodes")
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			res := runOnProcess(t, bin, n, *scaleSteady)
			res.Label, res.Commit = *scaleLabel, headCommit()
			b, err := json.MarshalIndent(res, "", "  ")
			require.NoError(t, err)
			t.Logf("%s", b)
			if *scaleRecord {
				require.NoError(t, recordResult(res))
			}
		})
	}
}

// runOnProcess runs the harness with n nodes against a new single etcd
// process.
func runOnProcess(t *testing.T, bin string, n int, steady time.Duration) meshbench.Result {
	ctx := context.Background()
	c, err := etcdproc.StartCluster(ctx, 1, etcdproc.Config{Binary: bin})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	opts := meshbench.Options{
		Nodes: n, Steady: steady, Root: "/meshbench/", Converge: *scaleConverge, JoinParallelism: *scaleJoin,
		Dial:        meshbench.DialConfig(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 10 * time.Second, Logger: zap.NewNop()}),
		MetricsURLs: []string{c.Members[0].Endpoint() + "/metrics"},
		OnProgress:  func(s string) { t.Logf("%s %s", time.Now().UTC().Format("15:04:05"), s) },
	}
	res, err := meshbench.Run(ctx, opts)
	require.NoError(t, err)
	return res
}

// recordResult stores res in the results file, replacing the result of
// the same label and node count.
func recordResult(res meshbench.Result) error {
	var all []meshbench.Result
	b, err := os.ReadFile(resultsPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, &all); err != nil {
			return fmt.Errorf("%s: %w", resultsPath, err)
		}
	}
	all = meshbench.Upsert(all, res)
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(resultsPath, append(out, '\n'), 0o644)
}

// headCommit is the short hash of the checked-out commit, "" when git
// cannot tell.
func headCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
