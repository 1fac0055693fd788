package autoconnect

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// fakeLoopRec is a LoopReconciler whose Tick is programmable.
type fakeLoopRec struct {
	rec *recorder

	mu        sync.Mutex
	ticks     int
	tickFn    func(ctx context.Context) error
	failed    bool
	published bool
	// ticked receives the tick count after every tick.
	ticked chan int
}

// newFakeLoopRec returns a reconciler fake whose ticks succeed.
func newFakeLoopRec(rec *recorder) *fakeLoopRec {
	return &fakeLoopRec{rec: rec, ticked: make(chan int, 1024)}
}

// Tick implements LoopReconciler.
func (f *fakeLoopRec) Tick(ctx context.Context) error {
	f.rec.add("tick")
	f.mu.Lock()
	f.ticks++
	n, fn := f.ticks, f.tickFn
	f.mu.Unlock()
	defer func() { f.ticked <- n }()
	if fn != nil {
		return fn(ctx)
	}
	return nil
}

// setTick programs Tick.
func (f *fakeLoopRec) setTick(fn func(ctx context.Context) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tickFn = fn
}

// count returns the number of ticks so far.
func (f *fakeLoopRec) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ticks
}

// set programs the observers.
func (f *fakeLoopRec) set(failed, published bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed, f.published = failed, published
}

// waitTick waits until the n-th tick has ended.
func (f *fakeLoopRec) waitTick(t *testing.T, n int) {
	t.Helper()
	waitCount(t, f.ticked, n, "tick")
}

// waitCount waits until counts delivers n or more; what names the counted
// event in the failure.
func waitCount(t *testing.T, counts <-chan int, n int, what string) {
	t.Helper()
	for {
		select {
		case got := <-counts:
			if got >= n {
				return
			}
		case <-time.After(waitLimit):
			t.Fatalf("%s %d did not happen", what, n)
		}
	}
}

// StoreFailed implements LoopReconciler.
func (f *fakeLoopRec) StoreFailed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// LocalPublicationReady implements LoopReconciler.
func (f *fakeLoopRec) LocalPublicationReady() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.published
}

// DisconnectPeers implements LoopReconciler.
func (f *fakeLoopRec) DisconnectPeers() { f.rec.add("disconnectPeers") }

// UnpublishLocal implements LoopReconciler.
func (f *fakeLoopRec) UnpublishLocal(context.Context) error {
	f.rec.add("unpublish")
	return nil
}

// fakeStamps is a MeshNodeChangeStamper and LiveOwnerVersioner.
type fakeStamps struct {
	mu                   sync.Mutex
	stamp, version       int64
	ok                   bool
	stampErr, versionErr error
	stampReads, verReads int
}

// GetMeshNodeChangeStamp implements location.MeshNodeChangeStamper.
func (s *fakeStamps) GetMeshNodeChangeStamp(context.Context, string) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stampReads++
	return s.stamp, s.ok, s.stampErr
}

// LiveOwnerSetVersion implements LiveOwnerVersioner.
func (s *fakeStamps) LiveOwnerSetVersion(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.verReads++
	return s.version, s.versionErr
}

// loopHarness is a Loop over a fake reconciler and a fake clock.
type loopHarness struct {
	rec   *recorder
	clock *fakeClock
	fr    *fakeLoopRec
	l     *Loop
}

// newLoopHarness builds a loop and stops it when the test ends.
func newLoopHarness(t *testing.T, opts LoopOptions) *loopHarness {
	t.Helper()
	h := &loopHarness{rec: &recorder{}, clock: newFakeClock()}
	h.fr = newFakeLoopRec(h.rec)
	opts.Reconciler, opts.Clock, opts.Logger, opts.MeshName = h.fr, h.clock, discardLogger(), testMesh
	l, err := NewLoop(opts)
	require.NoError(t, err)
	h.l = l
	t.Cleanup(func() { require.NoError(t, l.Stop(context.Background())) })
	return h
}

