package autoconnect

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// The same planner, tracker, sources and reconciler, driven against the
// in-memory reference store.

// memFix is a memstore on a manual wall clock plus the package's fakes.
type memFix struct {
	t     *testing.T
	ctx   context.Context
	store *memstore.Store
	wall  *clock.Manual
	mono  *fakeClock
	lt    *LeaseTracker
	tok   map[string]location.OwnerToken
}

// newMemFix returns an empty store and a lease tracker over it.
func newMemFix(t *testing.T) *memFix {
	f := &memFix{
		t: t, ctx: context.Background(),
		wall: clock.NewManual(fixture.T0()),
		mono: newFakeClock(), tok: map[string]location.OwnerToken{},
	}
	f.store = memstore.New(memstore.Options{Clock: f.wall.Now})
	f.lt = newTracker(t, f.store, f.mono, 1000)
	return f
}

// claim claims a 15 s owner lease.
func (f *memFix) claim(owner string) location.OwnerToken {
	f.t.Helper()
	f.tok[owner] = storetest.Claim(f.t, f.ctx, f.store, owner, 15*time.Second)
	return f.tok[owner]
}

// meshNode writes a descriptor of testMesh (revision 1) for a claimed
// owner.
func (f *memFix) meshNode(owner, ridText, endpoint string, lifecycle int64, state location.RuntimeState, intent location.WriteIntent) {
	f.t.Helper()
	f.meshNodeRevision(owner, ridText, endpoint, lifecycle, 1, state, intent)
}

// meshNodeRevision is meshNode with a descriptor revision.
func (f *memFix) meshNodeRevision(owner, ridText, endpoint string, lifecycle, revision int64, state location.RuntimeState, intent location.WriteIntent) {
	f.t.Helper()
	d := location.MeshNodeDescriptor{
		MeshName: testMesh, RID: location.RoutingID(ridText), LifecycleGeneration: lifecycle, DescriptorRevision: revision,
		Endpoint: endpoint, ObjectRole: location.RoleServer, PlacementWeight: 100,
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10}, State: state, SecurityIdentity: "plaintext",
		OwnerID: owner, LeaseGeneration: f.tok[owner].LeaseGeneration,
	}
	res, err := f.store.UpdateMeshNode(f.ctx, d, intent)
	require.NoError(f.t, err)
	require.Equal(f.t, location.Stored, res.Status)
}

// peerRows lists every peer row of testMesh.
func (f *memFix) peerRows() []location.PeerLocation {
	f.t.Helper()
	m := testMesh
	rows, err := f.store.ListPeers(f.ctx, location.PeerFilter{MeshName: &m})
	require.NoError(f.t, err)
	return rows
}

// switchableSource fails while down is set, and otherwise asks its inner
// source.
type switchableSource struct {
	inner PeerSource
	mu    sync.Mutex
	down  bool
}

// setDown switches failures on or off.
func (s *switchableSource) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// ListLivePeers implements PeerSource.
func (s *switchableSource) ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return nil, errStoreDown
	}
	return s.inner.ListLivePeers(ctx, f)
}

