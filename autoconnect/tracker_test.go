package autoconnect

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/recorded"
	"github.com/zlink-systems/zlink-etcd/location"
)

// leaseAnswer is one programmed ReadOwnerLease answer.
type leaseAnswer struct {
	found bool
	ttl   time.Duration // leaseExpiresAt - storeNow
	gen   int64
	err   error
}

// found and missing build lease answers.
func found(ttlMs int64) leaseAnswer {
	return leaseAnswer{found: true, ttl: time.Duration(ttlMs) * time.Millisecond, gen: 1}
}
func missing() leaseAnswer { return leaseAnswer{} }

// fakeLeaseStore answers ReadOwnerLease per owner from a queue whose last
// answer sticks, and counts reads. With gate set, reads wait for it.
type fakeLeaseStore struct {
	mu      sync.Mutex
	answers map[string][]leaseAnswer
	reads   map[string]int
	gate    chan struct{}
	entered chan string
}

// newFakeLeaseStore returns a store where every owner is missing.
func newFakeLeaseStore() *fakeLeaseStore {
	return &fakeLeaseStore{answers: map[string][]leaseAnswer{}, reads: map[string]int{}}
}

// set programs the next answers for owner.
func (s *fakeLeaseStore) set(owner string, a ...leaseAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[owner] = a
}

// count returns the reads of owner.
func (s *fakeLeaseStore) count(owner string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[owner]
}

// ReadOwnerLease implements OwnerLeaseReader.
func (s *fakeLeaseStore) ReadOwnerLease(ctx context.Context, owner string) (location.OwnerLeaseReadResult, error) {
	s.mu.Lock()
	s.reads[owner]++
	gate, entered := s.gate, s.entered
	a := missing()
	if q := s.answers[owner]; len(q) > 0 {
		a = q[0]
		if len(q) > 1 {
			s.answers[owner] = q[1:]
		}
	}
	s.mu.Unlock()
	if entered != nil {
		entered <- owner
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return location.OwnerLeaseReadResult{}, ctx.Err()
		}
	}
	if a.err != nil {
		return location.OwnerLeaseReadResult{}, a.err
	}
	if !a.found {
		return location.OwnerLeaseReadResult{Kind: location.KindMissing}, nil
	}
	storeNow := time.UnixMilli(1_700_000_000_000).UTC()
	return location.OwnerLeaseReadResult{
		Kind:           location.KindFound,
		Token:          location.OwnerToken{OwnerID: owner, LeaseGeneration: a.gen},
		StoreNow:       storeNow,
		LeaseExpiresAt: storeNow.Add(a.ttl),
	}, nil
}

// newTracker returns a tracker over store with the given polling interval.
func newTracker(t *testing.T, store OwnerLeaseReader, clock Clock, pollingMs int64) *LeaseTracker {
	t.Helper()
	lt, err := NewLeaseTracker(LeaseTrackerOptions{Store: store, Options: Options{PollingInterval: ms(pollingMs)}, Clock: clock})
	require.NoError(t, err)
	return lt
}

// newFakeTracker returns a tracker with the given polling interval over a
// fake lease store and a fake clock, which the test programs.
func newFakeTracker(t *testing.T, pollingMs int64) (*fakeLeaseStore, *fakeClock, *LeaseTracker) {
	t.Helper()
	store, clock := newFakeLeaseStore(), newFakeClock()
	return store, clock, newTracker(t, store, clock, pollingMs)
}

// requireLive requires that lt answers owner's liveness without error, and
// that the answer is want.
func requireLive(t *testing.T, ctx context.Context, lt *LeaseTracker, owner string, want bool, msgAndArgs ...any) {
	t.Helper()
	live, err := lt.IsOwnerLive(ctx, owner)
	require.NoError(t, err)
	require.Equal(t, want, live, msgAndArgs...)
}

// fakeMeshNodes is a MeshNodeLister that pages by decimal offsets.
type fakeMeshNodes struct {
	mu     sync.Mutex
	nodes  []location.MeshNodeDescriptor
	calls  []location.PageRequest
	expire int // the next this many non-first pages fail with ErrScanExpired
}

// ListMeshNodes implements MeshNodeLister.
func (f *fakeMeshNodes) ListMeshNodes(_ context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, p)
	var items []location.MeshNodeDescriptor
	for _, n := range f.nodes {
		if n.MeshName == meshName {
			items = append(items, n)
		}
	}
	start := 0
	if p.ContinuationToken != "" {
		if f.expire > 0 {
			f.expire--
			return location.Page[location.MeshNodeDescriptor]{}, fmt.Errorf("fake: %w", location.ErrScanExpired)
		}
		start, _ = strconv.Atoi(p.ContinuationToken)
	}
	end := len(items)
	if p.PageSize > 0 && start+p.PageSize < end {
		end = start + p.PageSize
	}
	page := location.Page[location.MeshNodeDescriptor]{Items: append([]location.MeshNodeDescriptor(nil), items[start:end]...)}
	if end < len(items) {
		page.ContinuationToken = strconv.Itoa(end)
	}
	return page, nil
}

// descriptor builds a Serving mesh-node descriptor of testMesh.
func descriptor(owner, ridText, endpoint string) location.MeshNodeDescriptor {
	return location.MeshNodeDescriptor{
		MeshName: testMesh, RID: location.RoutingID(ridText), LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: endpoint, ObjectRole: location.RoleNone, State: location.StateServing, OwnerID: owner, LeaseGeneration: 1,
	}
}

