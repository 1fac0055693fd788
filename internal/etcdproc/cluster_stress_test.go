//go:build stress

package etcdproc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/etcdproc"
)

// A three-process cluster serves, survives a SIGKILL of its leader (the
// two others elect a new one), and takes the killed member back.
func TestKillLeader(t *testing.T) {
	etcd := etcdproc.EtcdOrSkip(t)
	c, err := etcdproc.StartCluster(t.Context(), 3, etcdproc.Config{Binary: etcd, NoFsync: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	cli, err := etcdtest.NewClient(c.Endpoints())
	require.NoError(t, err)
	defer cli.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err = cli.Put(ctx, "k", "1")
	require.NoError(t, err)
	leader := leaderOf(ctx, t, cli, c)
	require.NoError(t, c.Members[leader].Kill())
	// A write is refused until the two others elect a leader.
	for _, err = cli.Put(ctx, "k", "2"); err != nil; _, err = cli.Put(ctx, "k", "2") {
		require.NoError(t, ctx.Err(), "last error: %v", err)
	}
	require.NotEqual(t, leader, leaderOf(ctx, t, cli, c))
	require.NoError(t, c.Members[leader].Restart(ctx))
	require.NoError(t, c.WaitHealthy(ctx))
	resp, err := cli.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "2", string(resp.Kvs[0].Value))
}

// leaderOf returns the index of the member that leads.
func leaderOf(ctx context.Context, t *testing.T, cli *clientv3.Client, c *etcdproc.Cluster) int {
	t.Helper()
	for {
		for i, m := range c.Members {
			if !m.Running() {
				continue
			}
			st, err := cli.Status(ctx, m.Endpoint())
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no leader: %v", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
