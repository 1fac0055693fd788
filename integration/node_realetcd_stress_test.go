//go:build stress

package integration

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zlink-systems/zlink-etcd/internal/etcdproc"
)

// TestNodeFaultsRealProcesses runs mesh nodes on three upstream etcd
// processes (built from deploy/tools/etcd, fsync on) and kills members the
// way the operating system does, kill -9 (SIGKILL), which an in-process
// member cannot show: ten leader kills, then every node-level fault twice
// (a quorum loss kills two members with SIGKILL). The in-process
// TestNodeFaults is its short form.
func TestNodeFaultsRealProcesses(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	etcd, _, err := etcdproc.Binaries(t.Context())
	if err != nil {
		t.Skipf("real etcd processes: cannot build etcd from deploy/tools/etcd (the tests build it with go build; it needs the module cache or the module proxy): %v", err)
	}
	cl, err := etcdproc.StartCluster(t.Context(), 3, etcdproc.Config{Binary: etcd})
	require.NoError(t, err)
	backend := &procBackend{cl: cl}
	runNodeFaults(t, backend, 2, "TestNodeFaultsRealProcesses (etcd processes, kill -9)", leaks, func(rnd *rand.Rand) []nodeFault {
		var plan []nodeFault
		for range 10 {
			plan = append(plan, nfLeaderKill)
		}
		return append(plan, shuffledFaultRounds(rnd, 2, false)...)
	})
}