// routeMeshFilter is the reconciler's filter for testMesh.
func routeMeshFilter() location.PeerFilter {
	t, m := location.AutoConnectRouteMesh, testMesh
	return location.PeerFilter{AutoConnectType: &t, MeshName: &m}
}

// fakePeerLister is a PeerLister answering fixed rows.
type fakePeerLister struct {
	rows []location.PeerLocation
	err  error
}

// ListPeers implements PeerLister.
func (f fakePeerLister) ListPeers(context.Context, location.PeerFilter) ([]location.PeerLocation, error) {
	return f.rows, f.err
}

func TestTracker(t *testing.T) {
	ctx := context.Background()

	t.Run("AC-T1_liveness_formula", func(t *testing.T) {
		store, clock, lt := newFakeTracker(t, 10_000)
		store.set("x", found(1000), missing())
		for _, c := range []struct {
			at    int64
			live  bool
			reads int
		}{{0, true, 1}, {999, true, 1}, {1000, false, 2}} {
			clock.SetMs(c.at)
			requireLive(t, ctx, lt, "x", c.live, "t=%d", c.at)
			require.Equal(t, c.reads, store.count("x"), "t=%d", c.at)
		}
	})

	t.Run("AC-T2_positive_cache", func(t *testing.T) {
		store, clock, lt := newFakeTracker(t, 1000)
		store.set("x", found(15_000))
		for _, c := range []struct {
			at    int64
			reads int
		}{{0, 1}, {500, 1}, {1000, 2}, {1500, 2}} {
			clock.SetMs(c.at)
			requireLive(t, ctx, lt, "x", true)
			require.Equal(t, c.reads, store.count("x"), "t=%d", c.at)
		}
		remaining, err := lt.RemainingLease(ctx, "x")
		require.NoError(t, err)
		require.Equal(t, 14_500*time.Millisecond, remaining)
		remaining, err = lt.RemainingOwnerTokenLease(ctx, location.OwnerToken{OwnerID: "x", LeaseGeneration: 1})
		require.NoError(t, err)
		require.Equal(t, 14_500*time.Millisecond, remaining)
		remaining, err = lt.RemainingOwnerTokenLease(ctx, location.OwnerToken{OwnerID: "x", LeaseGeneration: 2})
		require.NoError(t, err)
		require.Zero(t, remaining, "another incarnation")
	})

	t.Run("AC-T3_no_negative_cache", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		for i := 1; i <= 3; i++ {
			requireLive(t, ctx, lt, "x", false)
			require.Equal(t, i, store.count("x"))
		}
		store.set("x", found(15_000))
		requireLive(t, ctx, lt, "x", true, "claimed later: live on the next check")
		remaining, err := lt.RemainingLease(ctx, "nobody")
		require.NoError(t, err)
		require.Zero(t, remaining)
	})

	t.Run("AC-T4_single_flight", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		store.set("x", found(15_000))
		store.gate, store.entered = make(chan struct{}), make(chan string, 2)
		joined := make(chan string, 1)
		lt.joinedFlight = func(o string) { joined <- o }

		type answer struct {
			live bool
			err  error
		}
		results := make(chan answer, 2)
		check := func() {
			live, err := lt.IsOwnerLive(ctx, "x")
			results <- answer{live, err}
		}
		go check()
		require.Equal(t, "x", <-store.entered)
		go check()
		require.Equal(t, "x", <-joined)
		close(store.gate)
		require.Equal(t, answer{live: true}, <-results)
		require.Equal(t, answer{live: true}, <-results)
		require.Equal(t, 1, store.count("x"))
	})

	t.Run("AC-T5_read_error", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		store.set("x", leaseAnswer{err: errStoreDown}, found(15_000))
		_, err := lt.IsOwnerLive(ctx, "x")
		require.ErrorIs(t, err, errStoreDown)
		requireLive(t, ctx, lt, "x", true, "the error was not cached")
		require.Equal(t, 2, store.count("x"))

		store.set("y", leaseAnswer{err: errStoreDown})
		src, err := NewPeerRowSource(fakePeerLister{rows: []location.PeerLocation{router("y", "node-y", "tcp://y")}}, lt)
		require.NoError(t, err)
		_, err = src.ListLivePeers(ctx, routeMeshFilter())
		require.ErrorIs(t, err, errStoreDown)

		h := newHarness(t, harnessConfig{})
		h.r.source = src
		h.tick()
		require.True(t, h.r.StoreFailed(), "a tracker error is a store failure (AC-F1 path)")
	})

	t.Run("AC-T6_unknown_enums_filtered", func(t *testing.T) {
		store := newFakeLeaseStore()
		store.set("o", found(15_000))
		lt := newTracker(t, store, newFakeClock(), 1000)
		ok := router("o", "node-ok", "tcp://ok")
		badType0 := router("o", "node-t0", "tcp://t0")
		badType0.AutoConnectType = location.AutoConnectInvalid
		badType9 := router("o", "node-t9", "tcp://t9")
		badType9.AutoConnectType = 9
		badRole0 := router("o", "node-r0", "tcp://r0")
		badRole0.Role = location.PeerRoleInvalid
		badRole1 := router("o", "node-r1", "tcp://r1")
		badRole1.Role = 1
		badRole7 := router("o", "node-r7", "tcp://r7")
		badRole7.Role = 7
		src, err := NewPeerRowSource(fakePeerLister{rows: []location.PeerLocation{badType0, ok, badType9, badRole0, badRole1, badRole7}}, lt)
		require.NoError(t, err)
		rows, err := src.ListLivePeers(ctx, routeMeshFilter())
		require.NoError(t, err)
		require.Equal(t, []location.PeerLocation{ok}, rows)
	})

	t.Run("AC-T7_generation_not_checked", func(t *testing.T) {
		store := newFakeLeaseStore()
		store.set("x", leaseAnswer{found: true, ttl: 15 * time.Second, gen: 2})
		lt := newTracker(t, store, newFakeClock(), 1000)
		r := router("x", "node-x", "TCP://X:01/")
		src, err := NewPeerRowSource(fakePeerLister{rows: []location.PeerLocation{r}}, lt)
		require.NoError(t, err)
		rows, err := src.ListLivePeers(ctx, routeMeshFilter())
		require.NoError(t, err)
		require.Len(t, rows, 1, "live by owner id, whatever the generation")
		require.Equal(t, "tcp://x:1", rows[0].Endpoint, "endpoints are normalised on read")
	})

	t.Run("AC-T8_live_owner_set_version", func(t *testing.T) {
		store, clock, lt := newFakeTracker(t, 1000)
		store.set("x", found(15_000))
		store.set("y", found(2_000))
		v, err := lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), v, "first call")
		for _, o := range []string{"x", "y"} {
			_, err := lt.IsOwnerLive(ctx, o)
			require.NoError(t, err)
		}
		v, err = lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), v, "x and y appeared")
		v, err = lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), v, "unchanged set")
		clock.SetMs(2000) // y's lease runs out; the re-read says missing
		store.set("y", missing())
		v, err = lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), v, "an owner expired")
	})

	t.Run("AC-T9_descriptor_mapping", func(t *testing.T) {
		store := newFakeLeaseStore()
		store.set("ob", found(15_000))
		lt := newTracker(t, store, newFakeClock(), 1000)
		base := descriptor("ob", "node-b", "  TCP://B:0080/ ")
		base.LifecycleGeneration, base.DescriptorRevision = 4, 9
		base.ObjectRole, base.SecurityIdentity = location.RoleClient, "plaintext"
		base.UpdatedAt = time.UnixMilli(1_700_000_000_123).UTC()

		states := []struct {
			state    location.RuntimeState
			draining bool
		}{
			{location.StateServing, false}, {location.StateDraining, true}, {location.StatePreparing, true},
			{location.StateRelocating, true}, {location.StateRelocated, true}, {location.StateStopped, true}, {location.StateError, true},
		}
		for _, s := range states {
			for _, weights := range []map[string]int64{nil, {"chat": 3}} {
				d := base
				d.State, d.ChannelWeights = s.state, weights
				nodes := &fakeMeshNodes{nodes: []location.MeshNodeDescriptor{d}}
				src, err := NewMeshNodeSource(nodes, lt, Options{})
				require.NoError(t, err)
				rows, err := src.ListLivePeers(ctx, routeMeshFilter())
				require.NoError(t, err)
				require.Equal(t, []location.PeerLocation{{
					AutoConnectType: location.AutoConnectRouteMesh,
					MeshName:        testMesh,
					NodeRID:         rid("node-b"),
					Role:            location.PeerRoleRouter,
					Endpoint:        "tcp://b:80",
					Weight:          100,
					Draining:        s.draining,
					Value:           9,
					Metadata: map[string]string{
						MetadataObjectRole:                "client",
						MetadataHasRouteMeshServerChannel: strconv.FormatBool(weights != nil),
						MetadataDescriptorRevision:        "9",
						MetadataSecurityIdentity:          "plaintext",
					},
					OwnerID:    "ob",
					Generation: 4,
					UpdatedAt:  base.UpdatedAt,
				}}, rows, "state %d, weights %v", s.state, weights)
			}
		}

		nodes := &fakeMeshNodes{nodes: []location.MeshNodeDescriptor{base}}
		src, err := NewMeshNodeSource(nodes, lt, Options{})
		require.NoError(t, err)
		fanout, router3, dealer, otherRID := location.AutoConnectFanout, location.PeerRoleRouter, location.PeerRoleDealer, location.RoutingID("node-x")
		m := testMesh
		for name, f := range map[string]location.PeerFilter{
			"no_mesh":        {},
			"fanout":         {AutoConnectType: &fanout, MeshName: &m},
			"dealer":         {MeshName: &m, Role: &dealer},
			"other_rid":      {MeshName: &m, NodeRID: &otherRID},
			"other_endpoint": {MeshName: &m, Endpoint: &base.Endpoint},
		} {
			rows, err := src.ListLivePeers(ctx, f)
			require.NoError(t, err)
			require.Empty(t, rows, name)
		}
		bRID, ep := location.RoutingID("node-b"), "tcp://b:80"
		rows, err := src.ListLivePeers(ctx, location.PeerFilter{MeshName: &m, Role: &router3, NodeRID: &bRID, Endpoint: &ep})
		require.NoError(t, err)
		require.Len(t, rows, 1)

		t.Run("dead_owner_dropped", func(t *testing.T) {
			nodes := &fakeMeshNodes{nodes: []location.MeshNodeDescriptor{base, descriptor("dead", "node-d", "tcp://d")}}
			src, err := NewMeshNodeSource(nodes, lt, Options{})
			require.NoError(t, err)
			rows, err := src.ListLivePeers(ctx, routeMeshFilter())
			require.NoError(t, err)
			require.Equal(t, []string{"ob"}, ownersOfRows(rows))
		})
	})

	t.Run("AC-T10_all_descriptor_pages", func(t *testing.T) {
		store := newFakeLeaseStore()
		nodes := &fakeMeshNodes{}
		for i := range 150 {
			owner := fmt.Sprintf("o%03d", i)
			store.set(owner, found(15_000))
			nodes.nodes = append(nodes.nodes, descriptor(owner, fmt.Sprintf("node-%03d", i), fmt.Sprintf("tcp://n%03d", i)))
		}
		lt := newTracker(t, store, newFakeClock(), 1000)
		src, err := NewMeshNodeSource(nodes, lt, Options{ListPageSize: 100})
		require.NoError(t, err)
		rows, err := src.ListLivePeers(ctx, routeMeshFilter())
		require.NoError(t, err)
		require.Len(t, rows, 150)
		require.Equal(t, []location.PageRequest{{PageSize: 100}, {PageSize: 100, ContinuationToken: "100"}}, nodes.calls)
		require.Len(t, Desired(local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-", "tcp://local"), rows, false), 150)

		t.Run("expired_token_restarts", func(t *testing.T) {
			nodes.calls, nodes.expire = nil, 1
			rows, err := src.ListLivePeers(ctx, routeMeshFilter())
			require.NoError(t, err)
			require.Len(t, rows, 150)
			require.Len(t, nodes.calls, 4)
		})
		t.Run("default_page_size", func(t *testing.T) {
			nodes.calls = nil
			src, err := NewMeshNodeSource(nodes, lt, Options{})
			require.NoError(t, err)
			_, err = src.ListLivePeers(ctx, routeMeshFilter())
			require.NoError(t, err)
			require.Equal(t, []location.PageRequest{{PageSize: DefaultListPageSize}}, nodes.calls)
		})
	})
}

// ownersOfRows lists the rows' owners.
func ownersOfRows(rows []location.PeerLocation) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r.OwnerID)
	}
	return out
}

