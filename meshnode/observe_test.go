package meshnode_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/meshnode"
	"github.com/zlink-systems/zlink-etcd/observe"
)

// metricValue returns the value of the sample of name whose labels
// include labels (name=value pairs), summed over the matching samples.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			}
		}
	}
	return total
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
		}
		if !found {
			return false
		}
	}
	return true
}

// One option wires the node's metrics (observe.NodeMetrics) across
// incarnations, and the node is the health checks' session and loop.
func TestMetricsAndHealth(t *testing.T) {
	m := newMesh(t)
	reg := prometheus.NewRegistry()
	metrics, err := observe.NewNodeMetrics(reg, observe.NodeOptions{Clock: m.clk})
	require.NoError(t, err)
	a := m.join("node-a", func(o *meshnode.Options) { o.Metrics = metrics })
	m.join("node-b", nil)
	m.converge()
	sessionCheck, loopCheck := health.SessionCheck(a.node), health.AutoConnectCheck(a.node)
	require.NoError(t, sessionCheck.Run(m.ctx))
	require.NoError(t, loopCheck.Run(m.ctx))

	require.Equal(t, 1.0, metricValue(t, reg, "zlink_sessions_running"))
	require.Equal(t, 1.0, metricValue(t, reg, "zlink_session_renewals_total", "result", "claimed"))
	require.Equal(t, 1.0, metricValue(t, reg, "zlink_autoconnect_desired_targets"))
	require.Equal(t, 1.0, metricValue(t, reg, "zlink_autoconnect_connected_targets"))
	require.Equal(t, 1.0, metricValue(t, reg, "zlink_autoconnect_connects_total"))
	require.Positive(t, metricValue(t, reg, "zlink_autoconnect_ticks_total"))

	require.NoError(t, m.mem.ExpireOwnerLease(m.ctx, "node-a"))
	m.clk.Advance(fastSession.RenewInterval)
	waitFor(t, func() string { return fmt.Sprint(a.events.kinds()) }, func() bool { return a.node.Incarnation().Number == 2 })
	m.converge()
	waitFor(t, func() string { return "the ended session is not counted" }, func() bool {
		return metricValue(t, reg, "zlink_session_ends_total", "cause", "lease_lost") == 1
	})
	require.Equal(t, 1.0, metricValue(t, reg, "zlink_sessions_running"), "the new incarnation's session")
	require.Equal(t, 2.0, metricValue(t, reg, "zlink_session_renewals_total", "result", "claimed"))
	require.Equal(t, 1.0, metricValue(t, reg, "zlink_autoconnect_connected_targets"))
	require.NoError(t, sessionCheck.Run(m.ctx), "the check follows the node to its new session")
	require.Equal(t, a.node.Incarnation().Token, a.node.Status().Token)
	require.True(t, a.node.Valid())
	require.False(t, a.node.StoreFailed())

	require.NoError(t, a.node.Leave(m.ctx))
	require.ErrorContains(t, sessionCheck.Run(m.ctx), "ended")
	require.False(t, a.node.Valid())
}
