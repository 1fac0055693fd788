package autoconnect

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// resolvingKV loses the answer of the first write once armed (the write
// applies), then holds every read — those that resolve the lost answer —
// until its context ends, as a cluster that stopped answering does, and
// records how that context ended.
type resolvingKV struct {
	clientv3.KV
	held     chan struct{} // closed when the first read is held
	heldOnce sync.Once
	ended    chan error // the cause of the held reads' context end

	mu      sync.Mutex
	armed   bool
	holding bool
}

func newResolvingKV(kv clientv3.KV) *resolvingKV {
	return &resolvingKV{KV: kv, held: make(chan struct{}), ended: make(chan error, 16)}
}

func (k *resolvingKV) arm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.armed = true
}

// stop holds no more reads.
func (k *resolvingKV) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.holding = false
}

// state returns whether the next write loses its answer (consuming it) and
// whether reads are held.
func (k *resolvingKV) state(write bool) (lose, hold bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if write && k.armed {
		k.armed, k.holding = false, true
		return true, false
	}
	return false, k.holding
}

// hold blocks a read until ctx ends.
func (k *resolvingKV) hold(ctx context.Context) error {
	k.heldOnce.Do(func() { close(k.held) })
	<-ctx.Done()
	k.ended <- context.Cause(ctx)
	return ctx.Err()
}

func (k *resolvingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if _, hold := k.state(false); hold {
		return nil, k.hold(ctx)
	}
	return k.KV.Get(ctx, key, opts...)
}

func (k *resolvingKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		lose, hold := k.state(!ops.OnlyReads())
		switch {
		case hold:
			return nil, k.hold(ctx)
		case !lose:
			return ops.Send(ctx, k.KV)
		}
		return kvfake.LoseAnswer(func() (*clientv3.TxnResponse, error) { return ops.Send(ctx, k.KV) }, false, nil, nil)
	})
}

// PrepareTransportShutdown returns at once while the tick in flight waits
// for a store write whose answer was lost: the store's resolution of that
// write ends when the tick's context is cancelled (the write answers
// location.ErrOutcomeUnknown), instead of re-reading for its resolve
// timeout (an hour here). Before that change, Prepare waited for the
// resolution (issue 12: a node fenced 1.3 s late).
func TestPrepareTransportShutdownWhileATickWriteResolves(t *testing.T) {
	client := etcdtest.Connect(t)
	kv := newResolvingKV(client.KV)
	store, err := etcdstore.New(client, etcdstore.Options{Root: etcdtest.UniquePrefix(t), KV: kv, ResolveTimeout: time.Hour})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	claimed := storetest.Claim(t, t.Context(), store, "oa", time.Minute)
	t.Cleanup(func() { _, _ = store.ReleaseOwnerLease(context.Background(), claimed) })
	t.Cleanup(kv.stop) // first

	clk := newFakeClock()
	timing := Options{PollingInterval: ms(1000)}
	tracker, err := NewLeaseTracker(LeaseTrackerOptions{Store: store, Options: timing, Clock: clk})
	require.NoError(t, err)
	src, err := NewPeerRowSource(store, tracker)
	require.NoError(t, err)
	rid := location.RoutingID("node-a")
	row := location.PeerLocation{AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, NodeRID: &rid,
		Role: location.PeerRoleRouter, Endpoint: "tcp://a:1", Weight: 100, OwnerID: "oa",
		Metadata: map[string]string{MetadataObjectRole: string(location.RoleServer)}}
	rec, err := NewReconciler(ReconcilerOptions{
		Local: Local{AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter,
			NodeRID: &rid, Endpoint: row.Endpoint, ObjectRole: location.RoleServer},
		LocalRow: &row, Publisher: store, Source: src, Executor: graphExec{node: "oa", log: newGraphLog()},
		Options: timing, Clock: clk, Logger: discardLogger(),
	})
	require.NoError(t, err)
	loop, err := NewLoop(LoopOptions{Reconciler: rec, MeshName: testMesh, DisableWatch: true, Options: timing,
		Clock: clk, Logger: discardLogger()})
	require.NoError(t, err)

	kv.arm() // the first tick's claim of the peer row applies and loses its answer
	started := make(chan error, 1)
	go func() { started <- loop.Start(t.Context()) }()
	select {
	case <-kv.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the tick's write was not resolved")
	}

	prepared := make(chan struct{})
	go func() {
		defer close(prepared)
		loop.PrepareTransportShutdown()
	}()
	select {
	case <-prepared:
	case <-time.After(10 * time.Second):
		t.Fatal("PrepareTransportShutdown waits for the tick's write to be resolved")
	}
	require.ErrorIs(t, <-kv.ended, context.Canceled, "the resolution ended with the tick's cancellation")
	require.ErrorIs(t, <-started, ErrLoopStopped)
	require.False(t, rec.LocalPublicationReady(), "the lost claim's outcome is unknown")
}