// Internals of the tracker's per-tick reads: the tick's answers, and the
// bound on concurrent reads.

func TestTickReads(t *testing.T) {
	ctx := context.Background()

	t.Run("within_a_tick", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 0)
		store.set("x", found(15_000))
		tctx := withTickReads(ctx)
		for range 3 {
			requireLive(t, tctx, lt, "x", true)
			requireLive(t, tctx, lt, "dead", false)
		}
		require.Equal(t, []int{1, 1}, readCounts(store, "x", "dead"), "one read per owner in the tick, missing ones too")
		lt.InvalidateLiveness()
		_, err := lt.IsOwnerLive(tctx, "dead")
		require.NoError(t, err)
		require.Equal(t, 2, store.count("dead"), "a change notification makes the tick's answers stale")
		_, err = lt.IsOwnerLive(ctx, "dead")
		require.NoError(t, err)
		require.Equal(t, 3, store.count("dead"), "outside a tick, missing owners are read on every check")
	})

}

func TestConcurrentLeaseReads(t *testing.T) {
	ctx := context.Background()
	store, _, lt := newFakeTracker(t, 1000)
	owners := make([]string, 20)
	for i := range owners {
		owners[i] = fmt.Sprintf("o%02d", i)
		store.set(owners[i], found(15_000))
	}
	store.gate, store.entered = make(chan struct{}), make(chan string, len(owners))
	lt.RetainOwners("test", owners)

	done := make(chan error, 1)
	go func() {
		_, err := lt.LiveOwnerSetVersion(ctx)
		done <- err
	}()
	for range maxConcurrentLeaseReads {
		<-store.entered
	}
	select {
	case o := <-store.entered:
		t.Fatalf("read of %s started beyond the bound", o)
	default:
	}
	close(store.gate)
	require.NoError(t, <-done)
	require.Equal(t, slices.Repeat([]int{1}, len(owners)), readCounts(store, owners...))

	t.Run("first_error_returned", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		store.set("b", leaseAnswer{err: errStoreDown})
		lt.RetainOwners("test", []string{"a", "b", "c"})
		_, err := lt.LiveOwnerSetVersion(ctx)
		require.ErrorIs(t, err, errStoreDown)
	})
}