func TestLoop(t *testing.T) {
	ctx := context.Background()
	second := time.Second

	t.Run("AC-L1_start", func(t *testing.T) {
		h := newLoopHarness(t, LoopOptions{})
		require.NoError(t, h.l.Start(ctx))
		require.Equal(t, 1, h.fr.count(), "one tick inside Start")
		tm := h.clock.waitArmed(t)
		require.Equal(t, second, tm.delay)
		h.clock.Advance(second)
		tm = h.clock.waitArmed(t)
		require.Equal(t, 2, h.fr.count())
		require.Equal(t, second, tm.delay)
		require.Equal(t, 2*second, tm.at)
		require.False(t, h.l.Watching())
	})

	t.Run("AC-L2_start_error", func(t *testing.T) {
		h := newLoopHarness(t, LoopOptions{})
		h.fr.setTick(func(context.Context) error { return errStoreDown })
		require.ErrorIs(t, h.l.Start(ctx), errStoreDown)
		h.clock.requireNoArmed(t)
		h.fr.setTick(nil)
		require.NoError(t, h.l.Start(ctx), "Start may be retried")
		h.clock.waitArmed(t)

		t.Run("panic", func(t *testing.T) {
			h := newLoopHarness(t, LoopOptions{})
			h.fr.setTick(func(context.Context) error { panic("executor bug") })
			err := h.l.Start(ctx)
			require.ErrorContains(t, err, "executor bug")
			h.clock.requireNoArmed(t)
		})
		t.Run("done_context", func(t *testing.T) {
			h := newLoopHarness(t, LoopOptions{})
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			require.ErrorIs(t, h.l.Start(cctx), context.Canceled)
			require.Zero(t, h.fr.count())
		})
	})

	t.Run("AC-L3_idempotent_start", func(t *testing.T) {
		h := newLoopHarness(t, LoopOptions{})
		require.NoError(t, h.l.Start(ctx))
		require.NoError(t, h.l.Start(ctx))
		require.Equal(t, 1, h.fr.count())
		h.clock.waitArmed(t)

		t.Run("concurrent", func(t *testing.T) {
			h := newLoopHarness(t, LoopOptions{})
			entered, release := make(chan struct{}), make(chan struct{})
			h.fr.setTick(func(context.Context) error {
				close(entered)
				<-release
				return nil
			})
			errc := make(chan error, 1)
			go func() { errc <- h.l.Start(ctx) }()
			<-entered
			require.NoError(t, h.l.Start(ctx), "a Start during the first tick does nothing")
			h.fr.setTick(nil)
			close(release)
			require.NoError(t, <-errc)
			require.Equal(t, 1, h.fr.count())
			h.clock.waitArmed(t)
			h.clock.Advance(second)
			h.clock.waitArmed(t)
			require.Equal(t, 2, h.fr.count(), "one timer chain")
			h.clock.requireNoArmed(t)
		})
	})

	t.Run("AC-L4_fixed_delay", func(t *testing.T) {
		h := newLoopHarness(t, LoopOptions{})
		h.fr.setTick(func(context.Context) error {
			h.clock.AdvanceMs(300)
			return nil
		})
		require.NoError(t, h.l.Start(ctx))
		tm := h.clock.waitArmed(t)
		require.Equal(t, 1300*time.Millisecond, tm.at, "armed after the 300 ms tick ended")
		require.Equal(t, second, tm.delay)
		h.clock.SetMs(1300)
		tm = h.clock.waitArmed(t)
		require.Equal(t, 2600*time.Millisecond, tm.at)
		require.Equal(t, second, tm.delay)
	})

	stampLoop := func(t *testing.T) (*loopHarness, *fakeStamps) {
		stamps := &fakeStamps{stamp: 1, version: 1, ok: true}
		h := newLoopHarness(t, LoopOptions{Stamps: stamps, LiveOwners: stamps})
		return h, stamps
	}

	t.Run("AC-L5_stamp_skip", func(t *testing.T) {
		h, stamps := stampLoop(t)
		h.fr.set(false, true)
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 1, h.fr.count())
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 1, h.fr.count(), "skipped")
		stamps.version = 2
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 2, h.fr.count(), "live owner set changed")
		stamps.stamp = 2
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 3, h.fr.count(), "stamp changed")
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 3, h.fr.count())

		t.Run("without_live_owner_versions", func(t *testing.T) {
			stamps := &fakeStamps{stamp: 1, ok: true}
			h := newLoopHarness(t, LoopOptions{Stamps: stamps})
			h.fr.set(false, true)
			require.NoError(t, h.l.Tick(ctx))
			require.NoError(t, h.l.Tick(ctx))
			require.Equal(t, 1, h.fr.count())
			require.Zero(t, stamps.verReads)
		})
	})

	t.Run("AC-L6_not_published_forces_tick", func(t *testing.T) {
		h, _ := stampLoop(t)
		h.fr.set(false, false)
		for i := 1; i <= 3; i++ {
			require.NoError(t, h.l.Tick(ctx))
			require.Equal(t, i, h.fr.count())
		}
	})

	t.Run("AC-L7_failed_tick_bypasses_stamps", func(t *testing.T) {
		h, stamps := stampLoop(t)
		h.fr.set(true, true)
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 1, stamps.stampReads)
		h.fr.set(false, true)
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 1, stamps.stampReads, "full reconcile without reading the stamp")
		require.Equal(t, 2, h.fr.count())
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 2, stamps.stampReads)
		require.Equal(t, 3, h.fr.count(), "nothing remembered yet")
		require.NoError(t, h.l.Tick(ctx))
		require.Equal(t, 3, h.fr.count(), "skipped")
	})

	t.Run("AC-L8_stamp_error_falls_back", func(t *testing.T) {
		for name, breakStamp := range map[string]func(*fakeStamps){
			"stamp_error":   func(s *fakeStamps) { s.stampErr = errStoreDown },
			"version_error": func(s *fakeStamps) { s.versionErr = errStoreDown },
			"stamp_unknown": func(s *fakeStamps) { s.ok = false },
		} {
			t.Run(name, func(t *testing.T) {
				h, stamps := stampLoop(t)
				h.fr.set(false, true)
				require.NoError(t, h.l.Tick(ctx))
				require.NoError(t, h.l.Tick(ctx))
				require.Equal(t, 1, h.fr.count())
				breakStamp(stamps)
				require.NoError(t, h.l.Tick(ctx))
				require.Equal(t, 2, h.fr.count(), "full reconcile")
				*stamps = fakeStamps{stamp: 1, version: 1, ok: true}
				require.NoError(t, h.l.Tick(ctx))
				require.Equal(t, 3, h.fr.count(), "the remembered stamp was forgotten")
				require.NoError(t, h.l.Tick(ctx))
				require.Equal(t, 3, h.fr.count())
			})
		}
	})

	t.Run("AC-L9_tick_error_swallowed_by_scheduler", func(t *testing.T) {
		h := newLoopHarness(t, LoopOptions{})
		require.NoError(t, h.l.Start(ctx))
		h.clock.waitArmed(t)
		h.fr.setTick(func(context.Context) error { return errStoreDown })
		h.clock.Advance(second)
		tm := h.clock.waitArmed(t)
		require.Equal(t, 2, h.fr.count())
		require.Equal(t, second, tm.delay)
		h.fr.setTick(func(context.Context) error { panic("sink bug") })
		h.clock.Advance(second)
		h.clock.waitArmed(t)
		require.Equal(t, 3, h.fr.count())
		h.fr.setTick(nil)
		h.clock.Advance(second)
		h.clock.waitArmed(t)
		require.Equal(t, 4, h.fr.count())
	})

	t.Run("AC-L10_stop", func(t *testing.T) {
		h := newLoopHarness(t, LoopOptions{})
		require.NoError(t, h.l.Start(ctx))
		tm := h.clock.waitArmed(t)
		h.rec.reset()
		require.NoError(t, h.l.Stop(ctx))
		require.True(t, tm.isStopped(), "the armed timer was cancelled")
		require.Equal(t, []string{"disconnectPeers", "unpublish"}, h.rec.all())
		tm.fireAnyway() // a callback that raced with the cancellation
		h.clock.Advance(time.Hour)
		require.Equal(t, 1, h.fr.count(), "no tick after Stop")
		h.clock.requireNoArmed(t)
		require.ErrorIs(t, h.l.Start(ctx), ErrLoopStopped)
		require.Equal(t, 1, h.fr.count())
	})

	t.Run("AC-L11_stop_during_start", func(t *testing.T) {
		h := newLoopHarness(t, LoopOptions{})
		entered := make(chan struct{})
		h.fr.setTick(func(ctx context.Context) error {
			close(entered)
			<-ctx.Done() // the first tick is cancelled by Stop
			return nil
		})
		errc := make(chan error, 1)
		go func() { errc <- h.l.Start(ctx) }()
		<-entered
		require.NoError(t, h.l.Stop(ctx))
		require.ErrorIs(t, <-errc, ErrLoopStopped)
		require.Equal(t, []string{"tick", "disconnectPeers", "unpublish"}, h.rec.all())
		h.clock.requireNoArmed(t)
	})

	// The prompt stop (a lost lease): the tick in flight is cancelled, and
	// waited for. (Stop lets it finish instead: TestLoopStopDrainsTick.)
	t.Run("AC-L12_prepare_cancels_and_waits_for_in_flight_tick", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		l, err := NewLoop(LoopOptions{Reconciler: h.r, Clock: h.clock, Logger: discardLogger()})
		require.NoError(t, err)
		require.NoError(t, l.Start(ctx))
		h.clock.waitArmed(t)

		entered := make(chan struct{})
		h.exec.setConnectHook(func(ctx context.Context, _ Target) {
			close(entered)
			<-ctx.Done() // returns only once PrepareTransportShutdown cancelled the tick
		})
		h.src.set(router("ob", "node-b", "tcp://b"))
		h.clock.Advance(second)
		<-entered
		l.PrepareTransportShutdown()
		require.Equal(t, []string{"connect:tcp://b:ob", "disconnect:tcp://b:ob"}, h.rec.only("connect", "disconnect"),
			"the tick finished before the peers were disconnected")
		require.Empty(t, h.r.ActiveTargets())
	})
}

