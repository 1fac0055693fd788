package etcdtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A stopped member comes back with its data, and the cluster keeps serving
// while it is away.
func TestMemberStopRestart(t *testing.T) {
	for _, hard := range []bool{false, true} {
		name := "graceful"
		if hard {
			name = "hard"
		}
		t.Run(name, func(t *testing.T) {
			cl, c := startThreeWithKey(t)

			leader := cl.Leader()
			require.GreaterOrEqual(t, leader, 0)
			m := cl.Members[leader]
			m.Stop(hard)
			// The two others keep a quorum, once they have elected a new
			// leader (after a hard stop, only when their election timeout
			// has run out, which a loaded machine stretches): retry until
			// a write goes through.
			putWithinAMinute(t, c, "v2", "the two others keep a quorum")
			require.NoError(t, m.Restart(t.Context()))

			mc, err := m.Client()
			require.NoError(t, err)
			t.Cleanup(func() { _ = mc.Close() })
			got, err := mc.Get(t.Context(), "k")
			require.NoError(t, err)
			require.Equal(t, "v2", string(got.Kvs[0].Value), "the restarted member caught up")
		})
	}
}

// Two of three members stopped together leave the third without a
// quorum: it stops naming a leader, and both come back with the data.
func TestStopTogether(t *testing.T) {
	cl, c := startThreeWithKey(t)

	stopped := []*Member{cl.Members[0], cl.Members[1]}
	StopTogether(true, stopped...)
	left := cl.Members[2]
	require.Eventually(t, func() bool { return !left.IsLeader() && left.Etcd().Server.Leader() == 0 },
		time.Minute, 10*time.Millisecond, "the member left steps down or forgets its leader")

	for _, m := range stopped {
		require.NoError(t, m.Restart(t.Context()))
	}
	putWithinAMinute(t, c, "v2", "a quorum again")
}

// startThreeWithKey starts a 3-member cluster and a client of it, and
// writes k = v1.
func startThreeWithKey(t *testing.T) (*Cluster, *clientv3.Client) {
	t.Helper()
	cl, err := StartCluster(t.Context(), 3, Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	c, err := cl.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Put(t.Context(), "k", "v1")
	require.NoError(t, err)
	return cl, c
}

// putWithinAMinute writes k = v, retrying until the cluster has a quorum
// again (an election after a hard stop waits for the election timeout,
// which a loaded machine stretches).
func putWithinAMinute(t *testing.T, c *clientv3.Client, v, msg string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	_, err := c.Put(t.Context(), "k", v)
	for err != nil && time.Now().Before(deadline) {
		_, err = c.Put(t.Context(), "k", v)
	}
	require.NoError(t, err, msg)
}