func TestWithMemstore(t *testing.T) {
	t.Run("route_mesh_wiring", func(t *testing.T) {
		f := newMemFix(t)
		for _, o := range []string{"oa", "ob", "oc", "od"} {
			f.claim(o)
		}
		f.meshNode("oa", "node-a", "tcp://a:1", 1, location.StateServing, location.IntentNewClaim)
		f.meshNode("ob", "node-b", "TCP://B:01", 1, location.StateServing, location.IntentNewClaim)
		f.meshNode("oc", "node-c", "tcp://c:1", 1, location.StateServing, location.IntentNewClaim)
		f.meshNode("od", "node-d", "tcp://d:1", 1, location.StateServing, location.IntentNewClaim)
		src, err := NewMeshNodeSource(f.store, f.lt, Options{})
		require.NoError(t, err)
		l := local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1")
		h := newHarness(t, harnessConfig{local: &l})
		h.r.source = src
		h.r.clock = f.mono

		h.tick()
		require.Equal(t, []string{"tcp://b:1", "tcp://c:1", "tcp://d:1"}, h.activeEndpoints())
		for _, r := range []location.RoutingID{"node-a", "node-b", "node-d"} {
			member, known := h.r.KnowsPeer(r)
			require.True(t, member && known, "%s", r)
		}

		// c starts draining: it stays connected.
		f.meshNodeRevision("oc", "node-c", "tcp://c:1", 1, 2, location.StateDraining, location.IntentRenew)
		h.rec.reset()
		h.tick()
		require.Empty(t, h.rec.only("connect", "disconnect"))

		// d's owner goes away: once the tracker's cached answer is older
		// than the polling interval, d is dropped.
		_, err = f.store.ReleaseOwnerLease(f.ctx, f.tok["od"])
		require.NoError(t, err)
		h.tick()
		require.Empty(t, h.rec.only("disconnect"), "the tracker still trusts its cached answer")
		f.mono.AdvanceMs(1000)
		f.wall.Advance(time.Second)
		h.tick()
		require.Equal(t, []string{"disconnect:tcp://d:1:od"}, h.rec.only("disconnect"))

		// b restarts: a new lease and a new lifecycle generation.
		h.rec.reset()
		_, err = f.store.ReleaseOwnerLease(f.ctx, f.tok["ob"])
		require.NoError(t, err)
		f.claim("ob")
		f.meshNode("ob", "node-b", "tcp://b:1", 2, location.StateServing, location.IntentNewClaim)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:1:ob", "disconnect:tcp://b:1:ob"}, h.rec.only("connect", "disconnect"))
		require.Equal(t, []string{"router|6e6f64652d63|1", "router|6e6f64652d62|2"}, keysOf(h.r.ActiveTargets()))
	})

	t.Run("AC-T10_all_descriptor_pages", func(t *testing.T) {
		f := newMemFix(t)
		for i := range 150 {
			owner := fmt.Sprintf("o%03d", i)
			f.claim(owner)
			f.meshNode(owner, fmt.Sprintf("node-%03d", i), fmt.Sprintf("tcp://n%03d:1", i), 1, location.StateServing, location.IntentNewClaim)
		}
		first, err := f.store.ListMeshNodes(f.ctx, testMesh, location.PageRequest{PageSize: 100})
		require.NoError(t, err)
		require.Len(t, first.Items, 100)
		require.NotEmpty(t, first.ContinuationToken, "the store pages")
		src, err := NewMeshNodeSource(f.store, f.lt, Options{ListPageSize: 100})
		require.NoError(t, err)
		rows, err := src.ListLivePeers(f.ctx, routeMeshFilter())
		require.NoError(t, err)
		require.Len(t, rows, 150)
	})

	t.Run("peer_row_publication", func(t *testing.T) {
		f := newMemFix(t)
		f.claim("oa")
		f.claim("ob")
		res, err := f.store.UpdatePeer(f.ctx, router("ob", "node-b", "tcp://b:1"), location.IntentNewClaim)
		require.NoError(t, err)
		require.Equal(t, location.Stored, res.Status)
		rows, err := NewPeerRowSource(f.store, f.lt)
		require.NoError(t, err)
		src := &switchableSource{inner: rows}
		lr := router("oa", "node-a", " TCP://A:001/ ")
		l := local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1")
		r, err := NewReconciler(ReconcilerOptions{
			Local: l, LocalRow: &lr, Publisher: f.store, Source: src,
			Executor: wrapFull(newFakeExec(&recorder{})), Clock: f.mono, Logger: discardLogger(),
		})
		require.NoError(t, err)

		// AC-R1 / AC-R2: published once, normalised.
		require.NoError(t, r.Tick(f.ctx))
		require.True(t, r.LocalPublicationReady())
		require.Equal(t, []string{"tcp://b:1"}, endpoints(r.ActiveTargets()))
		stored := f.peerRows()
		require.Len(t, stored, 2)
		require.Equal(t, "tcp://a:1", stored[0].Endpoint)
		require.Equal(t, int64(1), stored[0].Generation)

		// AC-F13: a failure resets publication; the next tick re-publishes
		// through NewClaim (conflict with our own live row) and Renew.
		src.setDown(true)
		require.NoError(t, r.Tick(f.ctx))
		require.False(t, r.LocalPublicationReady())
		require.Equal(t, []string{"tcp://b:1"}, endpoints(r.ActiveTargets()), "fail-static")
		src.setDown(false)
		require.NoError(t, r.Tick(f.ctx))
		require.True(t, r.LocalPublicationReady())
		require.False(t, r.StoreFailed())
		require.Equal(t, int64(1), f.peerRows()[0].Generation)

		// AC-R10: the row vanished (a store that lost it): claimed again.
		_, err = f.store.RemovePeer(f.ctx, location.PeerKey{
			AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter, NodeRID: rid("node-a"),
		}, location.OwnerToken{OwnerID: "oa", LeaseGeneration: 1})
		require.NoError(t, err)
		require.Len(t, f.peerRows(), 1)
		require.NoError(t, r.Tick(f.ctx))
		require.True(t, r.LocalPublicationReady())
		require.False(t, r.StoreFailed())
		stored = f.peerRows()
		require.Len(t, stored, 2)
		require.Equal(t, int64(2), stored[0].Generation, "the per-key counter survived the removal")

		// AC-S1: shutdown removes the row with its generation.
		require.NoError(t, r.Shutdown(f.ctx))
		require.False(t, r.LocalPublicationReady())
		require.Equal(t, []string{"ob"}, ownersOfRows(f.peerRows()))
		require.Empty(t, r.ActiveTargets())
	})

	t.Run("watch_driven_tick", func(t *testing.T) {
		f := newMemFix(t)
		f.claim("oa")
		f.claim("ob")
		src, err := NewMeshNodeSource(f.store, f.lt, Options{})
		require.NoError(t, err)
		rec := &recorder{}
		exec := newFakeExec(rec)
		connected := make(chan string, 8)
		exec.setConnectHook(func(_ context.Context, t Target) { connected <- t.Endpoint })
		r, err := NewReconciler(ReconcilerOptions{
			Local: localA(), Source: src, Executor: wrapFull(exec), Clock: f.mono, Logger: discardLogger(),
		})
		require.NoError(t, err)
		l, err := NewLoop(LoopOptions{Reconciler: r, Clock: f.mono, Logger: discardLogger()})
		require.NoError(t, err)
		require.True(t, l.Watching(), "memstore can watch: detected through the source")
		require.NoError(t, l.Start(f.ctx))
		t.Cleanup(func() { require.NoError(t, l.Stop(context.Background())) })

		f.meshNode("ob", "node-b", "tcp://b:1", 1, location.StateServing, location.IntentNewClaim)
		select {
		case ep := <-connected:
			require.Equal(t, "tcp://b:1", ep)
		case <-time.After(waitLimit):
			t.Fatal("the change did not trigger a tick")
		}
		require.Equal(t, time.Duration(0), f.mono.Now(), "no polling interval passed")
	})
}

