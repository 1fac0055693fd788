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
