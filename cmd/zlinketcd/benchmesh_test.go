package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/meshbench"
)

// bench mesh runs the mesh harness against the given cluster (every node
// agreed with the live set after each change, or the run fails), and
// leaves nothing under the prefix.
func TestBenchMesh(t *testing.T) {
	_, c, prefix, eps := sharedStore(t)
	r := runCmd(t, "bench", "mesh", "--endpoints", eps, "--prefix", prefix, "--nodes", "3", "--steady", "1s")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "### N = 3\n\n| | measured |\n")
	require.Regexp(t, `\| \*\*one node joins\*\*: events delivered \| \S+ \|`, r.stdout)
	require.Contains(t, r.stdout, "| **rolling restart**: nodes restarted | 1 |\n")
	require.Contains(t, r.stderr, "zlinketcd: bench: mesh of 3 nodes on "+eps+" under "+prefix+"zlinketcd-bench-mesh-")
	require.Zero(t, keyCount(t, c, prefix), "the scratch prefix is removed")
}

// Without endpoints bench mesh starts an embedded member (fsync on) and
// says so, and that its CPU is counted with the nodes'.
func TestBenchMeshEmbedded(t *testing.T) {
	r := runCmd(t, "bench", "mesh", "--nodes", "2", "--steady", "1s", "--output", "json")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Regexp(t, `^zlinketcd: no --endpoints given: started an embedded single-member etcd at http://127\.0\.0\.1:\d+ \(temporary directory, removed on exit\)\n`, r.stderr)
	require.Contains(t, r.stderr, "on an embedded single-member etcd (fsync on) in this process: the node CPU and memory include etcd's")
	var res meshbench.Result
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.Equal(t, 2, res.Nodes)
	require.True(t, res.EtcdInProcess)
	require.True(t, res.EtcdMetrics)
	require.Equal(t, 3, res.Join.Converge.N)
	require.Equal(t, 2, res.Rolling.Converge.N)
}

func TestBenchMeshUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "other operation", args: []string{"bench", "mesh", "lease-read"}, want: `bench mesh takes no other operation, got "mesh lease-read"`},
		{name: "output", args: []string{"bench", "mesh", "--output", "xml"}, want: `--output "xml" must be table or json`},
		{name: "one node", args: []string{"bench", "mesh", "--nodes", "1"}, want: "nodes 1 must be in 2..5000"},
		{name: "no steady state", args: []string{"bench", "mesh", "--steady", "0s"}, want: "--steady must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.args...)
			requireOneLineError(t, r, exitUsage, "zlinketcd: bench: "+tc.want)
			require.Empty(t, r.stdout)
		})
	}
}
