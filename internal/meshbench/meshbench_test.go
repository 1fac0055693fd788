package meshbench_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/checktest"
	"github.com/zlink-systems/zlink-etcd/internal/meshbench"
	"github.com/zlink-systems/zlink-etcd/session"
)

// embeddedOptions returns the options of a run on a new embedded member
// with fsync on (closed when the test ends).
func embeddedOptions(t testing.TB, nodes int, steady time.Duration) meshbench.Options {
	t.Helper()
	m, err := etcdtest.StartMember(context.Background(), etcdtest.Config{Fsync: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	var urls []string
	for _, ep := range m.Endpoints() {
		urls = append(urls, strings.TrimRight(ep, "/")+"/metrics")
	}
	// A first request and a first scrape start the server's lazily
	// started goroutines before any leak check.
	c, err := m.Client()
	require.NoError(t, err)
	_, err = c.Get(t.Context(), "warm-up")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get(urls[0])
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	tr.CloseIdleConnections()
	return meshbench.Options{
		Nodes: nodes, Steady: steady, Root: "/meshbench/" + strings.ReplaceAll(t.Name(), "/", "_") + "/",
		Dial:        meshbench.DialConfig(clientv3.Config{Endpoints: m.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()}),
		MetricsURLs: urls, EtcdInProcess: true,
	}
}

// A short run: ten nodes converge exactly on set-up, after one node joins
// and leaves, and after a rolling restart; etcd's metrics are read.
func TestRunShort(t *testing.T) {
	opts := embeddedOptions(t, 10, 2*time.Second)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// A short lease keeps the leaving quick when a test fails half-way.
	opts.Session = session.Options{TTL: 5 * time.Second, RenewInterval: time.Second, RenewTimeout: time.Second, FencingMargin: time.Second}
	res, err := meshbench.Run(t.Context(), opts)
	require.NoError(t, err)

	require.Equal(t, 10, res.Nodes)
	require.True(t, res.EtcdMetrics)
	// Every live node agreed: the set-up's ten, the joiner's eleven, the
	// ten after it left and after the restart.
	require.Equal(t, 11, res.Join.Converge.N)
	require.Equal(t, 10, res.Leave.Converge.N)
	require.Equal(t, 10, res.Rolling.Converge.N)
	require.Equal(t, 1, res.Rolling.Restarted)
	// The counters moved: the steady state renews leases, a join writes.
	require.Positive(t, res.Steady.Rates.KeepAlives)
	require.Positive(t, res.Join.Raw.Proposals)
	require.Positive(t, res.Join.Raw.Events)
	require.Positive(t, res.Join.Raw.Rows)
	var rows int64
	for _, n := range res.Join.Raw.RowsByRange {
		rows += n
	}
	require.Equal(t, res.Join.Raw.Rows, float64(rows), "rows by range: %v", res.Join.Raw.RowsByRange)
	t.Logf("rows read by range during the join: %v, the leave: %v", res.Join.Raw.RowsByRange, res.Leave.Raw.RowsByRange)
	require.Positive(t, res.Leave.Raw.Proposals)
	require.Positive(t, res.Steady.NodeCPUMillicores)
	require.Zero(t, res.Steady.EtcdCPUMillicores, "etcd in process: its CPU is not told apart")
}

func TestOptionsCheck(t *testing.T) {
	checktest.Run(t, []checktest.Case[meshbench.Options]{
		{Name: "ok", Opts: meshbench.Options{Nodes: 10}},
		{Name: "one node", Opts: meshbench.Options{Nodes: 1}, WantErr: "nodes 1 must be in 2..5000"},
		{Name: "too many", Opts: meshbench.Options{Nodes: 5001}, WantErr: "nodes 5001 must be in 2..5000"},
		{Name: "negative steady", Opts: meshbench.Options{Nodes: 10, Steady: -time.Second}, WantErr: "steady-state duration -1s"},
		{Name: "fraction", Opts: meshbench.Options{Nodes: 10, RestartFraction: 1.5}, WantErr: "restart fraction 1.5"},
		{Name: "polling", Opts: meshbench.Options{Nodes: 10, PollingInterval: -time.Second}, WantErr: "polling interval -1s"},
	}, meshbench.ErrOptions)
}