// TestLeaseLossAndRejoin walks the hooks a node type uses around its owner
// lease (see the package doc, "Shutdown and lease loss"): when the lease is
// lost, PrepareTransportShutdown stops acting on it at once (every peer
// disconnected, no store write); a new Reconciler and Loop then run under
// the next lease and lifecycle generation and take the node's peer row
// over; a graceful leave is Stop, RemoveAllByOwner, ReleaseOwnerLease.
func TestLeaseLossAndRejoin(t *testing.T) {
	f := newMemFix(t)
	f.claim("oa")
	f.claim("ob")
	f.meshNode("oa", "node-a", "tcp://a:1", 1, location.StateServing, location.IntentNewClaim)
	f.meshNode("ob", "node-b", "tcp://b:1", 1, location.StateServing, location.IntentNewClaim)
	pub := &lossyPublisher{Store: f.store}
	rec := &recorder{}
	exec := newFakeExec(rec)
	start := func() (*Reconciler, *Loop) {
		t.Helper()
		src, err := NewMeshNodeSource(f.store, f.lt, Options{})
		require.NoError(t, err)
		lr := router("oa", "node-a", "tcp://a:1")
		r, err := NewReconciler(ReconcilerOptions{
			Local: local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"), LocalRow: &lr,
			Publisher: pub, Source: src, Executor: wrapFull(exec), Clock: f.mono, Logger: discardLogger(),
		})
		require.NoError(t, err)
		l, err := NewLoop(LoopOptions{
			Reconciler: r, MeshName: testMesh, Stamps: f.store, LiveOwners: f.lt, DisableWatch: true,
			Clock: f.mono, Logger: discardLogger(),
		})
		require.NoError(t, err)
		require.NoError(t, l.Start(f.ctx))
		return r, l
	}

	r1, l1 := start()
	require.True(t, r1.LocalPublicationReady())
	require.Equal(t, []string{"connect:tcp://b:1:ob"}, rec.only("connect", "disconnect"))

	// The lease is lost (revoked by an operator, or expired in an outage).
	_, err := f.store.ReleaseOwnerLease(f.ctx, f.tok["oa"])
	require.NoError(t, err)
	writes, _ := pub.log()
	l1.PrepareTransportShutdown()
	require.Equal(t, []string{"connect:tcp://b:1:ob", "disconnect:tcp://b:1:ob"}, rec.only("connect", "disconnect"))
	after, _ := pub.log()
	require.Equal(t, writes, after, "no store write with the dead lease")
	require.Equal(t, []string{"oa"}, ownersOfRows(f.peerRows()), "the row stays: the next incarnation takes it over")
	require.ErrorIs(t, l1.Start(f.ctx), ErrLoopStopped)

	// Rejoin under the next lease and lifecycle generation.
	f.claim("oa")
	f.meshNode("oa", "node-a", "tcp://a:1", 2, location.StateServing, location.IntentNewClaim)
	r2, l2 := start()
	require.True(t, r2.LocalPublicationReady(), "the row of the lost lease is adopted")
	writes, _ = pub.log()
	require.Equal(t, []string{"NewClaim:stored", "NewClaim:rejectedConflict", "Renew:stored"}, writes)
	require.Equal(t, []string{"connect:tcp://b:1:ob", "disconnect:tcp://b:1:ob", "connect:tcp://b:1:ob"}, rec.only("connect", "disconnect"))

	// Graceful leave, in this order (releasing first would make the bulk
	// removal a no-op).
	require.NoError(t, l2.Stop(f.ctx))
	removed, err := f.store.RemoveAllByOwner(f.ctx, f.tok["oa"])
	require.NoError(t, err)
	require.Equal(t, int64(1), removed, "the descriptor (Stop removed the peer row)")
	kind, err := f.store.ReleaseOwnerLease(f.ctx, f.tok["oa"])
	require.NoError(t, err)
	require.Equal(t, location.KindReleased, kind)
	require.Empty(t, f.peerRows())
}

