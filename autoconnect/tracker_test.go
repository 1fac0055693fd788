package autoconnect

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
