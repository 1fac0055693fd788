//go:build stress

package integration

import (
	"testing"
	"time"

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
	nm := startNodeMesh(t, backend, faultNodes, 2)
	var plan []nodeFault
	for range 10 {
		plan = append(plan, nfLeaderKill)
	}
	for range 2 {
		round := allNodeFaults()
		nm.rnd.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		plan = append(plan, round...)
	}
	nm.run(t.Context(), plan, func(f nodeFault) time.Duration { return nodeFaultHold(f, nm.rnd.IntN) })
	reportFigures(t, "TestNodeFaultsRealProcesses (etcd processes, kill -9)", nm.figures())
	nm.close()
	require.NoError(t, backend.close())
	require.NoError(t, goleak.Find(append(etcdServerConnections(), leaks)...))
}
