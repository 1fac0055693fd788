package etcdtest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestStartMember(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		prefix string
	}{
		{name: "tcp", cfg: Config{}, prefix: "http://127.0.0.1:"},
		{name: "unix", cfg: Config{Unix: true}, prefix: "unix://"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := StartMember(t.Context(), tc.cfg)
			require.NoError(t, err)
			dir := m.dir
			require.True(t, strings.HasPrefix(m.Endpoints()[0], tc.prefix), m.Endpoints())
			require.True(t, m.IsLeader())

			c, err := m.Client()
			require.NoError(t, err)
			_, err = c.Put(t.Context(), "k", "v")
			require.NoError(t, err)
			got, err := c.Get(t.Context(), "k")
			require.NoError(t, err)
			require.Equal(t, "v", string(got.Kvs[0].Value))
			require.NoError(t, c.Close())

			require.NoError(t, m.Close())
			require.NoError(t, m.Close(), "Close is idempotent")
			_, err = os.Stat(dir)
			require.True(t, os.IsNotExist(err), "the temporary directory is removed")
		})
	}
}

func TestStartMemberMinimumLeaseTTL(t *testing.T) {
	m, err := StartMember(t.Context(), Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	c, err := m.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	// With the fast default timing the server keeps a one-second TTL.
	g, err := c.Grant(t.Context(), 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), g.TTL)
}

func TestStartCluster(t *testing.T) {
	cl, err := StartCluster(t.Context(), 3, Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	require.Len(t, cl.Endpoints(), 3)
	require.GreaterOrEqual(t, cl.Leader(), 0)

	c, err := cl.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Put(t.Context(), "k", "v")
	require.NoError(t, err)

	// Every member answers a linearizable read with the same value.
	for _, m := range cl.Members {
		mc, err := m.Client()
		require.NoError(t, err)
		got, err := mc.Get(t.Context(), "k")
		require.NoError(t, err)
		require.Equal(t, "v", string(got.Kvs[0].Value), m.Name())
		require.NoError(t, mc.Close())
	}
	members, err := c.MemberList(t.Context())
	require.NoError(t, err)
	require.Len(t, members.Members, 3)
}

func TestStartClusterRejectsSizeZero(t *testing.T) {
	_, err := StartCluster(t.Context(), 0, Config{})
	require.ErrorContains(t, err, "at least 1")
}

func TestConnectAndUniquePrefix(t *testing.T) {
	c := Connect(t)
	p1, p2 := UniquePrefix(t), UniquePrefix(t)
	require.NotEqual(t, p1, p2)
	require.True(t, strings.HasPrefix(p1, "/test/TestConnectAndUniquePrefix-"), p1)
	_, err := c.Put(t.Context(), p1+"k", "v")
	require.NoError(t, err)
	got, err := c.Get(t.Context(), p2, clientv3.WithPrefix())
	require.NoError(t, err)
	require.Empty(t, got.Kvs)
}
