package autoconnect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// withRefusedB prepares a harness whose lastDesired is {b} while b is not
// active (its connect was refused), at clock 0.
func withRefusedB(t *testing.T, opts Options) *harness {
	h := newHarness(t, harnessConfig{opts: opts})
	h.exec.queueConnect(false)
	h.src.set(router("ob", "node-b", "tcp://b"))
	h.tick()
	require.Empty(t, h.r.ActiveTargets())
	h.src.fail(errStoreDown)
	h.exec.setConnectDefault(false)
	h.rec.reset()
	return h
}

func TestStoreFailure(t *testing.T) {
	b := router("ob", "node-b", "tcp://b")
	c := router("oc", "node-c", "tcp://c")
	d := router("od", "node-d", "tcp://d")

	t.Run("AC-F1_listing_error_is_fail_static", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(*localRowA(), b)
		h.tick()
		require.True(t, h.r.LocalPublicationReady())
		h.sink.Take()
		h.rec.reset()
		h.src.fail(errStoreDown)
		h.tick()
		require.True(t, h.r.StoreFailed())
		require.Empty(t, h.rec.only("disconnect", "stale"))
		require.Equal(t, []Target{targetOf(b)}, h.r.ActiveTargets())
		require.Empty(t, h.sink.Take())
		require.False(t, h.r.LocalPublicationReady())
	})

	t.Run("AC-F2_retry_within_grace", func(t *testing.T) {
		h := withRefusedB(t, Options{StoreFailureGrace: ms(3000)})
		h.tick() // t=0
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
		h.rec.reset()
		h.clock.SetMs(4000)
		h.tick()
		require.Empty(t, h.rec.only("connect"))
	})

	t.Run("AC-F3_grace_boundary", func(t *testing.T) {
		for _, c := range []struct {
			at    int64
			retry bool
		}{{3000, true}, {3001, false}} {
			h := withRefusedB(t, Options{StoreFailureGrace: ms(3000)})
			h.tick() // the streak starts at t=0
			h.rec.reset()
			h.clock.SetMs(c.at)
			h.tick()
			if c.retry {
				require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"), "t=%d", c.at)
			} else {
				require.Empty(t, h.rec.only("connect"), "t=%d", c.at)
			}
		}
	})

	t.Run("AC-F4_grace_disabled", func(t *testing.T) {
		for _, grace := range []int64{0, -1} {
			h := withRefusedB(t, Options{StoreFailureGrace: ms(grace)})
			h.tick()
			h.tick()
			require.Empty(t, h.rec.only("connect"), "grace %d", grace)
			require.True(t, h.r.StoreFailed())
		}
	})

	t.Run("AC-F5_streak_start_is_sticky", func(t *testing.T) {
		h := withRefusedB(t, Options{StoreFailureGrace: ms(3000)})
		h.tick()
		h.clock.SetMs(2000)
		h.tick()
		require.Len(t, h.rec.only("connect"), 2)
		h.rec.reset()
		h.clock.SetMs(3500)
		h.tick()
		require.Empty(t, h.rec.only("connect"))
	})

	t.Run("AC-F6_lost_endpoint_excluded_from_blind_retry", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b)
		h.tick()
		h.exec.lost("tcp://b")
		require.Empty(t, h.r.ActiveTargets())
		require.Equal(t, []string{"tcp://b"}, h.failedEndpoints())
		h.rec.reset()
		h.src.fail(errStoreDown)
		h.tick()
		require.Empty(t, h.rec.only("connect"))
		h.src.set(b)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
		require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
		require.Empty(t, h.failedEndpoints())

		t.Run("unknown_endpoint_is_not_marked", func(t *testing.T) {
			h.exec.lost("tcp://nobody")
			require.Empty(t, h.failedEndpoints())
		})
	})

	t.Run("AC-F7_retry_success_is_silent", func(t *testing.T) {
		h := withRefusedB(t, Options{})
		h.sink.Take()
		h.exec.queueConnect(true)
		h.tick()
		require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
		require.Empty(t, h.sink.Take())
	})

	t.Run("AC-F8_recovery_deferral_suppresses_removals", func(t *testing.T) {
		h := newHarness(t, harnessConfig{opts: Options{OwnerLeaseTTL: ms(1000)}})
		h.src.set(b, c)
		h.tick()
		h.sink.Take()
		h.src.fail(errStoreDown)
		h.tick() // t=0
		h.rec.reset()
		h.clock.SetMs(100)
		h.src.set(b, d)
		h.tick()
		require.Equal(t, []string{"connect:tcp://d:od"}, h.rec.transport(), "d connected, c kept, no sweep")
		require.Equal(t, []string{"tcp://b", "tcp://c", "tcp://d"}, h.activeEndpoints())
		require.Equal(t, []DesiredSetChange{{
			AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, ConnectedEndpoints: []string{"tcp://d"},
		}}, h.sink.Take())
		h.rec.reset()
		h.clock.SetMs(1100)
		h.tick()
		require.Equal(t, []string{"stale:2", "disconnect:tcp://c:oc"}, h.rec.transport())
		require.Equal(t, []string{"tcp://b", "tcp://d"}, h.activeEndpoints())
	})

	t.Run("AC-F9_deferral_boundary", func(t *testing.T) {
		for _, c := range []struct {
			at       int64
			deferred bool
		}{{1099, true}, {1100, false}} {
			h := newHarness(t, harnessConfig{opts: Options{OwnerLeaseTTL: ms(1000)}})
			h.src.set(b)
			h.tick()
			h.src.fail(errStoreDown)
			h.tick()
			h.clock.SetMs(100)
			h.src.set(b)
			h.tick() // recovery: deferUntil = 1100
			h.rec.reset()
			h.clock.SetMs(c.at)
			h.src.set()
			h.tick()
			if c.deferred {
				require.Empty(t, h.rec.transport(), "t=%d", c.at)
			} else {
				require.Equal(t, []string{"stale:0", "disconnect:tcp://b:ob"}, h.rec.transport(), "t=%d", c.at)
			}
		}

		t.Run("captured_before_the_connects", func(t *testing.T) {
			// The deferral test uses the time captured before the connect
			// loop, not the time after it.
			h := newHarness(t, harnessConfig{opts: Options{OwnerLeaseTTL: ms(1000)}})
			h.src.set(b, c)
			h.tick()
			h.src.fail(errStoreDown)
			h.tick()
			h.clock.SetMs(100)
			h.src.set(b, c)
			h.tick()
			h.clock.SetMs(1099)
			h.exec.setConnectHook(func(context.Context, Target) { h.clock.SetMs(1200) })
			h.rec.reset()
			h.src.set(d)
			h.tick()
			require.Equal(t, []string{"connect:tcp://d:od"}, h.rec.transport())
		})
	})

	t.Run("AC-F10_deferral_only_after_failure", func(t *testing.T) {
		h := newHarness(t, harnessConfig{opts: Options{OwnerLeaseTTL: ms(1000)}})
		h.settle(b)
		h.src.set()
		h.tick()
		require.Equal(t, []string{"stale:0", "disconnect:tcp://b:ob"}, h.rec.transport())
		require.Empty(t, h.r.ActiveTargets())
	})

	t.Run("AC-F11_replacements_run_during_deferral", func(t *testing.T) {
		h := newHarness(t, harnessConfig{wrap: wrapNoProbe, opts: Options{OwnerLeaseTTL: ms(1000)}})
		h.src.set(b)
		h.tick()
		h.src.fail(errStoreDown)
		h.tick()
		h.rec.reset()
		h.clock.SetMs(100)
		h.src.set(router("ob2", "node-b", "tcp://b"))
		h.tick()
		require.Equal(t, []string{"disconnect:tcp://b:ob", "connect:tcp://b:ob2"}, h.rec.transport(), "no sweep during the window")
		require.Equal(t, []string{"ob2"}, ownersOf(h.r.ActiveTargets()))
	})

	t.Run("AC-F12_publish_error_path", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.exec.setConnectDefault(false)
		h.src.set(*localRowA(), b)
		h.tick() // publishes; Connect(b) refused; lastDesired {b}
		require.True(t, h.r.LocalPublicationReady())
		h.src.fail(errStoreDown)
		h.tick() // resets publication (and retries b, refused)
		require.False(t, h.r.LocalPublicationReady())
		h.rec.reset()
		listings := h.src.count()
		h.pub.queueWrite(failed(errStoreDown))
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1", "connect:tcp://b:ob"}, h.rec.all())
		require.Equal(t, listings, h.src.count(), "resolver not called")
		require.True(t, h.r.StoreFailed())
	})

	t.Run("AC-F13_failure_resets_publication", func(t *testing.T) {
		table := newRefPeerTable()
		table.setLive("oa", true)
		table.setLive("ob", true)
		lr := localRowA()
		h := newHarness(t, harnessConfig{localRow: lr})
		h.r.publisher = table
		h.src.set(*lr, b)
		h.tick()
		require.True(t, h.r.LocalPublicationReady())
		require.Equal(t, int64(1), table.rowGeneration(lr))
		h.src.fail(errStoreDown)
		h.tick()
		require.False(t, h.r.LocalPublicationReady())
		h.src.set(*lr, b)
		h.tick()
		require.Equal(t, []location.WriteIntent{location.IntentNewClaim, location.IntentNewClaim, location.IntentRenew}, table.intents())
		require.Equal(t, []location.WriteStatus{location.Stored, location.RejectedConflict, location.Stored}, table.statuses())
		require.True(t, h.r.LocalPublicationReady())
		require.Equal(t, int64(1), table.rowGeneration(lr), "renewed under the remembered generation")
	})

	t.Run("AC-F14_recovery_clears_flags", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.fail(errStoreDown)
		h.tick()
		h.tick()
		require.True(t, h.r.StoreFailed())
		h.src.set(b)
		h.tick()
		require.False(t, h.r.StoreFailed())
		h.r.mu.Lock()
		defer h.r.mu.Unlock()
		require.False(t, h.r.failureStarted)
	})
}

// ownersOf lists the targets' owners.
func ownersOf(ts []Target) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.OwnerID)
	}
	return out
}
