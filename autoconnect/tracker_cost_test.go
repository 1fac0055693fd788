package autoconnect

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

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
		store, clock := newFakeLeaseStore(), newFakeClock()
		for _, o := range []string{"a", "b", "c"} {
			store.set(o, found(15_000))
		}
		lt := newTracker(t, store, clock, 1000)
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
		store, clock := newFakeLeaseStore(), newFakeClock()
		lt := newTracker(t, store, clock, 1000)
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
		store, clock := newFakeLeaseStore(), newFakeClock()
		store.set("a", found(15_000))
		lt := newTracker(t, store, clock, 1000)
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
		store, clock := newFakeLeaseStore(), newFakeClock()
		store.set("a", found(15_000))
		store.set("c", found(15_000))
		lt := newTracker(t, store, clock, 1000)
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
		store, clock := newFakeLeaseStore(), newFakeClock()
		for _, o := range []string{"a", "b", "x"} {
			store.set(o, found(15_000))
		}
		lt := newTracker(t, store, clock, 1000)
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
		store, clock := newFakeLeaseStore(), newFakeClock()
		store.set("a", found(15_000))
		store.set("z", found(15_000))
		lt := newTracker(t, store, clock, 1000)
		live, err := lt.IsOwnerLive(ctx, "z")
		require.NoError(t, err)
		require.True(t, live)
		lister := &mutablePeerLister{}
		lister.set(router("a", "node-a", "tcp://a"))
		src, err := NewPeerRowSource(lister, lt)
		require.NoError(t, err)
		list(t, src)
		require.Equal(t, []string{"a"}, cachedOwners(lt))
		live, err = lt.IsOwnerLive(ctx, "z")
		require.NoError(t, err)
		require.True(t, live, "a forgotten owner is read again when asked")
		require.Equal(t, 2, store.count("z"))
	})
}

func TestTickReadsEachOwnerOnce(t *testing.T) {
	ctx := context.Background()

	t.Run("listing_checks_each_owner_once", func(t *testing.T) {
		store, clock := newFakeLeaseStore(), newFakeClock()
		store.set("a", found(15_000))
		lt := newTracker(t, store, clock, 1000)
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