// livenessStore is a fakeLeaseStore that also reads many owners at once
// (location.OwnerLivenessReader), from the same programmed answers, with
// their expiries or (withoutExpiry, as etcdstore) without; it records each
// batch.
type livenessStore struct {
	*fakeLeaseStore
	withoutExpiry bool

	batches recorded.Log[[]string]

	mu   sync.Mutex
	fail error
}

// ReadOwnerLiveness implements location.OwnerLivenessReader.
func (s *livenessStore) ReadOwnerLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	s.batches.Add(slices.Clone(ownerIDs))
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	out := make([]location.OwnerLiveness, len(ownerIDs))
	for i, o := range ownerIDs {
		r, err := s.ReadOwnerLease(ctx, o)
		if err != nil {
			return nil, err
		}
		if r.Kind == location.KindFound {
			out[i] = location.OwnerLiveness{Live: true, Token: r.Token}
			if !s.withoutExpiry {
				out[i].LeaseExpiresAt, out[i].StoreNow = r.LeaseExpiresAt, r.StoreNow
			}
		}
	}
	return out, nil
}

// With a store that reads many owners at once, a tick's owners are read in
// one call: the version check reads every followed owner that needs a
// read, a listing the ones the version check has not read.
func TestTrackerReadsOwnersAtOnce(t *testing.T) {
	ctx := context.Background()
	store := &livenessStore{fakeLeaseStore: newFakeLeaseStore()}
	for _, o := range []string{"a", "b", "c"} {
		store.set(o, found(15_000))
	}
	clock := newFakeClock()
	lt := newTracker(t, store, clock, 1000)
	lt.RetainOwners("scope", []string{"a", "b", "c", "d"})

	_, err := lt.LiveOwnerSetVersion(ctx)
	require.NoError(t, err)
	batches := store.batches.Take()
	require.Len(t, batches, 1)
	require.ElementsMatch(t, []string{"a", "b", "c", "d"}, batches[0])

	// Within the polling interval, live answers are reused and missing
	// owners read again; a change notification makes every answer stale.
	_, err = lt.LiveOwnerSetVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"d"}}, store.batches.Take())
	lt.InvalidateLiveness()
	tick := withTickReads(ctx)
	_, err = lt.LiveOwnerSetVersion(tick)
	require.NoError(t, err)
	require.Len(t, store.batches.Take()[0], 4)
	live, err := lt.listOwners(tick, "scope", []string{"a", "d", "e"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"a": true, "d": false, "e": false}, live)
	require.Equal(t, [][]string{{"e"}}, store.batches.Take(), "the tick's answers are reused; e is new")
	require.Equal(t, 2, store.count("a"), "a was read twice, in batches")
}

