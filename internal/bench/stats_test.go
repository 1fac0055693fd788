package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/checktest"
)

func TestResultStatistics(t *testing.T) {
	var r Result
	for i := 100; i >= 1; i-- {
		r.Latencies = append(r.Latencies, time.Duration(i)*time.Millisecond)
	}
	r.sortLatencies()
	r.Elapsed = 2 * time.Second
	tests := []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {90, 90 * time.Millisecond}, {99, 99 * time.Millisecond}, {99.9, 100 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}}
	for _, tc := range tests {
		require.Equal(t, tc.want, r.Percentile(tc.p), tc.p)
	}
	require.Equal(t, 50500*time.Microsecond, r.Mean())
	require.Equal(t, 100*time.Millisecond, r.Max())
	require.InDelta(t, 28.866, float64(r.Stddev())/float64(time.Millisecond), 0.01)
	require.InDelta(t, 50.0, r.Throughput(), 1e-9)

	var empty Result
	require.Zero(t, empty.Percentile(50))
	require.Zero(t, empty.Mean())
	require.Zero(t, empty.Max())
	require.Zero(t, empty.Stddev())
	require.Zero(t, empty.Throughput())
}

func TestOptions(t *testing.T) {
	checktest.Run(t, []checktest.Case[Options]{
		{Name: "defaults", Opts: Options{}},
		{Name: "subset", Opts: Options{Ops: []string{"mesh-list", "lease-read"}}},
		{Name: "unknown op", Opts: Options{Ops: []string{"warp"}}, WantErr: `unknown operation "warp"`},
		{Name: "conns above clients", Opts: Options{Clients: 2, Conns: 3}, WantErr: "conns 3 must be in 1..clients (2)"},
		{Name: "negative total", Opts: Options{Total: -1}, WantErr: "total -1 must be positive"},
		{Name: "negative rate", Opts: Options{Rate: -1}, WantErr: "rate -1 must not be negative"},
		{Name: "mesh too big", Opts: Options{MeshSize: 1001}, WantErr: "mesh size 1001 must be in 1..1000"},
		{Name: "too many clients", Opts: Options{Clients: 1001}, WantErr: "clients 1001 must be in 1..1000"},
	})
}

func TestLimiter(t *testing.T) {
	l := newLimiter(0)
	require.NoError(t, l.wait(t.Context()))
	l = newLimiter(1000)
	began := time.Now()
	for range 21 {
		require.NoError(t, l.wait(t.Context()))
	}
	require.GreaterOrEqual(t, time.Since(began), 20*time.Millisecond, "21 requests at 1000/s take at least 20ms")
}
