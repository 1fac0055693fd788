package etcdharness

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

func TestNewRejects(t *testing.T) {
	_, err := New(nil, Options{Prefix: "/x/"})
	require.ErrorContains(t, err, "nil client")
	c := etcdtest.Connect(t)
	for _, p := range []string{"", "/x"} {
		_, err := New(c, Options{Prefix: p})
		require.ErrorContains(t, err, "must be non-empty and end with '/'")
	}
}

// A slice of the catalogue passes through RunSuite, each scenario on its
// own sub-prefix, and nothing is left behind.
func TestRunSuite(t *testing.T) {
	c := etcdtest.Connect(t)
	prefix := etcdtest.UniquePrefix(t)
	h, err := New(c, Options{Prefix: prefix})
	require.NoError(t, err)
	rep := conformance.RunSuite(t.Context(), h.Conformance(), conformance.SuiteOptions{
		Filter: func(sc conformance.Scenario) bool {
			return strings.HasPrefix(sc.ID, "LS-00") || strings.HasPrefix(sc.ID, "AUTH-00")
		},
	})
	require.True(t, rep.OK(), "%+v", rep.Scenarios)
	require.Positive(t, rep.Passed)
	require.Equal(t, "etcd", rep.Harness)
	require.EqualValues(t, len(rep.Scenarios)-rep.Skipped, h.Fixtures())
	left, err := c.Get(t.Context(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	require.Zero(t, left.Count)
}