// LoopOptions.OnTick reports every tick: when it started, how long it ran,
// whether it was skipped (nothing moved) and the store-failure state; the
// reconciler's DesiredTargets is the last listing's desired set.
func TestTickReportsAndDesiredTargets(t *testing.T) {
	f := newMemFix(t)
	f.claim("oa")
	f.claim("ob")
	f.meshNode("ob", "node-b", "tcp://b:1", 1, location.StateServing, location.IntentNewClaim)
	src, err := NewMeshNodeSource(f.store, f.lt, Options{})
	require.NoError(t, err)
	r, err := NewReconciler(ReconcilerOptions{
		Local:  local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"),
		Source: src, Executor: wrapPlain(newFakeExec(&recorder{})), Clock: f.mono, Logger: discardLogger(),
	})
	require.NoError(t, err)
	require.Empty(t, r.DesiredTargets(), "before the first listing")
	var reports []TickReport
	l, err := NewLoop(LoopOptions{
		Reconciler: r, MeshName: testMesh, Stamps: f.store, LiveOwners: f.lt, DisableWatch: true,
		Clock: f.mono, Logger: discardLogger(), OnTick: func(tr TickReport) { reports = append(reports, tr) },
	})
	require.NoError(t, err)

	f.mono.Advance(5 * time.Second)
	require.NoError(t, l.Tick(f.ctx))
	require.NoError(t, l.Tick(f.ctx))
	require.Equal(t, []TickReport{
		{Started: 5 * time.Second},
		{Started: 5 * time.Second, Skipped: true},
	}, reports)
	desired := r.DesiredTargets()
	require.Len(t, desired, 1)
	require.Equal(t, "tcp://b:1", desired[0].Endpoint)
	require.Equal(t, desired, r.ActiveTargets())

	f.claim("oc")
	f.meshNode("oc", "node-c", "tcp://c:1", 1, location.StateServing, location.IntentNewClaim) // the stamp moves
	r.source = failingLister{}
	require.NoError(t, l.Tick(f.ctx))
	require.Equal(t, TickReport{Started: 5 * time.Second, StoreFailed: true}, reports[2])
	require.Equal(t, desired, r.DesiredTargets(), "a store failure keeps the last desired set")
}

// failingLister is a PeerSource whose listings fail.
type failingLister struct{}

// ListLivePeers implements PeerSource.
func (failingLister) ListLivePeers(_ context.Context, _ location.PeerFilter) ([]location.PeerLocation, error) {
	return nil, testError("listing failed")
}

// cancellingSource cancels the tick's context during the listing, as a loop
// stopping mid-tick does, and answers with the context's error.
type cancellingSource struct {
	inner  PeerSource
	cancel context.CancelFunc
}

func (s *cancellingSource) ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	if s.cancel == nil {
		return s.inner.ListLivePeers(ctx, f)
	}
	s.cancel()
	return nil, ctx.Err()
}

// A tick abandoned because its own context ended is not a store failure:
// the local row stays believed published, so shutdown still removes it.
func TestAbandonedTickKeepsPublication(t *testing.T) {
	f := newMemFix(t)
	f.claim("oa")
	rows, err := NewPeerRowSource(f.store, f.lt)
	require.NoError(t, err)
	src := &cancellingSource{inner: rows}
	lr := router("oa", "node-a", "tcp://a:1")
	r, err := NewReconciler(ReconcilerOptions{
		Local: local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"), LocalRow: &lr,
		Publisher: f.store, Source: src, Executor: wrapFull(newFakeExec(&recorder{})), Clock: f.mono, Logger: discardLogger(),
	})
	require.NoError(t, err)
	require.NoError(t, r.Tick(f.ctx))
	require.True(t, r.LocalPublicationReady())

	tickCtx, cancel := context.WithCancel(f.ctx)
	src.cancel = cancel
	err = r.Tick(tickCtx)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, r.StoreFailed(), "an abandoned tick says nothing about the store")
	require.True(t, r.LocalPublicationReady())

	require.NoError(t, r.Shutdown(f.ctx))
	require.Empty(t, f.peerRows(), "shutdown removed the local row")
}