// An answer without an expiry (etcd: the lease is live now) counts as live
// for one polling interval from its read; one with an expiry ages as a
// ReadOwnerLease answer does.
func TestTrackerTrustsLivenessWithoutExpiryForOneInterval(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		withoutExpiry bool
		pollingMs     int64
		ttlMs         int64
		liveAt        []int64 // ms after the read, each checked with a fresh tick
		deadAt        []int64
	}{
		{"without_expiry", true, 1000, 500, []int64{0, 999}, []int64{1000}},
		{"with_expiry", false, 1000, 500, []int64{0, 499}, []int64{500}},
		{"without_expiry_no_polling", true, 0, 500, []int64{0, 999}, []int64{1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &livenessStore{fakeLeaseStore: newFakeLeaseStore(), withoutExpiry: tc.withoutExpiry}
			store.set("a", found(tc.ttlMs))
			clock := newFakeClock()
			lt := newTracker(t, store, clock, tc.pollingMs)
			snaps, err := lt.readAll(ctx, []string{"a"})
			require.NoError(t, err)
			snap := snaps[0]
			for _, at := range tc.liveAt {
				clock.Set(time.Duration(at) * time.Millisecond)
				require.Positive(t, lt.remaining(snap), "live %d ms after the read", at)
			}
			for _, at := range tc.deadAt {
				clock.Set(time.Duration(at) * time.Millisecond)
				require.LessOrEqual(t, lt.remaining(snap), time.Duration(0), "not trusted %d ms after the read", at)
			}
		})
	}
}

// A single check of an owner that a batch is reading joins that read; a
// failed batch fails every owner it read, and caches nothing.
func TestTrackerBatchFlights(t *testing.T) {
	ctx := context.Background()
	store := &livenessStore{fakeLeaseStore: newFakeLeaseStore()}
	store.set("a", found(15_000))
	store.gate, store.entered = make(chan struct{}), make(chan string, 4)
	lt := newTracker(t, store, newFakeClock(), 1000)
	joined := make(chan string, 1)
	lt.joinedFlight = func(o string) { joined <- o }
	done := make(chan error, 1)
	go func() {
		_, err := lt.readAll(ctx, []string{"a"})
		done <- err
	}()
	require.Equal(t, "a", <-store.entered)
	single := make(chan bool, 1)
	go func() {
		live, err := lt.IsOwnerLive(ctx, "a")
		require.NoError(t, err)
		single <- live
	}()
	require.Equal(t, "a", <-joined)
	close(store.gate)
	require.NoError(t, <-done)
	require.True(t, <-single)
	require.Equal(t, 1, store.count("a"), "one read for both")

	store.gate, store.entered = nil, nil
	lt.InvalidateLiveness()
	store.mu.Lock()
	store.fail = errors.New("etcd is away")
	store.mu.Unlock()
	_, err := lt.readAll(ctx, []string{"a", "b"})
	require.ErrorContains(t, err, "etcd is away")
	require.Empty(t, cachedOwnersAfter(lt, 1), "nothing cached after a failed batch")
}

// stampedStore is a livenessStore that stamps its answers with a stamp
// the test sets (location.OwnerLivenessStamper); stampOK false: it cannot
// stamp them.
type stampedStore struct {
	*livenessStore
	stamp   int64
	stampOK bool
	err     error
	calls   int
}

// ReadOwnerLivenessSince implements location.OwnerLivenessStamper.
func (s *stampedStore) ReadOwnerLivenessSince(ctx context.Context, ownerIDs []string, since int64) (location.OwnerLivenessSince, error) {
	s.calls++
	if s.err != nil {
		return location.OwnerLivenessSince{}, s.err
	}
	if s.stampOK && since == s.stamp {
		return location.OwnerLivenessSince{Stamp: s.stamp}, nil
	}
	live, err := s.ReadOwnerLiveness(ctx, ownerIDs)
	res := location.OwnerLivenessSince{Changed: true, Live: live}
	if s.stampOK {
		res.Stamp = s.stamp
	}
	return res, err
}