// fakeWatcher is a location.ChangeWatcher whose notifications the test
// sends. Each WatchChanges call answers the next programmed error (nil:
// success) and gets its own channel, closed when ctx ends (or by the test).
type fakeWatcher struct {
	mu     sync.Mutex
	errs   []error
	chans  []chan struct{}
	closed []bool
	tables [][]location.Table
	calls  chan int
	wg     sync.WaitGroup
}

// newFakeWatcher returns a watcher whose first calls answer errs.
func newFakeWatcher(errs ...error) *fakeWatcher {
	return &fakeWatcher{errs: errs, calls: make(chan int, 64)}
}

// WatchChanges implements location.ChangeWatcher.
func (w *fakeWatcher) WatchChanges(ctx context.Context, tables ...location.Table) (<-chan struct{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tables = append(w.tables, tables)
	n := len(w.tables)
	var err error
	if len(w.errs) > 0 {
		err, w.errs = w.errs[0], w.errs[1:]
	}
	w.calls <- n
	if err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 64)
	i := len(w.chans)
	w.chans = append(w.chans, ch)
	w.closed = append(w.closed, false)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		<-ctx.Done()
		w.close(i)
	}()
	return ch, nil
}

// waitCall waits for the n-th WatchChanges call.
func (w *fakeWatcher) waitCall(t *testing.T, n int) {
	t.Helper()
	waitCount(t, w.calls, n, "watch call")
}

