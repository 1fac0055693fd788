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
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "defaults", opts: Options{}},
		{name: "subset", opts: Options{Ops: []string{"mesh-list", "lease-read"}}},
		{name: "unknown op", opts: Options{Ops: []string{"warp"}}, wantErr: `unknown operation "warp"`},
		{name: "conns above clients", opts: Options{Clients: 2, Conns: 3}, wantErr: "conns 3 must be in 1..clients (2)"},
		{name: "negative total", opts: Options{Total: -1}, wantErr: "total -1 must be positive"},
		{name: "negative rate", opts: Options{Rate: -1}, wantErr: "rate -1 must not be negative"},
		{name: "mesh too big", opts: Options{MeshSize: 1001}, wantErr: "mesh size 1001 must be in 1..1000"},
		{name: "too many clients", opts: Options{Clients: 1001}, wantErr: "clients 1001 must be in 1..1000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checktest.RequireResult(t, tc.opts.Check(), tc.wantErr)
		})
	}
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