// With a store that stamps the owners' liveness, LiveOwnerSetVersion reads
// the followed owners only when the stamp moved or the followed owners
// changed, however old its answers, and every one of them then; an
// unstamped answer is read again by the next call.
func TestTrackerOwnerLivenessStamp(t *testing.T) {
	ctx := context.Background()
	store := &stampedStore{livenessStore: &livenessStore{fakeLeaseStore: newFakeLeaseStore(), withoutExpiry: true}, stamp: 7, stampOK: true}
	store.set("a", found(15_000))
	clock := newFakeClock()
	lt := newTracker(t, store, clock, 1000)
	lt.RetainOwners("scope", []string{"a", "b"})

	steps := []struct {
		name    string
		change  func()
		batches [][]string // owner batches read, sorted
		moves   bool       // the version moves
	}{
		{"first call reads every followed owner", func() {}, [][]string{{"a", "b"}}, true},
		{"same stamp reads nothing", func() {}, nil, false},
		{"nor once the answers are old", func() { clock.Advance(5 * time.Second) }, nil, false},
		{"nor after a change notification", lt.InvalidateLiveness, nil, false},
		{"a moved stamp reads every owner", func() {
			store.set("b", found(15_000))
			store.stamp = 9
		}, [][]string{{"a", "b"}}, true},
		{"a moved stamp without a liveness change", func() { store.stamp = 10 }, [][]string{{"a", "b"}}, false},
		{"a newly followed owner", func() { lt.RetainOwners("scope", []string{"a", "b", "c"}) }, [][]string{{"a", "b", "c"}}, true},
		{"a forgotten owner", func() { lt.RetainOwners("scope", []string{"a", "b"}) }, [][]string{{"a", "b"}}, true},
		{"settled again", func() {}, nil, false},
		{"an unstamped answer", func() { store.stampOK = false }, [][]string{{"a", "b"}}, false},
		{"is read again", func() {}, [][]string{{"a", "b"}}, false},
		{"stamped again: read once", func() { store.stampOK = true }, [][]string{{"a", "b"}}, false},
		{"and then nothing", func() {}, nil, false},
	}
	var version int64
	for _, st := range steps {
		st.change()
		v, err := lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err, st.name)
		var got [][]string
		for _, b := range store.batches.Take() {
			got = append(got, slices.Sorted(slices.Values(b)))
		}
		require.Equal(t, st.batches, got, st.name)
		require.Equal(t, st.moves, v != version, "%s: version %d after %d", st.name, v, version)
		version = v
	}
	require.Equal(t, len(steps), store.calls, "one read per call")

	// The answers of a stamped read serve the tick's listing.
	store.stamp = 11
	tick := withTickReads(ctx)
	_, err := lt.LiveOwnerSetVersion(tick)
	require.NoError(t, err)
	store.batches.Take()
	live, err := lt.listOwners(tick, "scope", []string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"a": true, "b": true}, live)
	require.Empty(t, store.batches.Take(), "the listing reads nothing")

	// A tick whose stamp did not move vouches for the followed owners,
	// however old their answers: its listing reads only an owner it meets
	// first.
	clock.Advance(5 * time.Second)
	tick = withTickReads(ctx)
	_, err = lt.LiveOwnerSetVersion(tick)
	require.NoError(t, err)
	require.Empty(t, store.batches.Take())
	live, err = lt.listOwners(tick, "scope", []string{"a", "b", "d"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"a": true, "b": true, "d": false}, live)
	require.Equal(t, [][]string{{"d"}}, store.batches.Take())

	store.err = errors.New("etcd is away")
	_, err = lt.LiveOwnerSetVersion(ctx)
	require.ErrorIs(t, err, store.err)
}

// cachedOwnersAfter returns the owners whose cached answer is of epoch at
// least epoch.
func cachedOwnersAfter(lt *LeaseTracker, epoch int64) []string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	var out []string
	for o, s := range lt.snapshots {
		if s.epoch >= epoch {
			out = append(out, o)
		}
	}
	return out
}

// The lease tracker forgets owners no listing references any more, and a
// tick reads each owner lease at most once (issue 13).

// mutablePeerLister is a PeerLister whose rows the test replaces.
type mutablePeerLister struct {
	mu   sync.Mutex
	rows []location.PeerLocation
}

// set replaces the listed rows.
func (l *mutablePeerLister) set(rows ...location.PeerLocation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = rows
}

// ListPeers implements PeerLister.
func (l *mutablePeerLister) ListPeers(context.Context, location.PeerFilter) ([]location.PeerLocation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.rows), nil
}

// cachedOwners returns the owners the tracker holds an answer for, sorted.
func cachedOwners(lt *LeaseTracker) []string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return append([]string{}, slices.Sorted(maps.Keys(lt.snapshots))...)
}

// readCounts returns the reads of each owner.
func readCounts(s *fakeLeaseStore, owners ...string) []int {
	out := make([]int, len(owners))
	for i, o := range owners {
		out[i] = s.count(o)
	}
	return out
}

