package autoconnect

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// What one loop tick of the production RouteMesh wiring (MeshNodeSource over
// a LeaseTracker, change stamps, LiveOwnerSetVersion) costs the store, at N
// peers: store calls, owner-lease reads and descriptor rows listed in the
// tick after a change (none, a descriptor update, a join and a leave), and
// the rows listed by the tick after it (nothing changed then), counted by a
// wrapper around memstore. See docs/performance.md.
//
//	go test -run '^$' -bench BenchmarkTickCost -benchtime=200x ./autoconnect/

// countingStore is a memstore that counts what the auto-connect reads:
// store calls, owner leases read (one per ReadOwnerLease, one per owner of
// a ReadOwnerLiveness) and descriptor rows listed.
type countingStore struct {
	*memstore.Store
	calls, leaseReads, rowsListed atomic.Int64
}

// ReadOwnerLease implements OwnerLeaseReader.
func (c *countingStore) ReadOwnerLease(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	c.calls.Add(1)
	c.leaseReads.Add(1)
	return c.Store.ReadOwnerLease(ctx, ownerID)
}

// ReadOwnerLiveness implements location.OwnerLivenessReader.
func (c *countingStore) ReadOwnerLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	c.calls.Add(1)
	c.leaseReads.Add(int64(len(ownerIDs)))
	return c.Store.ReadOwnerLiveness(ctx, ownerIDs)
}

// leaseReadsOnly hides a store's OwnerLivenessReader from the tracker:
// it reads one owner lease at a time.
type leaseReadsOnly struct{ OwnerLeaseReader }

// ListMeshNodes implements MeshNodeLister.
func (c *countingStore) ListMeshNodes(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	c.calls.Add(1)
	page, err := c.Store.ListMeshNodes(ctx, meshName, p)
	c.rowsListed.Add(int64(len(page.Items)))
	return page, err
}

// ListMeshNodesShared implements SharedMeshNodeLister, counted as
// ListMeshNodes.
func (c *countingStore) ListMeshNodesShared(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	return c.ListMeshNodes(ctx, meshName, p)
}

// GetMeshNodeChangeStamp implements location.MeshNodeChangeStamper.
func (c *countingStore) GetMeshNodeChangeStamp(ctx context.Context, meshName string) (int64, bool, error) {
	c.calls.Add(1)
	return c.Store.GetMeshNodeChangeStamp(ctx, meshName)
}

// counts returns the calls, lease reads and rows listed so far.
func (c *countingStore) counts() []int64 {
	return []int64{c.calls.Load(), c.leaseReads.Load(), c.rowsListed.Load()}
}

// reset zeroes the counters.
func (c *countingStore) reset() {
	c.calls.Store(0)
	c.leaseReads.Store(0)
	c.rowsListed.Store(0)
}

// tickCostMesh is an observer's loop over a memstore mesh of live peers and
// dead ones whose descriptors are still listed (crashed nodes awaiting
// garbage collection).
type tickCostMesh struct {
	b      testing.TB
	ctx    context.Context
	store  *countingStore
	mono   *fakeClock
	loop   *Loop
	tokens map[string]location.OwnerToken
	next   int // the next peer number
	live   []string
}

// newTickCostMesh builds a mesh of n live peers and n/10 dead ones and an
// observer (node "a-obs", which dials every peer, with no descriptor or
// peer row of its own: the RouteMesh wiring) that has ticked until its
// tracker knows every owner. With batched, the tracker reads the owners of
// a tick in one ReadOwnerLiveness call, otherwise one ReadOwnerLease each.
func newTickCostMesh(b testing.TB, n int, batched bool) *tickCostMesh {
	wall := clock.NewManual(fixture.T0())
	m := &tickCostMesh{
		b: b, ctx: context.Background(), mono: newFakeClock(), tokens: map[string]location.OwnerToken{},
		store: &countingStore{Store: memstore.New(memstore.Options{Clock: wall.Now})},
	}
	for range n {
		m.join()
	}
	for range n / 10 {
		owner := m.join()
		m.live = m.live[:len(m.live)-1]
		m.release(owner)
	}
	var leases OwnerLeaseReader = m.store
	if !batched {
		leases = leaseReadsOnly{m.store}
	}
	tracker, err := NewLeaseTracker(LeaseTrackerOptions{Store: leases, Clock: m.mono})
	m.check(err)
	source, err := NewMeshNodeSource(m.store, tracker, Options{})
	m.check(err)
	rec, err := NewReconciler(ReconcilerOptions{
		Local:  local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "a-obs", "tcp://obs:1"),
		Source: source, Executor: wrapPlain(newFakeExec(&recorder{})), Clock: m.mono, Logger: discardLogger(),
	})
	m.check(err)
	m.loop, err = NewLoop(LoopOptions{
		Reconciler: rec, MeshName: testMesh, Stamps: m.store, LiveOwners: tracker, DisableWatch: true,
		Clock: m.mono, Logger: discardLogger(),
	})
	m.check(err)
	for range 3 {
		m.tick()
	}
	return m
}

