package autoconnect

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// fakeInvalidator is a LiveOwnerVersioner and LivenessInvalidator that
// records its invalidations.
type fakeInvalidator struct{ rec *recorder }

// LiveOwnerSetVersion implements LiveOwnerVersioner.
func (f fakeInvalidator) LiveOwnerSetVersion(context.Context) (int64, error) { return 1, nil }

// InvalidateLiveness implements LivenessInvalidator.
func (f fakeInvalidator) InvalidateLiveness() { f.rec.add("invalidate") }

// A change notification makes the next tick read every owner lease again,
// so that a watch reporting an ended lease is acted on at once.
func TestLivenessInvalidation(t *testing.T) {
	ctx := context.Background()

	t.Run("tracker_reads_again", func(t *testing.T) {
		store, clock, lt := newFakeTracker(t, 1000)
		store.set("x", found(15_000), missing())
		requireLive(t, ctx, lt, "x", true)
		v, err := lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), v)
		require.Equal(t, 1, store.count("x"), "the answer is cached")

		lt.InvalidateLiveness()
		v, err = lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), v, "the seen owner was read again and is gone")
		require.Equal(t, 2, store.count("x"))
		requireLive(t, ctx, lt, "x", false)
		require.Equal(t, 3, store.count("x"))
		require.Equal(t, time.Duration(0), clock.Now(), "no time passed")
	})

	t.Run("read_in_flight_is_not_reused", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		store.set("x", found(15_000))
		store.gate, store.entered = make(chan struct{}), make(chan string, 2)
		lt.joinedFlight = func(string) { t.Error("a check joined a read started before the invalidation") }
		results := make(chan bool, 2)
		check := func() {
			live, err := lt.IsOwnerLive(ctx, "x")
			if err != nil {
				t.Error(err)
			}
			results <- live
		}
		go check()
		require.Equal(t, "x", <-store.entered)
		lt.InvalidateLiveness()
		go check()
		require.Equal(t, "x", <-store.entered, "a second read started")
		close(store.gate)
		require.True(t, <-results)
		require.True(t, <-results)
		requireLive(t, ctx, lt, "x", true)
		require.Equal(t, 2, store.count("x"), "the read after the invalidation is cached")
	})

	// loopWith returns a started loop over a fake reconciler that watches w,
	// with a LiveOwners that records invalidations into the same log.
	loopWith := func(t *testing.T, w *fakeWatcher) *loopHarness {
		h := &loopHarness{rec: &recorder{}, clock: newFakeClock()}
		h.fr = newFakeLoopRec(h.rec)
		l, err := NewLoop(LoopOptions{
			Reconciler: h.fr, Watcher: w, WatchTables: []location.Table{location.TableMeshNodes},
			LiveOwners: fakeInvalidator{rec: h.rec}, WatchRetryDelay: 600 * time.Millisecond,
			Clock: h.clock, Logger: discardLogger(),
		})
		require.NoError(t, err)
		h.l = l
		t.Cleanup(func() {
			require.NoError(t, l.Stop(context.Background()))
			w.wg.Wait()
		})
		require.NoError(t, l.Start(ctx))
		w.waitCall(t, 1)
		return h
	}

	t.Run("notification_invalidates_before_the_tick", func(t *testing.T) {
		w := newFakeWatcher()
		h := loopWith(t, w)
		h.clock.waitArmed(t)
		w.notify()
		h.fr.waitTick(t, 2)
		require.Equal(t, []string{"tick", "invalidate", "tick"}, h.rec.only("tick", "invalidate"))
	})

	t.Run("reopened_watch_invalidates_before_the_tick", func(t *testing.T) {
		w := newFakeWatcher(errStoreDown)
		h := loopWith(t, w)
		h.clock.waitArmed(t)
		h.clock.waitArmed(t)
		h.clock.SetMs(600) // the retry reopens the watch
		w.waitCall(t, 2)
		h.fr.waitTick(t, 2)
		require.Equal(t, []string{"tick", "invalidate", "tick"}, h.rec.only("tick", "invalidate"))
	})
}