func TestTrackerForgetsOwners(t *testing.T) {
	ctx := context.Background()
	list := func(t *testing.T, src PeerSource) []string {
		t.Helper()
		rows, err := src.ListLivePeers(ctx, routeMeshFilter())
		require.NoError(t, err)
		return ownersOfRows(rows)
	}
	version := func(t *testing.T, lt *LeaseTracker) int64 {
		t.Helper()
		v, err := lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		return v
	}

	t.Run("unlisted_owner_forgotten", func(t *testing.T) {
		store, clock, lt := newFakeTracker(t, 1000)
		for _, o := range []string{"a", "b", "c"} {
			store.set(o, found(15_000))
		}
		lister := &mutablePeerLister{}
		src, err := NewPeerRowSource(lister, lt)
		require.NoError(t, err)
		lister.set(router("a", "node-a", "tcp://a"), router("b", "node-b", "tcp://b"), router("c", "node-c", "tcp://c"))
		require.Equal(t, []string{"a", "b", "c"}, list(t, src))
		require.Equal(t, int64(1), version(t, lt))

		lister.set(router("a", "node-a", "tcp://a"), router("b", "node-b", "tcp://b")) // c left
		require.Equal(t, []string{"a", "b"}, list(t, src))
		require.Equal(t, []string{"a", "b"}, cachedOwners(lt), "c is forgotten")
		clock.AdvanceMs(1000)
		require.Equal(t, int64(2), version(t, lt), "c is no longer followed")
		require.Equal(t, []int{2, 2, 1}, readCounts(store, "a", "b", "c"), "c is not read again")
		clock.AdvanceMs(1000)
		require.Equal(t, int64(2), version(t, lt))
		require.Equal(t, []int{3, 3, 1}, readCounts(store, "a", "b", "c"))
	})

	t.Run("bounded_by_the_listing", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		lister := &mutablePeerLister{}
		src, err := NewPeerRowSource(lister, lt)
		require.NoError(t, err)
		for i := range 200 { // a rolling restart: every owner replaced, ten at a time
			var rows []location.PeerLocation
			for j := i; j < i+10; j++ {
				o := fmt.Sprintf("o%03d", j)
				store.set(o, found(15_000))
				rows = append(rows, router(o, "node-"+o, "tcp://"+o))
			}
			lister.set(rows...)
			require.Len(t, list(t, src), 10)
			version(t, lt)
			require.Len(t, cachedOwners(lt), 10)
		}
	})

	t.Run("dead_listed_owner_followed", func(t *testing.T) {
		// A row whose owner's lease ended stays listed until it is removed;
		// the tracker keeps reading its owner, so that a new lease of the
		// same owner id makes the row live again.
		store, _, lt := newFakeTracker(t, 1000)
		store.set("a", found(15_000))
		lister := &mutablePeerLister{}
		lister.set(router("a", "node-a", "tcp://a"), router("d", "node-d", "tcp://d"))
		src, err := NewPeerRowSource(lister, lt)
		require.NoError(t, err)
		require.Equal(t, []string{"a"}, list(t, src))
		v := version(t, lt)
		require.Equal(t, v, version(t, lt))
		store.set("d", found(15_000))
		require.Equal(t, v+1, version(t, lt), "d claimed a lease")
		require.Equal(t, []string{"a", "d"}, list(t, src))
	})

	t.Run("owner_seen_once_then_dead_moves_the_version", func(t *testing.T) {
		// A loop reads the version before its listing: c joins and is
		// listed live after one version read, and dies before the next.
		// The live owners both reads see are {a}; the version must move
		// all the same, or the loop would skip the tick that drops c.
		store, clock, lt := newFakeTracker(t, 1000)
		store.set("a", found(15_000))
		store.set("c", found(15_000))
		lister := &mutablePeerLister{}
		lister.set(router("a", "node-a", "tcp://a"))
		src, err := NewPeerRowSource(lister, lt)
		require.NoError(t, err)
		list(t, src)
		v := version(t, lt)
		lister.set(router("a", "node-a", "tcp://a"), router("c", "node-c", "tcp://c"))
		require.Equal(t, []string{"a", "c"}, list(t, src))
		store.set("c", missing())
		clock.AdvanceMs(1000)
		require.Greater(t, version(t, lt), v)
	})

	t.Run("scopes_are_independent", func(t *testing.T) {
		// One tracker behind a peer-row source and a mesh-node source: an
		// owner stays while either listing references it.
		store, _, lt := newFakeTracker(t, 1000)
		for _, o := range []string{"a", "b", "x"} {
			store.set(o, found(15_000))
		}
		lister := &mutablePeerLister{}
		lister.set(router("x", "node-x", "tcp://x"), router("a", "node-a", "tcp://a"))
		peers, err := NewPeerRowSource(lister, lt)
		require.NoError(t, err)
		nodes := &fakeMeshNodes{nodes: []location.MeshNodeDescriptor{descriptor("x", "node-x", "tcp://x"), descriptor("b", "node-b", "tcp://b")}}
		meshNodes, err := NewMeshNodeSource(nodes, lt, Options{})
		require.NoError(t, err)
		list(t, peers)
		list(t, meshNodes)
		require.Equal(t, []string{"a", "b", "x"}, cachedOwners(lt))
		lister.set(router("a", "node-a", "tcp://a"))
		list(t, peers)
		require.Equal(t, []string{"a", "b", "x"}, cachedOwners(lt), "x is still a mesh node")
		nodes.nodes = nodes.nodes[1:]
		list(t, meshNodes)
		require.Equal(t, []string{"a", "b"}, cachedOwners(lt))
		nodes.nodes = nil
		list(t, meshNodes)
		require.Equal(t, []string{"a"}, cachedOwners(lt), "an empty listing references nobody")
	})

	t.Run("direct_checks_until_the_next_listing", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		store.set("a", found(15_000))
		store.set("z", found(15_000))
		requireLive(t, ctx, lt, "z", true)
		lister := &mutablePeerLister{}
		lister.set(router("a", "node-a", "tcp://a"))
		src, err := NewPeerRowSource(lister, lt)
		require.NoError(t, err)
		list(t, src)
		require.Equal(t, []string{"a"}, cachedOwners(lt))
		requireLive(t, ctx, lt, "z", true, "a forgotten owner is read again when asked")
		require.Equal(t, 2, store.count("z"))
	})
}