// check fails the benchmark on err.
func (m *tickCostMesh) check(err error) {
	if err != nil {
		m.b.Fatal(err)
	}
}

// join claims a lease for a new peer and publishes its descriptor; it
// returns the owner.
func (m *tickCostMesh) join() string {
	owner := fmt.Sprintf("o%06d", m.next)
	m.next++
	claim, err := m.store.ClaimOwnerLease(m.ctx, owner, 15*time.Second)
	m.check(err)
	m.tokens[owner] = claim.Token
	m.publish(owner, 1)
	m.live = append(m.live, owner)
	return owner
}

// publish writes owner's descriptor with the given revision.
func (m *tickCostMesh) publish(owner string, revision int64) {
	intent := location.IntentNewClaim
	if revision > 1 {
		intent = location.IntentRenew
	}
	res, err := m.store.UpdateMeshNode(m.ctx, location.MeshNodeDescriptor{
		MeshName: testMesh, RID: location.RoutingID("node-" + owner), LifecycleGeneration: 1, DescriptorRevision: revision,
		Endpoint: "tcp://" + owner + ":1", ObjectRole: location.RoleServer, PlacementWeight: 100,
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10}, State: location.StateServing,
		SecurityIdentity: "plaintext", OwnerID: owner, LeaseGeneration: m.tokens[owner].LeaseGeneration,
	}, intent)
	m.check(err)
	if res.Status != location.Stored {
		m.b.Fatalf("publish %s: %s", owner, res.Status)
	}
}

// release ends owner's lease; its descriptor stays listed.
func (m *tickCostMesh) release(owner string) {
	_, err := m.store.ReleaseOwnerLease(m.ctx, m.tokens[owner])
	m.check(err)
}

// leave removes the oldest live peer's descriptor and ends its lease.
func (m *tickCostMesh) leave() {
	owner := m.live[0]
	m.live = m.live[1:]
	_, err := m.store.RemoveAllByOwner(m.ctx, m.tokens[owner])
	m.check(err)
	m.release(owner)
}

// tick advances the monotonic clock by one polling interval and runs one
// loop tick.
func (m *tickCostMesh) tick() {
	m.mono.Advance(DefaultPollingInterval)
	m.check(m.loop.Tick(m.ctx))
}

func BenchmarkTickCost(b *testing.B) {
	scenarios := []struct {
		name string
		// change runs before each measured tick (not counted).
		change func(m *tickCostMesh, i int)
	}{
		{"steady", func(*tickCostMesh, int) {}},
		{"descriptor_update", func(m *tickCostMesh, i int) { m.publish(m.live[i%len(m.live)], int64(2+i)) }},
		{"join_and_leave", func(m *tickCostMesh, _ int) { m.join(); m.leave() }},
	}
	for _, reads := range []struct {
		name    string
		batched bool
	}{{"per_owner", false}, {"batched", true}} {
		for _, n := range []int{10, 100, 1000} {
			for _, s := range scenarios {
				b.Run(fmt.Sprintf("%s/%s/N=%d", reads.name, s.name, n), func(b *testing.B) {
					benchmarkTickCost(b, newTickCostMesh(b, n, reads.batched), s.change)
				})
			}
		}
	}
}

// benchmarkTickCost measures the ticks of m after change.
func benchmarkTickCost(b *testing.B, m *tickCostMesh, change func(m *tickCostMesh, i int)) {
	var calls, leases, rows, nextRows int64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		change(m, i)
		m.store.reset()
		b.StartTimer()
		m.tick()
		b.StopTimer()
		c := m.store.counts()
		calls, leases, rows = calls+c[0], leases+c[1], rows+c[2]
		// The tick after: nothing changed, so it should not list again
		// (not timed).
		m.store.reset()
		m.tick()
		nextRows += m.store.rowsListed.Load()
		b.StartTimer()
	}
	b.ReportMetric(float64(calls)/float64(b.N), "calls/tick")
	b.ReportMetric(float64(leases)/float64(b.N), "lease_reads/tick")
	b.ReportMetric(float64(rows)/float64(b.N), "rows_listed/tick")
	b.ReportMetric(float64(nextRows)/float64(b.N), "rows_listed/next_tick")
}
