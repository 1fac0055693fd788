package autoconnect

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// A Loop skips a tick while the change stamp and the live-owner version are
// unchanged only when its reconciler is settled: work a skipped tick would
// leave undone (a refused or lost connection, deferred removals) makes the
// tick run.

// skipHarness is a loop over a real reconciler (on fakes) with a fixed
// change stamp and live-owner version.
type skipHarness struct {
	*harness
	stamps *fakeStamps
	loop   *Loop
}

// newSkipHarness builds the loop; the reconciler publishes localRowA
// unless noRow.
func newSkipHarness(t *testing.T, noRow bool, opts Options) *skipHarness {
	cfg := harnessConfig{localRow: localRowA(), opts: opts}
	if noRow {
		cfg.localRow = nil
	}
	h := &skipHarness{harness: newHarness(t, cfg), stamps: &fakeStamps{stamp: 1, version: 1, ok: true}}
	l, err := NewLoop(LoopOptions{
		Reconciler: h.r, MeshName: testMesh, Stamps: h.stamps, LiveOwners: h.stamps, DisableWatch: true,
		Clock: h.clock, Logger: discardLogger(),
	})
	require.NoError(t, err)
	h.loop = l
	return h
}

// loopTick runs one loop tick.
func (h *skipHarness) loopTick() {
	h.t.Helper()
	require.NoError(h.t, h.loop.Tick(context.Background()))
}

func TestLoopSkipsOnlySettledTicks(t *testing.T) {
	own := router("oa", "node-a", "tcp://a")
	b := router("ob", "node-b", "tcp://b")
	c := router("oc", "node-c", "tcp://c")

	t.Run("no_local_row", func(t *testing.T) {
		h := newSkipHarness(t, true, Options{})
		h.src.set(b)
		for range 3 {
			h.loopTick()
		}
		require.Equal(t, 1, h.src.count(), "a reconciler with no row to publish is settled once connected")
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
	})

	t.Run("refused_connect_retried", func(t *testing.T) {
		h := newSkipHarness(t, false, Options{})
		h.src.set(own, b)
		h.exec.queueConnect(false)
		h.loopTick()
		h.loopTick()
		require.Equal(t, []string{"connect:tcp://b:ob", "connect:tcp://b:ob"}, h.rec.only("connect"), "redialed")
		h.loopTick()
		require.Equal(t, 2, h.src.count(), "settled: skipped")
	})

	t.Run("lost_connection_redialed", func(t *testing.T) {
		h := newSkipHarness(t, false, Options{})
		h.src.set(own, b)
		h.loopTick()
		h.exec.lost("tcp://b")
		h.loopTick()
		require.Equal(t, []string{"connect:tcp://b:ob", "connect:tcp://b:ob"}, h.rec.only("connect"))
		h.loopTick()
		require.Equal(t, 2, h.src.count())
	})

	t.Run("closed_transport_redialed", func(t *testing.T) {
		h := newSkipHarness(t, false, Options{})
		h.src.set(own, b)
		h.loopTick()
		h.exec.setClosed(targetOf(b), true)
		h.loopTick()
		require.Equal(t, []string{"connect:tcp://b:ob", "connect:tcp://b:ob"}, h.rec.only("connect"))
	})

	t.Run("deferred_removals_run_when_the_window_ends", func(t *testing.T) {
		h := newSkipHarness(t, false, Options{OwnerLeaseTTL: ms(1000)})
		h.src.set(own, b, c)
		h.loopTick()
		h.src.fail(errStoreDown)
		h.stamps.mu.Lock()
		h.stamps.stamp++ // the store changed: the listing is needed, and fails
		h.stamps.mu.Unlock()
		h.loopTick()
		require.True(t, h.r.StoreFailed())
		h.src.set(own, b)
		h.clock.SetMs(100)
		h.loopTick() // recovery: c's removal is deferred
		h.clock.SetMs(500)
		h.loopTick() // still deferred
		require.Empty(t, h.rec.only("disconnect"))
		h.clock.SetMs(1100)
		h.loopTick()
		require.Equal(t, []string{"disconnect:tcp://c:oc"}, h.rec.only("disconnect"), "removed once the window ended, with nothing changed in the store")
		h.loopTick()
		require.Equal(t, []string{TargetKey(c)}, h.pendingKeys(), "c's connection is still closing: the ticks go on")
		h.exec.setClosed(targetOf(c), true)
		h.loopTick()
		require.Empty(t, h.pendingKeys())
		listings := h.src.count()
		h.loopTick()
		require.Equal(t, listings, h.src.count(), "settled again")
	})

	t.Run("unpublished_row_forces_the_tick", func(t *testing.T) {
		h := newSkipHarness(t, false, Options{})
		h.src.set(own, b)
		h.pub.queueWrite(conflict())
		h.loopTick()
		h.loopTick()
		require.Equal(t, 2, h.src.count(), "AC-L6 for a real reconciler")
		require.True(t, h.r.LocalPublicationReady())
	})
}

