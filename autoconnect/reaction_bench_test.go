package autoconnect

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/session"
)

// Reaction time of auto-connect on etcd: from a change in the store to the
// executor call it causes, with change-driven ticks (watch + polling) and
// with polling only. See docs/performance.md for figures.

// reactionPeers are the mesh sizes measured: peers besides the observer.
// Each iteration restarts one of them (its lease ends, then it comes back
// with a new lease and lifecycle generation), so the mesh, the rows and the
// owners the lease tracker knows stay the same size whatever b.N.
func reactionPeers() []int { return []int{8, 100} }

const (
	// reactionPolling is the observer's polling interval (the default).
	reactionPolling = DefaultPollingInterval
	// reactionLeaseTTL is every owner lease; the observer's is renewed,
	// the peers' are not, so it outlasts a run (at 100 peers, a peer is
	// restarted about every two minutes).
	reactionLeaseTTL = time.Hour
	// reactionWaitLimit bounds each wait for an executor call.
	reactionWaitLimit = 30 * time.Second
)

// reactionExec is the observer's executor: it timestamps the calls the
// benchmark waits for.
type reactionExec struct {
	mu   sync.Mutex
	want map[string]chan time.Time
}

// expect returns a channel that receives the time of the next call
// "connect:<target key>" or "disconnect:<target key>".
func (e *reactionExec) expect(call string) <-chan time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch := make(chan time.Time, 1)
	e.want[call] = ch
	return ch
}

// record timestamps one call.
func (e *reactionExec) record(call string) {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if ch, ok := e.want[call]; ok {
		delete(e.want, call)
		ch <- now
	}
}

// Connect implements Executor; the connection always succeeds.
func (e *reactionExec) Connect(_ context.Context, t Target) bool {
	e.record("connect:" + t.Key)
	return true
}

// Disconnect implements Executor.
func (e *reactionExec) Disconnect(t Target) { e.record("disconnect:" + t.Key) }

// reactionBench is the store, the observer and the peers of one run.
type reactionBench struct {
	b     *testing.B
	store *etcdstore.Store
	exec  *reactionExec
	// lifecycles holds each peer's current lifecycle generation.
	lifecycles []int64
}

// waitCall waits for an expected executor call and returns its time.
func (r *reactionBench) waitCall(what string, ch <-chan time.Time) time.Time {
	r.b.Helper()
	select {
	case at := <-ch:
		return at
	case <-time.After(reactionWaitLimit):
		r.b.Fatalf("no %s within %v", what, reactionWaitLimit)
		return time.Time{}
	}
}

// claim claims a lease for a new owner.
func (r *reactionBench) claim(owner string) location.OwnerToken {
	r.b.Helper()
	res, err := r.store.ClaimOwnerLease(r.b.Context(), owner, reactionLeaseTTL)
	if err != nil || res.Kind != location.KindClaimed {
		r.b.Fatalf("claim %s: %v %v", owner, res.Kind, err)
	}
	return res.Token
}

// describe writes the serving descriptor of a node (routing id = owner
// id).
func (r *reactionBench) describe(tok location.OwnerToken, lifecycle int64) {
	r.b.Helper()
	ridText := tok.OwnerID
	d := location.MeshNodeDescriptor{
		MeshName: testMesh, RID: location.RoutingID(ridText), LifecycleGeneration: lifecycle, DescriptorRevision: 1,
		Endpoint: "tcp://" + ridText + ":7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10}, State: location.StateServing,
		SecurityIdentity: "plaintext", OwnerID: tok.OwnerID, LeaseGeneration: tok.LeaseGeneration,
	}
	res, err := r.store.UpdateMeshNode(r.b.Context(), d, location.IntentNewClaim)
	if err != nil || res.Status != location.Stored {
		r.b.Fatalf("describe %s: %v %v", ridText, res.Status, err)
	}
}

// peerKey returns the target key of peer i's current lifecycle.
func (r *reactionBench) peerKey(i int) string {
	rid := location.RoutingID(peerName(i))
	return TargetKey(location.PeerLocation{Role: location.PeerRoleRouter, NodeRID: &rid, Generation: r.lifecycles[i]})
}

// peerName is the owner id and routing id of peer i; they sort after
// "observer", so the observer dials every peer.
func peerName(i int) string { return fmt.Sprintf("peer-%02d", i) }

// join (re)starts peer i with a new lease and the next lifecycle
// generation, and returns the wait for the observer's connect, when the
// descriptor write began and how long it took.
func (r *reactionBench) join(i int) (connected <-chan time.Time, start time.Time, write time.Duration) {
	r.b.Helper()
	tok := r.claim(peerName(i))
	r.lifecycles[i]++
	connected = r.exec.expect("connect:" + r.peerKey(i))
	start = time.Now()
	r.describe(tok, r.lifecycles[i])
	return connected, start, time.Since(start)
}