// notify sends one notification on the newest watch.
func (w *fakeWatcher) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := len(w.chans) - 1
	if !w.closed[i] {
		w.chans[i] <- struct{}{}
	}
}

// close closes watch i (idempotent).
func (w *fakeWatcher) close(i int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed[i] {
		w.closed[i] = true
		close(w.chans[i])
	}
}

func TestLoopWatch(t *testing.T) {
	ctx := context.Background()
	tables := []location.Table{location.TableMeshNodes}

	// watchLoop returns a loop over a fake reconciler that watches w and
	// counts the notifications it turned into tick requests.
	watchLoop := func(t *testing.T, w *fakeWatcher) (*loopHarness, chan struct{}) {
		h := &loopHarness{rec: &recorder{}, clock: newFakeClock()}
		h.fr = newFakeLoopRec(h.rec)
		l, err := NewLoop(LoopOptions{
			Reconciler: h.fr, Watcher: w, WatchTables: tables, WatchRetryDelay: 600 * time.Millisecond,
			Clock: h.clock, Logger: discardLogger(),
		})
		require.NoError(t, err)
		notified := make(chan struct{}, 64)
		l.notified = func() { notified <- struct{}{} }
		h.l = l
		t.Cleanup(func() {
			require.NoError(t, l.Stop(context.Background()))
			w.wg.Wait()
		})
		return h, notified
	}

	t.Run("change_ticks_at_once", func(t *testing.T) {
		w := newFakeWatcher()
		h, _ := watchLoop(t, w)
		require.True(t, h.l.Watching())
		require.NoError(t, h.l.Start(ctx))
		w.waitCall(t, 1)
		poll := h.clock.waitArmed(t)
		w.notify()
		h.fr.waitTick(t, 2)
		require.Equal(t, time.Duration(0), h.clock.Now(), "no time passed")
		next := h.clock.waitArmed(t)
		require.True(t, poll.isStopped(), "the polling timer was replaced")
		require.Equal(t, time.Second, next.delay, "polling goes on after the change")
		require.Equal(t, [][]location.Table{tables}, w.tables)
	})

	t.Run("burst_is_one_tick", func(t *testing.T) {
		w := newFakeWatcher()
		h, notified := watchLoop(t, w)
		require.NoError(t, h.l.Start(ctx))
		w.waitCall(t, 1)
		h.clock.waitArmed(t)
		entered, release := make(chan struct{}), make(chan struct{})
		h.fr.setTick(func(context.Context) error {
			entered <- struct{}{}
			<-release
			return nil
		})
		w.notify()
		<-notified
		<-entered // tick 2 runs and blocks
		for range 5 {
			w.notify()
		}
		for range 5 {
			<-notified
		}
		h.fr.setTick(nil)
		close(release)
		h.fr.waitTick(t, 3)
		h.clock.waitArmed(t) // after tick 2
		h.clock.waitArmed(t) // after tick 3
		require.Equal(t, 3, h.fr.count(), "five changes during a tick make one more tick")
		require.Empty(t, h.l.kick)
	})

	t.Run("failure_falls_back_to_polling_and_retries", func(t *testing.T) {
		w := newFakeWatcher(errStoreDown, errStoreDown)
		h, _ := watchLoop(t, w)
		require.NoError(t, h.l.Start(ctx))
		w.waitCall(t, 1)
		delays := []time.Duration{h.clock.waitArmed(t).delay, h.clock.waitArmed(t).delay}
		require.ElementsMatch(t, []time.Duration{time.Second, 600 * time.Millisecond}, delays, "polling and the first retry")

		h.clock.SetMs(600) // the first retry fails again
		w.waitCall(t, 2)
		require.Equal(t, 1200*time.Millisecond, h.clock.waitArmed(t).delay, "the retry delay doubles")

		h.clock.SetMs(1000) // polling goes on while the watch is down
		h.fr.waitTick(t, 2)
		require.Equal(t, time.Second, h.clock.waitArmed(t).delay)

		h.clock.SetMs(1800) // the second retry succeeds and catches up
		w.waitCall(t, 3)
		h.fr.waitTick(t, 3)
		h.clock.waitArmed(t)
		w.notify()
		h.fr.waitTick(t, 4)
		require.Equal(t, 4, h.fr.count())
	})

	t.Run("closed_watch_is_restarted", func(t *testing.T) {
		w := newFakeWatcher()
		h, _ := watchLoop(t, w)
		require.NoError(t, h.l.Start(ctx))
		w.waitCall(t, 1)
		require.Equal(t, time.Second, h.clock.waitArmed(t).delay)
		w.close(0)
		require.Equal(t, 600*time.Millisecond, h.clock.waitArmed(t).delay)
		h.clock.SetMs(600)
		w.waitCall(t, 2)
		h.fr.waitTick(t, 2) // the restart's catch-up tick
		h.clock.waitArmed(t)
		w.notify()
		h.fr.waitTick(t, 3)
		require.Equal(t, 3, h.fr.count())
	})

	t.Run("watch_tables_required", func(t *testing.T) {
		_, err := NewLoop(LoopOptions{Reconciler: newFakeLoopRec(&recorder{}), Watcher: newFakeWatcher()})
		require.ErrorIs(t, err, location.ErrInvalidArgument)
	})
}

