package etcdstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/etcdharness"
)

// clusterScenariosPerSection is how many scenarios of each catalogue
// section run on the three-member cluster.
const clusterScenariosPerSection = 3

// TestConformanceCluster runs a representative subset of the catalogue
// against a three-member cluster, through a client that balances over all
// members: the first scenarios of every section (including the concurrency
// section, AUTH W, whose racing requests reach different members). The
// whole catalogue runs on one member (TestConformance).
func TestConformanceCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-member cluster")
	}
	cl, err := etcdtest.StartCluster(t.Context(), 3, etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	client, err := cl.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	h, err := etcdharness.New(client, etcdharness.Options{Name: "etcd-3-members", Prefix: "/zlink/v1/cluster/", Parallel: true})
	require.NoError(t, err)

	taken := map[string]int{}
	conformance.RunFiltered(t, h.Conformance(), func(sc conformance.Scenario) bool {
		taken[sc.Section]++
		return taken[sc.Section] <= clusterScenariosPerSection
	})
	require.NotEmpty(t, taken)
}