// TestLoopSeesAnOwnerDieAfterItsFirstListing: node c joins, the tick that
// lists it connects it, and c's lease ends before the next tick. The live
// owners read by the two ticks' version checks are the same, yet the
// connection to c must go (the loop remembers the version its listing left).
func TestLoopSeesAnOwnerDieAfterItsFirstListing(t *testing.T) {
	f := newMemFix(t)
	for _, o := range []string{"oa", "ob", "oc"} {
		f.claim(o)
	}
	f.meshNode("oa", "node-a", "tcp://a:1", 1, location.StateServing, location.IntentNewClaim)
	f.meshNode("ob", "node-b", "tcp://b:1", 1, location.StateServing, location.IntentNewClaim)
	src, err := NewMeshNodeSource(f.store, f.lt, Options{})
	require.NoError(t, err)
	rec := &recorder{}
	lr := router("oa", "node-a", "tcp://a:1")
	r, err := NewReconciler(ReconcilerOptions{
		Local: local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"), LocalRow: &lr,
		Publisher: f.store, Source: src, Executor: wrapPlain(newFakeExec(rec)), Clock: f.mono, Logger: discardLogger(),
	})
	require.NoError(t, err)
	l, err := NewLoop(LoopOptions{
		Reconciler: r, MeshName: testMesh, Stamps: f.store, LiveOwners: f.lt, DisableWatch: true,
		Clock: f.mono, Logger: discardLogger(),
	})
	require.NoError(t, err)
	tick := func() {
		t.Helper()
		f.mono.Advance(time.Second)
		require.NoError(t, l.Tick(f.ctx))
	}
	for range 3 {
		tick()
	}
	require.Equal(t, []string{"connect:tcp://b:1:ob"}, rec.transport())

	f.meshNode("oc", "node-c", "tcp://c:1", 1, location.StateServing, location.IntentNewClaim)
	tick()
	require.Equal(t, []string{"connect:tcp://b:1:ob", "connect:tcp://c:1:oc"}, rec.transport())
	_, err = f.store.ReleaseOwnerLease(f.ctx, f.tok["oc"])
	require.NoError(t, err)
	tick()
	require.Equal(t, []string{"connect:tcp://b:1:ob", "connect:tcp://c:1:oc", "disconnect:tcp://c:1:oc"}, rec.transport())
}

// TestConnectStopsWhenTheTickIsCancelled: once the tick's context is done
// (the loop stops, for example on a lost owner lease) no further
// connection is started.
func TestConnectStopsWhenTheTickIsCancelled(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	h.src.set(router("ob", "node-b", "tcp://b"), router("oc", "node-c", "tcp://c"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.exec.setConnectHook(func(context.Context, Target) { cancel() })
	require.NoError(t, h.r.Tick(ctx))
	require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
	require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
}
