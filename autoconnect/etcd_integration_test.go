package autoconnect

import (
	"context"
	"maps"
	"slices"
	"strings"
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

// The planner, tracker, sources, reconciler and loop of three simulated
// nodes, each with its own owner lease, sharing one etcdstore on the
// embedded member (a fresh prefix per test).

// integrationLeaseTTL is the owner lease of every simulated node: longer
// than any test, so only a revoke ends one.
const integrationLeaseTTL = time.Minute

// graphLog records the executor calls of every node of a mesh and wakes
// the test after each one.
type graphLog struct {
	mu sync.Mutex
	// calls holds, per node, its executor calls in order: "connect:<peer>"
	// or "disconnect:<peer>", the peer named by its owner id.
	calls map[string][]string
	// changed has room for one pending wake-up.
	changed chan struct{}
}

// newGraphLog returns an empty log.
func newGraphLog() *graphLog {
	return &graphLog{calls: map[string][]string{}, changed: make(chan struct{}, 1)}
}

// add records one call of node's executor.
func (g *graphLog) add(node, call string) {
	g.mu.Lock()
	g.calls[node] = append(g.calls[node], call)
	g.mu.Unlock()
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// snapshot returns a copy of every node's calls (nodes without calls have
// an empty list).
func (g *graphLog) snapshot(nodes []string) map[string][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string][]string{}
	for _, n := range nodes {
		out[n] = append([]string{}, g.calls[n]...)
	}
	return out
}

// graph returns, per node, the sorted peers it is connected to according
// to its calls.
func (g *graphLog) graph(nodes []string) map[string][]string {
	out := map[string][]string{}
	for node, calls := range g.snapshot(nodes) {
		connected := map[string]bool{}
		for _, c := range calls {
			switch op, peer, _ := strings.Cut(c, ":"); op {
			case "connect":
				connected[peer] = true
			case "disconnect":
				delete(connected, peer)
			}
		}
		out[node] = slices.Sorted(maps.Keys(connected))
	}
	return out
}

// graphExec is one node's executor: every call goes to the shared log.
type graphExec struct {
	node string
	log  *graphLog
}

// Connect implements Executor; the connection always succeeds.
func (e graphExec) Connect(_ context.Context, t Target) bool {
	e.log.add(e.node, "connect:"+t.OwnerID)
	return true
}

// Disconnect implements Executor.
func (e graphExec) Disconnect(t Target) { e.log.add(e.node, "disconnect:"+t.OwnerID) }

// integrationWiring says how a node describes itself and how it finds its
// peers.
type integrationWiring int

// The two wirings.
const (
	// wiringMeshNodes: each node writes its mesh-node descriptor; the loop
	// lists descriptors (MeshNodeSource) and skips ticks by the mesh-node
	// change stamp (the production RouteMesh wiring).
	wiringMeshNodes integrationWiring = iota
	// wiringPeerRows: each reconciler publishes its own peer row and lists
	// the peer table (PeerRowSource).
	wiringPeerRows
)

// simNode is one simulated process.
type simNode struct {
	name     string // also its owner id
	rid      location.RoutingID
	endpoint string
	token    location.OwnerToken
	loop     *Loop
}

// simMesh is the store, the clock and the nodes of one test.
type simMesh struct {
	t      *testing.T
	store  *etcdstore.Store
	clock  *fakeClock
	log    *graphLog
	wiring integrationWiring
	watch  bool
	nodes  []*simNode
}

// newSimMesh returns a mesh on a fresh prefix of the shared member whose
// loops run on a manual clock: with watch, only change notifications make
// them tick; without, only Advance does.
func newSimMesh(t *testing.T, wiring integrationWiring, watch bool) *simMesh {
	t.Helper()
	client := etcdtest.Connect(t)
	store, err := etcdstore.New(client, etcdstore.Options{Root: etcdtest.UniquePrefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	return &simMesh{t: t, store: store, clock: newFakeClock(), log: newGraphLog(), wiring: wiring, watch: watch}
}

// names returns the node names in start order.
func (m *simMesh) names() []string {
	out := make([]string, 0, len(m.nodes))
	for _, n := range m.nodes {
		out = append(out, n.name)
	}
	return out
}

// claim claims the owner lease of a new node.
func (m *simMesh) claim(name, ridText, endpoint string) *simNode {
	m.t.Helper()
	token := storetest.Claim(m.t, m.t.Context(), m.store, name, integrationLeaseTTL)
	n := &simNode{name: name, rid: location.RoutingID(ridText), endpoint: endpoint, token: token}
	m.nodes = append(m.nodes, n)
	return n
}

// start publishes n (its descriptor, or through its reconciler's first
// tick its peer row) and starts its loop, stopped when the test ends.
func (m *simMesh) start(n *simNode) {
	t := m.t
	t.Helper()
	timing := Options{PollingInterval: ms(1000)}
	tracker, err := NewLeaseTracker(LeaseTrackerOptions{Store: m.store, Options: timing, Clock: m.clock})
	require.NoError(t, err)
	rid := n.rid
	local := Local{AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter,
		NodeRID: &rid, Endpoint: n.endpoint, ObjectRole: location.RoleServer}
	ropts := ReconcilerOptions{Local: local, Executor: graphExec{node: n.name, log: m.log},
		Options: timing, Clock: m.clock, Logger: discardLogger()}
	lopts := LoopOptions{MeshName: testMesh, LiveOwners: tracker, DisableWatch: !m.watch,
		Options: timing, Clock: m.clock, Logger: discardLogger()}
	switch m.wiring {
	case wiringMeshNodes:
		d := location.MeshNodeDescriptor{
			MeshName: testMesh, RID: rid, LifecycleGeneration: 1, DescriptorRevision: 1,
			Endpoint: n.endpoint, ObjectRole: location.RoleServer, PlacementWeight: 100,
			ActivationConcurrency: location.ActivationConcurrency{Limit: 10}, State: location.StateServing,
			SecurityIdentity: "plaintext", OwnerID: n.name, LeaseGeneration: n.token.LeaseGeneration,
		}
		res, err := m.store.UpdateMeshNode(t.Context(), d, location.IntentNewClaim)
		require.NoError(t, err)
		require.Equal(t, location.Stored, res.Status)
		ropts.Source, err = NewMeshNodeSource(m.store, tracker, timing)
		require.NoError(t, err)
		lopts.Stamps = m.store
	case wiringPeerRows:
		row := location.PeerLocation{AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, NodeRID: &rid,
			Role: location.PeerRoleRouter, Endpoint: n.endpoint, Weight: 100, OwnerID: n.name,
			Metadata: map[string]string{MetadataObjectRole: string(location.RoleServer)}}
		ropts.LocalRow, ropts.Publisher = &row, m.store
		ropts.Source, err = NewPeerRowSource(m.store, tracker)
		require.NoError(t, err)
	}
	lopts.Reconciler, err = NewReconciler(ropts)
	require.NoError(t, err)
	n.loop, err = NewLoop(lopts)
	require.NoError(t, err)
	require.Equal(t, m.watch, n.loop.Watching())
	require.NoError(t, n.loop.Start(t.Context()))
	t.Cleanup(func() { require.NoError(t, n.loop.Stop(context.Background())) })
}

// pollRound makes every loop tick once by polling: it waits until each
// loop has armed its polling timer (so the previous round has ended) and
// moves the manual clock by one polling interval.
func (m *simMesh) pollRound() {
	m.t.Helper()
	for range m.nodes {
		m.clock.waitArmed(m.t)
	}
	m.clock.Advance(time.Second)
}

// waitGraph waits, on executor calls and for at most waitLimit, until the
// connection graph is want.
func (m *simMesh) waitGraph(want map[string][]string) {
	m.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		got := m.log.graph(m.names())
		if maps.EqualFunc(got, want, slices.Equal) {
			return
		}
		select {
		case <-m.log.changed:
		case <-deadline.C:
			require.Equal(m.t, want, got, "connection graph not reached; calls: %v", m.log.snapshot(m.names()))
		}
	}
}

func TestEtcdIntegration(t *testing.T) {
	wirings := []struct {
		name   string
		wiring integrationWiring
	}{
		{"mesh_nodes", wiringMeshNodes},
		{"peer_rows", wiringPeerRows},
	}
	for _, w := range wirings {
		for _, watch := range []bool{true, false} {
			mode := "polling"
			if watch {
				mode = "watch"
			}
			t.Run(w.name+"/"+mode, func(t *testing.T) {
				m := newSimMesh(t, w.wiring, watch)
				a := m.claim("a", "node-a", "tcp://a:7300")
				b := m.claim("b", "node-b", "tcp://b:7300")
				c := m.claim("c", "node-c", "tcp://c:7300")
				for _, n := range []*simNode{a, b, c} {
					m.start(n)
				}

				// The lower routing id dials: a dials b and c, b dials c.
				if !watch {
					m.pollRound()
				}
				m.waitGraph(map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": {}})

				// c's lease ends: a and b drop their connections to c.
				require.NoError(t, m.store.ExpireOwnerLease(t.Context(), c.name))
				if !watch {
					m.pollRound()
				}
				m.waitGraph(map[string][]string{"a": {"b"}, "b": {}, "c": {}})

				require.Equal(t, map[string][]string{
					"a": {"connect:b", "connect:c", "disconnect:c"},
					"b": {"connect:c", "disconnect:c"},
					"c": {},
				}, m.log.snapshot(m.names()), "no other executor call")
				if watch {
					require.Equal(t, time.Duration(0), m.clock.Now(), "every reaction came from the watch")
				} else {
					require.Equal(t, 2*time.Second, m.clock.Now(), "two polling rounds")
				}
			})
		}
	}
}

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