// pause waits a random part of the polling interval, so that changes fall
// at every phase of the observer's polling timer.
func pause() { time.Sleep(rand.N(reactionPolling)) }

// percentile returns the nearest-rank p-th percentile of ds, in
// milliseconds.
func percentile(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := max((p*len(s)+99)/100-1, 0)
	return float64(s[i]) / float64(time.Millisecond)
}

// BenchmarkReaction measures, on the embedded etcd member, the time from a
// change made by another node to the observer's executor call. Every
// iteration restarts one peer: "revoke" runs from the start of
// ExpireOwnerLease of the peer's lease to the observer's Disconnect, "join"
// from the start of the write of its new descriptor (new lease, next
// lifecycle generation) to the observer's Connect; "write" is that write's
// own round trip, included in "join". The observer runs the production
// RouteMesh wiring (MeshNodeSource, LeaseTracker, change stamps) with a 1 s
// polling interval, with change-driven ticks ("watch") or without
// ("polling"), with the store's watch cache (the default) or without it
// ("watch-no-cache": every owner lease and listing read from etcd). Before
// each change the benchmark waits a random part of the polling interval,
// so that changes fall at every phase of the polling timer. ns/op is
// suppressed: the metrics are percentiles (ms) of the b.N samples. Run
// with -benchtime=100x for stable percentiles.
func BenchmarkReaction(b *testing.B) {
	for _, peers := range reactionPeers() {
		for _, mode := range []struct {
			name    string
			watch   bool
			noCache bool
		}{{"watch", true, false}, {"watch-no-cache", true, true}, {"polling", false, false}} {
			b.Run(fmt.Sprintf("peers=%d/%s", peers, mode.name), func(b *testing.B) {
				benchmarkReaction(b, peers, mode.watch, mode.noCache)
			})
		}
	}
}

// benchmarkReaction is one mesh size and mode of BenchmarkReaction.
func benchmarkReaction(b *testing.B, peers int, watch, noCache bool) {
	client := etcdtest.Connect(b)
	store, err := etcdstore.New(client, etcdstore.Options{Root: etcdtest.UniquePrefix(b),
		WatchCache: etcdstore.WatchCacheOptions{Disabled: noCache}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	r := &reactionBench{b: b, store: store, exec: &reactionExec{want: map[string]chan time.Time{}},
		lifecycles: make([]int64, peers)}

	observer := r.claim("observer")
	lease, err := session.Adopt(b.Context(), store, observer, session.Options{TTL: reactionLeaseTTL})
	if err != nil {
		b.Fatal(err)
	}
	defer lease.Orphan()
	r.describe(observer, 1)
	timing := Options{PollingInterval: new(reactionPolling)}
	tracker, err := NewLeaseTracker(LeaseTrackerOptions{Store: store, Options: timing})
	if err != nil {
		b.Fatal(err)
	}
	source, err := NewMeshNodeSource(store, tracker, timing)
	if err != nil {
		b.Fatal(err)
	}
	rid := location.RoutingID("observer")
	rec, err := NewReconciler(ReconcilerOptions{
		Local: Local{AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter,
			NodeRID: &rid, Endpoint: "tcp://observer:7300", ObjectRole: location.RoleServer},
		Source: source, Executor: r.exec, Options: timing, Logger: discardLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	loop, err := NewLoop(LoopOptions{
		Reconciler: rec, MeshName: testMesh, Stamps: store, LiveOwners: tracker,
		DisableWatch: !watch, Options: timing, Logger: discardLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := loop.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := loop.Stop(context.Background()); err != nil {
			b.Error(err)
		}
	}()
	for i := range peers {
		connected, _, _ := r.join(i)
		r.waitCall("initial connect", connected)
	}

	joins := make([]time.Duration, 0, b.N)
	revokes := make([]time.Duration, 0, b.N)
	writes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for n := range b.N {
		i := n % peers
		pause()
		disconnected := r.exec.expect("disconnect:" + r.peerKey(i))
		start := time.Now()
		if err := store.ExpireOwnerLease(b.Context(), peerName(i)); err != nil {
			b.Fatal(err)
		}
		revokes = append(revokes, r.waitCall("disconnect", disconnected).Sub(start))

		pause()
		connected, start, write := r.join(i)
		joins = append(joins, r.waitCall("connect", connected).Sub(start))
		writes = append(writes, write)
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(percentile(joins, 50), "join-p50-ms")
	b.ReportMetric(percentile(joins, 99), "join-p99-ms")
	b.ReportMetric(percentile(revokes, 50), "revoke-p50-ms")
	b.ReportMetric(percentile(revokes, 99), "revoke-p99-ms")
	b.ReportMetric(percentile(writes, 50), "write-p50-ms")
}