func TestTickReadsEachOwnerOnce(t *testing.T) {
	ctx := context.Background()

	t.Run("listing_checks_each_owner_once", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		store.set("a", found(15_000))
		src, err := NewPeerRowSource(fakePeerLister{rows: []location.PeerLocation{
			router("a", "node-a1", "tcp://a1"), router("d", "node-d1", "tcp://d1"),
			router("a", "node-a2", "tcp://a2"), router("d", "node-d2", "tcp://d2"),
		}}, lt)
		require.NoError(t, err)
		rows, err := src.ListLivePeers(ctx, routeMeshFilter())
		require.NoError(t, err)
		require.Equal(t, []string{"a", "a"}, ownersOfRows(rows))
		require.Equal(t, []int{1, 1}, readCounts(store, "a", "d"))
	})

	// 5 live peers and 2 dead ones still listed; each loop tick reads
	// every followed owner once, whatever path it takes: one lease read
	// each, or all of them in one ReadOwnerLiveness call. Counts are
	// store calls, owners read, rows listed.
	for _, tc := range []struct {
		name                         string
		batched                      bool
		steady, changed, join, after []int64
	}{
		{"loop_tick_per_owner", false, []int64{6, 5, 0}, []int64{7, 5, 5}, []int64{8, 6, 5}, []int64{6, 5, 0}},
		{"loop_tick_batched", true, []int64{2, 5, 0}, []int64{3, 5, 5}, []int64{4, 6, 5}, []int64{2, 5, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTickCostMesh(t, 5, tc.batched)
			for range 2 {
				m.release(m.live[0])
				m.live = m.live[1:]
			}
			m.tick() // the version moves: a reconciliation
			m.store.reset()
			m.tick()
			require.Equal(t, tc.steady, m.store.counts(), "steady: stamp + every owner read, no listing")

			m.publish(m.live[0], 2)
			m.store.reset()
			m.tick()
			require.Equal(t, tc.changed, m.store.counts(), "changed: stamp, every owner read, one listing")

			for range 20 {
				m.join()
				m.leave()
				m.store.reset()
				m.tick()
				require.Equal(t, tc.join, m.store.counts(), "a join: the joiner is read once more, in the listing")
			}
			m.store.reset()
			m.tick()
			require.Equal(t, tc.after, m.store.counts(), "owners that left are not read; the joiner's answer was recorded by the listing")
		})
	}
}

// A MeshNodeSource reuses the row it built from a descriptor listed again
// unchanged in what PeerFromMeshNode reads, and builds it again after any
// of those changes; every row is PeerFromMeshNode's.
func TestMeshNodeSourceReusesUnchangedRows(t *testing.T) {
	ctx := context.Background()
	store := newFakeLeaseStore()
	store.set("o1", found(15_000))
	store.set("o2", found(15_000))
	lt := newTracker(t, store, newFakeClock(), 1000)
	base := descriptor("o1", "01", "tcp://10.0.0.1:7300")
	base.ChannelWeights = map[string]int64{"c": 1}
	nodes := &fakeMeshNodes{nodes: []location.MeshNodeDescriptor{base}}
	src, err := NewMeshNodeSource(nodes, lt, Options{})
	require.NoError(t, err)
	list := func() location.PeerLocation {
		t.Helper()
		rows, err := src.ListLivePeers(ctx, routeMeshFilter())
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Equal(t, PeerFromMeshNode(&nodes.nodes[0]), rows[0])
		return rows[0]
	}
	for _, tc := range []struct {
		name   string
		change func(d *location.MeshNodeDescriptor)
		reused bool
	}{
		{"unchanged", func(*location.MeshNodeDescriptor) {}, true},
		{"a field the row does not carry", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 7 }, true},
		{"endpoint", func(d *location.MeshNodeDescriptor) { d.Endpoint = "tcp://10.0.0.2:7300" }, false},
		{"state", func(d *location.MeshNodeDescriptor) { d.State = location.StateDraining }, false},
		{"revision", func(d *location.MeshNodeDescriptor) { d.DescriptorRevision++ }, false},
		{"generation", func(d *location.MeshNodeDescriptor) { d.LifecycleGeneration++ }, false},
		{"lease generation (not in the row)", func(d *location.MeshNodeDescriptor) { d.LeaseGeneration++ }, true},
		{"owner", func(d *location.MeshNodeDescriptor) { d.OwnerID = "o2" }, false},
		{"object role", func(d *location.MeshNodeDescriptor) { d.ObjectRole = location.RoleClient }, false},
		{"server channel", func(d *location.MeshNodeDescriptor) { d.ChannelWeights = nil }, false},
		{"security identity", func(d *location.MeshNodeDescriptor) { d.SecurityIdentity = "spiffe://x" }, false},
		{"updated at", func(d *location.MeshNodeDescriptor) { d.UpdatedAt = time.Unix(5, 0) }, false},
	} {
		before := list()
		nodes.mu.Lock()
		tc.change(&nodes.nodes[0])
		nodes.mu.Unlock()
		after := list()
		same := reflect.ValueOf(before.Metadata).UnsafePointer() == reflect.ValueOf(after.Metadata).UnsafePointer()
		require.Equal(t, tc.reused, same, tc.name)
	}
}
