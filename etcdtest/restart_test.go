package etcdtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
			cl, err := StartCluster(t.Context(), 3, Config{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cl.Close() })
			c, err := cl.Client()
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			_, err = c.Put(t.Context(), "k", "v1")
			require.NoError(t, err)

			leader := cl.Leader()
			require.GreaterOrEqual(t, leader, 0)
			m := cl.Members[leader]
			m.Stop(hard)
			// The two others keep a quorum, once they have elected a new
			// leader (after a hard stop, only when their election timeout
			// has run out, which a loaded machine stretches): retry until
			// a write goes through.
			deadline := time.Now().Add(time.Minute)
			_, err = c.Put(t.Context(), "k", "v2")
			for err != nil && time.Now().Before(deadline) {
				_, err = c.Put(t.Context(), "k", "v2")
			}
			require.NoError(t, err, "the two others keep a quorum")
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
	cl, err := StartCluster(t.Context(), 3, Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	c, err := cl.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Put(t.Context(), "k", "v1")
	require.NoError(t, err)

	stopped := []*Member{cl.Members[0], cl.Members[1]}
	StopTogether(true, stopped...)
	left := cl.Members[2]
	require.Eventually(t, func() bool { return !left.IsLeader() && left.Etcd().Server.Leader() == 0 },
		time.Minute, 10*time.Millisecond, "the member left steps down or forgets its leader")

	for _, m := range stopped {
		require.NoError(t, m.Restart(t.Context()))
	}
	deadline := time.Now().Add(time.Minute)
	_, err = c.Put(t.Context(), "k", "v2")
	for err != nil && time.Now().Before(deadline) {
		_, err = c.Put(t.Context(), "k", "v2")
	}
	require.NoError(t, err, "a quorum again")
}