// watchingPeers is a PeerLister and MeshNodeLister that can watch.
type watchingPeers struct {
	fakePeerLister
	fakeMeshNodes
	*fakeWatcher
}

func TestLoopWatchDetection(t *testing.T) {
	lt := newTracker(t, newFakeLeaseStore(), newFakeClock(), 1000)
	store := &watchingPeers{fakeWatcher: newFakeWatcher()}
	peers, err := NewPeerRowSource(store, lt)
	require.NoError(t, err)
	nodes, err := NewMeshNodeSource(store, lt, Options{})
	require.NoError(t, err)
	plainPeers, err := NewPeerRowSource(fakePeerLister{}, lt)
	require.NoError(t, err)

	cases := []struct {
		name    string
		source  PeerSource
		disable bool
		publish bool
		tables  []location.Table
	}{
		{"peer_rows", peers, false, false, []location.Table{location.TablePeers}},
		{"mesh_nodes", nodes, false, false, []location.Table{location.TableMeshNodes}},
		{"store_cannot_watch", plainPeers, false, false, nil},
		{"disabled", nodes, true, false, nil},
		{"publish_only", nodes, false, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReconciler(ReconcilerOptions{
				Local: localA(), Source: c.source, Executor: wrapPlain(newFakeExec(&recorder{})),
				PublishOnly: c.publish, Logger: discardLogger(),
			})
			require.NoError(t, err)
			l, err := NewLoop(LoopOptions{Reconciler: r, DisableWatch: c.disable, Logger: discardLogger()})
			require.NoError(t, err)
			require.Equal(t, c.tables != nil, l.Watching())
			require.Equal(t, c.tables, l.tables)
		})
	}
}
