package autoconnect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShutdown(t *testing.T) {
	b := router("ob", "node-b", "tcp://b")
	c := router("oc", "node-c", "tcp://c")

	// published connects b and c and publishes the local row (generation 5).
	published := func(t *testing.T) *harness {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(*localRowA(), b, c)
		h.tick()
		require.True(t, h.r.LocalPublicationReady())
		require.Equal(t, []string{"tcp://b", "tcp://c"}, h.activeEndpoints())
		h.sink.take()
		h.rec.reset()
		return h
	}

	t.Run("AC-S1_shutdown", func(t *testing.T) {
		h := published(t)
		h.exec.setClosed(targetOf(c), true)
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Equal(t, []string{"disconnect:tcp://b:ob", "remove:tcp://a:5"}, h.rec.all(), "c is already closed")
		require.False(t, h.r.LocalPublicationReady())
		require.Empty(t, h.r.ActiveTargets())
		require.Empty(t, h.pendingKeys())
		require.Empty(t, h.sink.take())

		t.Run("without_closed_targets", func(t *testing.T) {
			h := published(t)
			require.NoError(t, h.r.Shutdown(context.Background()))
			require.Equal(t, []string{"disconnect:tcp://b:ob", "disconnect:tcp://c:oc", "remove:tcp://a:5"}, h.rec.all())
		})
		t.Run("pending_cleared", func(t *testing.T) {
			h := published(t)
			h.src.set(*localRowA(), b)
			h.tick()
			require.Equal(t, []string{TargetKey(c)}, h.pendingKeys())
			require.NoError(t, h.r.Shutdown(context.Background()))
			require.Empty(t, h.pendingKeys())
		})
	})

	t.Run("AC-S2_shutdown_after_store_failure", func(t *testing.T) {
		h := published(t)
		h.src.fail(errStoreDown)
		h.tick()
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Equal(t, []string{"disconnect:tcp://b:ob", "disconnect:tcp://c:oc"}, h.rec.all())
	})

	t.Run("AC-S3_remove_status_ignored", func(t *testing.T) {
		h := published(t)
		h.pub.queueRemove(staleAnswer())
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.False(t, h.r.LocalPublicationReady())
	})

	t.Run("AC-S4_remove_error_propagates", func(t *testing.T) {
		h := published(t)
		h.pub.queueRemove(failed(errStoreDown))
		err := h.r.Shutdown(context.Background())
		require.ErrorIs(t, err, errStoreDown)
		require.Equal(t, []string{"disconnect:tcp://b:ob", "disconnect:tcp://c:oc", "remove:tcp://a:5"}, h.rec.all())
		require.Empty(t, h.r.ActiveTargets())
		require.True(t, h.r.LocalPublicationReady(), "the row was not removed")
	})

	t.Run("AC-S5_generation_guard", func(t *testing.T) {
		h := published(t)
		// While RemovePeer(gen 5) is in flight, a tick finds the row gone
		// and claims it again with generation 6.
		h.pub.queueWrite(stored(6))
		h.src.set(b, c)
		h.pub.removeHook = func() { h.tick() }
		require.NoError(t, h.r.UnpublishLocal(context.Background()))
		require.Equal(t, []string{"remove:tcp://a:5", "write:NewClaim:1"}, h.rec.only("remove", "write"))
		require.True(t, h.r.LocalPublicationReady(), "left as set by the concurrent publication")
		h.pub.removeHook = nil
		require.NoError(t, h.r.UnpublishLocal(context.Background()))
		require.Equal(t, []string{"remove:tcp://a:5", "write:NewClaim:1", "remove:tcp://a:6"}, h.rec.only("remove", "write"))
		require.False(t, h.r.LocalPublicationReady())
	})
}
