package scratch

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/golden"
)

// A marker's stored value, while a run holds it and once the run kept its
// keys (KeepFor), is pinned by golden files: tools of other builds (gc)
// read it. Regenerate after a deliberate change with
//
//	go test ./internal/scratch/ -run TestGoldenMarker -update
func TestGoldenMarker(t *testing.T) {
	c := etcdtest.Connect(t)
	prefix, err := New(etcdtest.UniquePrefix(t), "demo")
	require.NoError(t, err)
	started := time.Date(2026, 7, 3, 12, 0, 0, 0, time.UTC)
	m, err := Claim(t.Context(), c, prefix, MarkerOptions{TTL: 5 * time.Second, Value: MarkerValue{Command: "demo", Holder: "host-1 pid 42", StartedAt: started}})
	require.NoError(t, err)
	value := func() []byte {
		resp, err := c.Get(t.Context(), MarkerKey(prefix))
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1)
		return resp.Kvs[0].Value
	}
	goldenFile(t, "marker.json", value())
	require.NoError(t, m.KeepFor(t.Context(), 5*time.Second))
	goldenFile(t, "marker-kept.json", value())
	_, err = Clean(t.Context(), c, prefix)
	require.NoError(t, err)
}

// goldenFile compares got with testdata/name, or rewrites it with -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, "go test ./internal/scratch/ -run TestGoldenMarker -update")
}
