package etcdstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// other returns another store over f's root (another process), adjusted
// by adjust.
func (f *fixture) other(t *testing.T, adjust func(*Options)) *Store {
	t.Helper()
	opts := Options{Root: f.s.layout.Root(), Clock: f.clock.Now, MinLeaseSeconds: 600}
	if adjust != nil {
		adjust(&opts)
	}
	s, err := New(f.s.client, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// noCache disables the watch cache.
func noCache(o *Options) { o.WatchCache.Disabled = true }

// cacheWorld is a mesh written by one store (cache off) and read by
// another (f.s, cache on), with what the writer knows.
type cacheWorld struct {
	t      *testing.T
	f      *fixture
	writer *Store
	rnd    *rand.Rand
	tokens map[string]location.OwnerToken
	gen    map[string]int64 // peer row generations by routing id
	n      int
}

// meshes, owners and rids of the random workload.
var (
	cacheMeshes = []string{"m1", "m2"}
	cacheOwners = []string{"o1", "o2", "o3"}
	cacheRIDs   = []location.RoutingID{"n1", "n2", "n3", "n4", "n5"}
)

// step makes one random change through the writer.
func (w *cacheWorld) step() {
	t, ctx := w.t, w.t.Context()
	owner := cacheOwners[w.rnd.IntN(len(cacheOwners))]
	tok, live := w.tokens[owner]
	mesh := cacheMeshes[w.rnd.IntN(len(cacheMeshes))]
	rid := cacheRIDs[w.rnd.IntN(len(cacheRIDs))]
	w.n++
	switch r := w.rnd.IntN(10); {
	case !live || r == 0:
		res, err := w.writer.ClaimOwnerLease(ctx, owner, time.Minute)
		require.NoError(t, err)
		if res.Kind == location.KindClaimed {
			w.tokens[owner] = res.Token
		}
	case r == 1:
		require.NoError(t, w.writer.ExpireOwnerLease(ctx, owner))
		delete(w.tokens, owner)
	case r <= 4:
		d := creationNode(mesh, rid, tok)
		d.DescriptorRevision = int64(w.n)
		d.State = []location.RuntimeState{location.StateServing, location.StateDraining}[w.rnd.IntN(2)]
		_, err := w.writer.UpdateMeshNode(ctx, d, []location.WriteIntent{location.IntentNewClaim, location.IntentRenew, location.IntentTakeover}[w.rnd.IntN(3)])
		require.NoError(t, err)
	case r == 5:
		_, err := w.writer.RemoveMeshNode(ctx, location.MeshNodeKey{MeshName: mesh, RID: rid}, tok)
		require.NoError(t, err)
	case r == 6:
		target := location.CreationTarget{MeshName: mesh, NodeRID: rid, NodeLifecycleGeneration: 1, Owner: tok}
		_, err := w.writer.Reserve(ctx, userSpotRoom(fmt.Sprintf("room-%d", w.n), target))
		require.NoError(t, err)
	case r <= 8:
		p := peer(rid, owner)
		p.MeshName = mesh
		res, err := w.writer.UpdatePeer(ctx, p, location.IntentTakeover)
		require.NoError(t, err)
		w.gen[string(rid)+mesh] = res.Generation
	default:
		k := peer(rid, owner)
		k.MeshName = mesh
		_, err := w.writer.RemovePeer(ctx, k.Key(), location.OwnerToken{OwnerID: owner, LeaseGeneration: w.gen[string(rid)+mesh]})
		require.NoError(t, err)
	}
}

// check compares every cached read of the reader with the writer's read of
// etcd, made after it.
func (w *cacheWorld) check() {
	t, ctx := w.t, w.t.Context()
	for _, mesh := range cacheMeshes {
		for _, size := range []int{0, 2} {
			got := listAllMeshNodes(t, w.f.s, mesh, size)
			want := listAllMeshNodes(t, w.writer, mesh, size)
			require.Equal(t, want, got, "mesh %s, page size %d, after %d changes", mesh, size, w.n)
		}
	}
	typ, role := location.AutoConnectRouteMesh, location.PeerRoleRouter
	rid := cacheRIDs[0]
	for _, f := range []location.PeerFilter{{}, {AutoConnectType: &typ}, {AutoConnectType: &typ, MeshName: &cacheMeshes[0]},
		{AutoConnectType: &typ, MeshName: &cacheMeshes[1], Role: &role, NodeRID: &rid}, {NodeRID: &rid}} {
		got, err := w.f.s.ListPeers(ctx, f)
		require.NoError(t, err)
		want, err := w.writer.ListPeers(ctx, f)
		require.NoError(t, err)
		require.Equal(t, want, got, "peers %+v", f)
	}
	owners := append(cacheOwners, "nobody", cacheOwners[0])
	got, err := w.f.s.ReadOwnerLiveness(ctx, owners)
	require.NoError(t, err)
	want, err := w.writer.ReadOwnerLiveness(ctx, owners)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// listAllMeshNodes lists every page of a mesh's descriptors.
func listAllMeshNodes(t *testing.T, s *Store, mesh string, size int) []location.MeshNodeDescriptor {
	t.Helper()
	var out []location.MeshNodeDescriptor
	token := ""
	for {
		page, err := s.ListMeshNodes(t.Context(), mesh, location.PageRequest{PageSize: size, ContinuationToken: token})
		require.NoError(t, err)
		out = append(out, page.Items...)
		if page.ContinuationToken == "" {
			return out
		}
		token = page.ContinuationToken
	}
}

// The watch cache answers exactly what etcd does, right after every change
// another process made (its reads are linearizable: each waits until the
// cache has applied the change): mesh nodes with their capacity, in every
// page size, peers under every filter, owner liveness.
func TestWatchCacheAgreesWithEtcd(t *testing.T) {
	f := newFixture(t)
	w := &cacheWorld{t: t, f: f, writer: f.other(t, noCache), rnd: rand.New(rand.NewPCG(1, 2)),
		tokens: map[string]location.OwnerToken{}, gen: map[string]int64{}}
	w.check()
	for range 150 {
		w.step()
		w.check()
	}
	st := f.s.CacheStats()
	require.True(t, st.Enabled)
	require.True(t, st.Ready)
	require.Zero(t, st.Fallbacks)
	require.Positive(t, st.Hits)
	require.Positive(t, st.Entries)
	require.Zero(t, st.Evictions)
	require.Zero(t, f.s.ReadRetries().Retries)
	// The last reads confirmed the latest revision this process saw, and
	// waited for every range to deliver the changes through it.
	require.Zero(t, st.Lag)
	require.Zero(t, f.s.WatchStats().LagRevisions)
}

// A continuation token pins the first page's revision: later pages read
// the group version of that revision, kept by the cache, whatever changed
// since (no request), and agree with etcd's pages of the same token.
func TestWatchCacheContinuationTokens(t *testing.T) {
	f := newFixture(t)
	writer := f.other(t, noCache)
	a := f.claim(t, "a")
	for _, rid := range []location.RoutingID{"n1", "n2", "n3", "n4", "n5"} {
		storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", rid, a), location.IntentNewClaim))
	}
	f.warmCache(t)
	p1, err := f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{PageSize: 2})
	require.NoError(t, err)
	require.Len(t, p1.Items, 2)

	// The mesh changes under the listing: a node leaves, one joins, one is
	// updated, capacity moves.
	_, err = writer.RemoveMeshNode(t.Context(), location.MeshNodeKey{MeshName: "m", RID: "n3"}, a)
	require.NoError(t, err)
	storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", "n0", a), location.IntentNewClaim))
	d := creationNode("m", "n4", a)
	d.DescriptorRevision = 2
	storedIn(t)(writer.UpdateMeshNode(t.Context(), d, location.IntentRenew))
	_, _, err = reserveAndCommit(t.Context(), writer, "room-1", location.CreationTarget{MeshName: "m", NodeRID: "n5",
		NodeLifecycleGeneration: 1, Owner: a}, []byte("r"))
	require.NoError(t, err)
	_, err = f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{}) // the cache has applied the changes
	require.NoError(t, err)

	f.counts()
	var cached []location.MeshNodeDescriptor
	for token := p1.ContinuationToken; token != ""; {
		page, err := f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{PageSize: 2, ContinuationToken: token})
		require.NoError(t, err)
		cached, token = append(cached, page.Items...), page.ContinuationToken
	}
	require.Empty(t, f.counts(), "later pages come from the cache's versions")
	var direct []location.MeshNodeDescriptor
	for token := p1.ContinuationToken; token != ""; {
		page, err := writer.ListMeshNodes(t.Context(), "m", location.PageRequest{PageSize: 2, ContinuationToken: token})
		require.NoError(t, err)
		direct, token = append(direct, page.Items...), page.ContinuationToken
	}
	require.Equal(t, direct, cached)
	require.Len(t, cached, 3, "n3, n4 (revision 1), n5 (no capacity used): the first page's snapshot")
	require.Equal(t, location.RoutingID("n3"), cached[0].RID)
	require.Equal(t, int64(1), cached[1].DescriptorRevision)
	require.Zero(t, cached[2].PopulationCapacity.Spots.Active)
}

// mutedWatcher holds back, while muted, every response of the watches of
// key (they come later, in order, once unmuted), as a stalled connection
// would; it counts the watches of key opened and can break the open one.
type mutedWatcher struct {
	clientv3.Watcher
	key string

	mu      sync.Mutex
	muted   bool
	unmuted chan struct{}
	opened  int
	breakc  chan struct{}
}

func newMutedWatcher(w clientv3.Watcher, key string) *mutedWatcher {
	return &mutedWatcher{Watcher: w, key: key, unmuted: make(chan struct{})}
}

// mute holds responses back; unmute lets them through.
func (w *mutedWatcher) mute() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.muted, w.unmuted = true, make(chan struct{})
}

func (w *mutedWatcher) unmute() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.muted = false
	close(w.unmuted)
}

// breakWatch ends the open watch of key (its channel closes).
func (w *mutedWatcher) breakWatch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.breakc)
	w.breakc = make(chan struct{})
}

// gate returns, while muted, the channel closed on unmute.
func (w *mutedWatcher) gate() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.muted {
		return nil
	}
	return w.unmuted
}

func (w *mutedWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	if key != w.key {
		return w.Watcher.Watch(ctx, key, opts...)
	}
	w.mu.Lock()
	w.opened++
	if w.breakc == nil {
		w.breakc = make(chan struct{})
	}
	broken := w.breakc
	w.mu.Unlock()
	return relay(ctx, w.Watcher, key, opts, broken, func(clientv3.WatchResponse) bool {
		g := w.gate()
		if g == nil {
			return true
		}
		select {
		case <-g:
			return true
		case <-broken:
			return false
		case <-ctx.Done():
			return false
		}
	})
}

// openedWatches returns how many watches of key were opened.
func (w *mutedWatcher) openedWatches() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opened
}

// A cache that cannot catch up in time (its watch stalls: neither changes
// nor progress arrive) is not waited for longer than MaxWait, nor half of
// the caller's remaining time: the read goes to etcd, and the reads after
// it too without waiting, until the cache moves on again. While it waits
// it asks for progress again after 20 ms, then 40, 80, 160 ms (timers
// never fire early, so at most that many requests).
func TestWatchCacheFallsBackWhenItCannotCatchUp(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.WatchCache.MaxWait = 200 * time.Millisecond })
	mw := newMutedWatcher(f.s.watcher, f.s.layout.TablePrefix(string(location.TableMeshNodes)))
	f.s.watcher = mw
	writer := f.other(t, noCache)
	a := f.claim(t, "a")
	storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", "n1", a), location.IntentNewClaim))
	f.warmCache(t)

	mw.mute()
	storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", "n2", a), location.IntentNewClaim))
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		// maxAsks: the first request, then one at 20, 60, 140 ms.
		maxAsks int64
	}{{"max_wait", time.Minute, 4}, {"half_the_deadline", 100 * time.Millisecond, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			f.s.cache.mu.Lock()
			f.s.cache.stalled = false
			f.s.cache.mu.Unlock()
			before, asked := f.s.CacheStats(), f.s.cache.progressSent.Load()
			ctx, cancel := context.WithTimeout(t.Context(), tc.timeout)
			defer cancel()
			start := time.Now()
			page, err := f.s.ListMeshNodes(ctx, "m", location.PageRequest{})
			require.NoError(t, err)
			require.Len(t, page.Items, 2, "etcd's answer")
			require.Less(t, time.Since(start), tc.timeout)
			after := f.s.CacheStats()
			require.Equal(t, before.Fallbacks+1, after.Fallbacks)
			require.Equal(t, before.Misses+1, after.Misses, "a fallback is a miss")
			require.Equal(t, before.Waits+1, after.Waits)
			asks := f.s.cache.progressSent.Load() - asked
			require.GreaterOrEqual(t, asks, int64(1))
			require.LessOrEqual(t, asks, tc.maxAsks)
		})
	}
	// Stalled: the next read goes to etcd at once.
	before := f.s.CacheStats()
	page, err := f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{})
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	require.Equal(t, before.Misses+1, f.s.CacheStats().Misses)
	require.Equal(t, before.Waits, f.s.CacheStats().Waits)

	mw.unmute()
	require.Eventually(t, func() bool {
		before := f.s.CacheStats().Hits
		page, err := f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{})
		return err == nil && len(page.Items) == 2 && f.s.CacheStats().Hits == before+1
	}, 10*time.Second, time.Millisecond, "the cache answers again once it moved on")
}

// A broken watch resumes from the last revision it delivered: meanwhile
// reads go to etcd; after it, the cache has every change. A watch whose
// history was compacted meanwhile reads its range again.
func TestWatchCacheRidesOutBreaksAndCompactions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		compact bool
	}{{"break", false}, {"break_and_compaction", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			prefix := f.s.layout.TablePrefix(string(location.TableMeshNodes))
			mw := newMutedWatcher(f.s.watcher, prefix)
			f.s.watcher = mw
			writer := f.other(t, noCache)
			a := f.claim(t, "a")
			storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", "n1", a), location.IntentNewClaim))
			f.warmCache(t)
			require.Eventually(t, func() bool { return mw.openedWatches() == 1 }, 10*time.Second, time.Millisecond,
				"the range's watch opened (its goroutine may open it after the range loaded)")

			// The watch stalls, then breaks, while the mesh changes.
			mw.mute()
			storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", "n2", a), location.IntentNewClaim))
			_, err := writer.RemoveMeshNode(t.Context(), location.MeshNodeKey{MeshName: "m", RID: "n1"}, a)
			require.NoError(t, err)
			if tc.compact {
				rev, err := f.s.currentRevision(t.Context())
				require.NoError(t, err)
				_, err = f.s.client.Compact(t.Context(), rev)
				require.NoError(t, err)
			}
			mw.breakWatch()
			mw.unmute()
			require.Eventually(t, func() bool { return mw.openedWatches() >= 2 }, 10*time.Second, time.Millisecond)

			// Reads are right whether the cache or etcd answers them, and
			// the cache answers again once it is back.
			require.Eventually(t, func() bool {
				before := f.s.CacheStats().Hits
				got := listAllMeshNodes(t, f.s, "m", 0)
				require.Equal(t, listAllMeshNodes(t, writer, "m", 0), got)
				return f.s.CacheStats().Hits > before
			}, 10*time.Second, time.Millisecond)
			st, ws := f.s.CacheStats(), f.s.WatchStats()
			require.Positive(t, ws.Resumes)
			if tc.compact {
				// At least the broken range's; on a loaded machine the member
				// can lose its leader meanwhile, which ends every watch, and
				// the other ranges then meet the compaction too.
				require.GreaterOrEqual(t, st.Relists, int64(1))
				require.GreaterOrEqual(t, ws.CompactionRelists, int64(1))
			} else {
				require.Zero(t, st.Relists)
			}
			storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", "n3", a), location.IntentNewClaim))
			require.Equal(t, listAllMeshNodes(t, writer, "m", 0), listAllMeshNodes(t, f.s, "m", 0))
		})
	}
}

// A cache that would hold more than MaxBytes turns itself off: reads go to
// etcd, its watches end.
func TestWatchCacheTurnsOffAboveItsBound(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.WatchCache.MaxBytes = 4000 })
	a := f.claim(t, "a")
	storedIn(t)(f.s.UpdateMeshNode(t.Context(), creationNode("m", "n1", a), location.IntentNewClaim))
	f.warmCache(t)
	require.True(t, f.s.CacheStats().Enabled)
	for _, rid := range []location.RoutingID{"n2", "n3", "n4", "n5", "n6"} {
		storedIn(t)(f.s.UpdateMeshNode(t.Context(), creationNode("m", rid, a), location.IntentNewClaim))
	}
	require.Eventually(t, func() bool { return !f.s.CacheStats().Enabled }, 10*time.Second, time.Millisecond)
	page, err := f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{})
	require.NoError(t, err)
	require.Len(t, page.Items, 6)
	st := f.s.CacheStats()
	require.Equal(t, int64(1), st.Overflows)
	require.Zero(t, st.Bytes)
	require.Eventually(t, func() bool { return f.s.WatchStats().Watchers == 0 }, 10*time.Second, time.Millisecond)
}

// ReadOwnerLiveness reports, at one revision, which owners hold a lease
// and its generation, with the cache and without; ids are validated first.
func TestReadOwnerLiveness(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", cached), func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.WatchCache.Disabled = !cached })
			a, b, c := f.claim(t, "a"), f.claim(t, "b"), f.claim(t, "c")
			kind, err := f.s.ReleaseOwnerLease(t.Context(), b)
			require.NoError(t, err)
			require.Equal(t, location.KindReleased, kind)
			require.NoError(t, f.s.ExpireOwnerLease(t.Context(), c.OwnerID))
			c2 := f.claim(t, "c")
			require.Greater(t, c2.LeaseGeneration, c.LeaseGeneration)
			f.counts()
			got, err := f.s.ReadOwnerLiveness(t.Context(), []string{"a", "b", "c", "d", "a"})
			require.NoError(t, err)
			require.Equal(t, []location.OwnerLiveness{{Live: true, Token: a}, {}, {Live: true, Token: c2}, {}, {Live: true, Token: a}}, got)
			if cached {
				require.LessOrEqual(t, f.counts()[txn.CallGet], 7, "the first read loads the cache")
				_, err = f.s.ReadOwnerLiveness(t.Context(), []string{"a", "b"})
				require.NoError(t, err)
				require.Equal(t, map[string]int{txn.CallGet: 1}, f.counts())
			} else {
				require.Equal(t, map[string]int{txn.CallTxn: 1}, f.counts(), "one Txn of Gets")
			}

			none, err := f.s.ReadOwnerLiveness(t.Context(), nil)
			require.NoError(t, err)
			require.Empty(t, none)
			_, err = f.s.ReadOwnerLiveness(t.Context(), []string{"a", ""})
			require.ErrorIs(t, err, location.ErrInvalidArgument)
			require.Empty(t, f.counts(), "nothing read for bad input or no owner")
			done, cancel := context.WithCancel(t.Context())
			cancel()
			_, err = f.s.ReadOwnerLiveness(done, []string{"a"})
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}

// At steady state a kept owner lease renews with keep-alives alone: the
// store's watches (the cache's and a change watcher's) receive no event,
// however many renewals.
func TestKeptRenewalsDeliverNoWatchEvent(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	storedIn(t)(f.s.UpdateMeshNode(t.Context(), creationNode("m", "n1", a), location.IntentNewClaim))
	f.warmCache(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	changes, err := f.s.WatchChanges(ctx, location.TableMeshNodes)
	require.NoError(t, err)
	res, kept, err := f.s.KeepOwnerLease(t.Context(), a, time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)
	defer kept.Close()
	// The mark is one write of the owner key: one event, no notification
	// (it is not an owner end).
	require.Eventually(t, func() bool {
		live, err := f.s.ReadOwnerLiveness(t.Context(), []string{"a"})
		return err == nil && live[0].Live && f.s.WatchStats().Events >= 1
	}, 10*time.Second, time.Millisecond)
	before := f.s.WatchStats()
	const renewals = 50
	for range renewals {
		r, err := kept.Renew(t.Context())
		require.NoError(t, err)
		require.Equal(t, location.KindRenewed, r.Kind)
	}
	// Progress through the current revision: every event up to now has been
	// delivered.
	_, err = f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{})
	require.NoError(t, err)
	after := f.s.WatchStats()
	require.Equal(t, before.Events, after.Events, "%d renewals delivered no event", renewals)
	require.Zero(t, len(changes), "no change notification")
}

// Close ends every watch of the store and closes change watchers'
// channels.
func TestCloseEndsWatches(t *testing.T) {
	f := newFixture(t)
	ch, err := f.s.WatchChanges(t.Context(), location.TablePeers)
	require.NoError(t, err)
	f.warmCache(t)
	require.Equal(t, int64(4), f.s.WatchStats().Watchers, "mesh nodes, ledger, peers and owner keys: the change watcher shares the last two")
	require.NoError(t, f.s.Close())
	require.Zero(t, f.s.WatchStats().Watchers)
	receive(t, ch, true)
	_, err = f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{})
	require.NoError(t, err, "a closed store's lists read etcd")
}

// The cache watches the ranges its reads have needed, no more: a process
// that lists mesh nodes watches their rows and ledgers, not the peers nor
// the owner keys until it reads them.
func TestWatchCacheWatchesWhatItReads(t *testing.T) {
	f := newFixture(t)
	l := f.s.layout
	reads := []struct {
		name  string
		read  func() error
		added []string
	}{
		{"ListMeshNodes", func() error { _, err := f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{}); return err },
			[]string{l.TablePrefix(string(location.TableMeshNodes)), l.TablePrefix(string(rules.TableLedger))}},
		{"ListPeers", func() error { _, err := f.s.ListPeers(t.Context(), location.PeerFilter{}); return err },
			[]string{l.TablePrefix(string(location.TablePeers))}},
		{"ReadOwnerLiveness", func() error { _, err := f.s.ReadOwnerLiveness(t.Context(), []string{"a"}); return err },
			[]string{l.OwnerPrefix()}},
	}
	var watched []string
	for _, r := range reads {
		require.NoError(t, r.read(), r.name)
		watched = append(watched, r.added...)
		require.Eventually(t, func() bool { return f.s.CacheStats().Ready }, 10*time.Second, time.Millisecond)
		for _, prefix := range watched {
			require.True(t, f.s.hub.watching(prefix), "%s: %s watched", r.name, prefix)
		}
		require.Equal(t, int64(len(watched)), f.s.WatchStats().Watchers, r.name)
	}
}

// A read waits for the cache at most MaxWait, DefaultCacheMaxWait (3 s)
// when it is 0, and at most half of its context's remaining time.
func TestWatchCacheWaitLimit(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name    string
		maxWait time.Duration
		timeout time.Duration // 0: no deadline
		want    time.Duration
	}{
		{"default", 0, 0, 3 * time.Second},
		{"max_wait", 100 * time.Millisecond, 0, 100 * time.Millisecond},
		{"default_within_a_long_deadline", 0, time.Hour, 3 * time.Second},
		{"half_the_deadline", 0, 2 * time.Second, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newWatchCache(f.s, WatchCacheOptions{MaxWait: tc.maxWait})
			ctx := t.Context()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			got := c.waitLimit(ctx)
			require.LessOrEqual(t, got, tc.want)
			if tc.timeout == 0 {
				require.Equal(t, tc.want, got)
			}
		})
	}
}

// etcd answers a progress request only when no watch of the stream starts
// after its current revision. A range started on a quiet cluster watches
// from the revision it read (not the one after), so the ranges behind it
// still learn from a progress notification that nothing of theirs changed:
// a list of mesh nodes after a write elsewhere is answered from the cache,
// without waiting in vain.
func TestWatchCacheProgressAfterAWatchStartsAtTheCurrentRevision(t *testing.T) {
	f := newFixture(t)
	writer := f.other(t, noCache)
	a := f.claim(t, "a")
	storedIn(t)(writer.UpdateMeshNode(t.Context(), creationNode("m", "n1", a), location.IntentNewClaim))
	startRanges := func(ranges []*cacheRange) {
		f.s.cache.start(ranges)
		require.Eventually(t, func() bool {
			f.s.cache.mu.RLock()
			defer f.s.cache.mu.RUnlock()
			for _, r := range ranges {
				if !r.loaded {
					return false
				}
			}
			return true
		}, 10*time.Second, time.Millisecond, "the ranges loaded")
	}
	nodeRanges := append(slices.Clone(f.s.cache.meshNodes.ranges), f.s.cache.ownersRange)
	startRanges(nodeRanges)

	// A write outside the cached ranges, then a range started after it:
	// its watch would start after the current revision.
	_, err := f.s.client.Put(t.Context(), f.s.layout.Root()+"unrelated", "x")
	require.NoError(t, err)
	startRanges(f.s.cache.peers.ranges)

	before := f.s.CacheStats()
	page, err := f.s.ListMeshNodes(t.Context(), "m", location.PageRequest{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	after := f.s.CacheStats()
	require.Equal(t, before.Fallbacks, after.Fallbacks, "no read waited in vain")
	require.Equal(t, before.Hits+1, after.Hits, "the cache answered")
	require.Positive(t, f.s.WatchStats().ProgressNotifications, "the ranges behind caught up by progress")
}

// ReadOwnerLivenessSince's stamp moves with every change of an owner's
// liveness (a claim, a release, an expiry, a claim of a new generation)
// and stays through writes that change none (a renewal rewriting the owner
// key, a descriptor update); with the stamp it was given it answers no
// owner, with another it answers every one; each answer is one request.
// Without the cache the owners are answered without a stamp.
func TestReadOwnerLivenessSince(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	f.warmCache(t)
	owners := []string{"a", "b"}
	read := func(since int64) location.OwnerLivenessSince {
		t.Helper()
		res, err := f.s.ReadOwnerLivenessSince(t.Context(), owners, since)
		require.NoError(t, err)
		require.Positive(t, res.Stamp)
		return res
	}
	var b location.OwnerToken
	steps := []struct {
		name  string
		do    func()
		moves bool
	}{
		{"nothing", func() {}, false},
		{"renewal", func() {
			r, err := f.s.RenewOwnerLease(t.Context(), a, time.Minute)
			require.NoError(t, err)
			require.Equal(t, location.KindRenewed, r.Kind)
		}, false},
		{"descriptor update", func() {
			storedIn(t)(f.s.UpdateMeshNode(t.Context(), creationNode("m", "n1", a), location.IntentNewClaim))
		}, false},
		{"claim", func() { b = f.claim(t, "b") }, true},
		{"release", func() {
			kind, err := f.s.ReleaseOwnerLease(t.Context(), b)
			require.NoError(t, err)
			require.Equal(t, location.KindReleased, kind)
		}, true},
		{"expiry", func() { require.NoError(t, f.s.ExpireOwnerLease(t.Context(), a.OwnerID)) }, true},
		{"new generation", func() { f.claim(t, "a") }, true},
	}
	prev := read(0)
	require.True(t, prev.Changed)
	require.Equal(t, []location.OwnerLiveness{{Live: true, Token: a}, {}}, prev.Live)
	for _, st := range steps {
		st.do()
		f.counts()
		got := read(prev.Stamp)
		require.Equal(t, map[string]int{txn.CallGet: 1}, f.counts(), "%s: one request", st.name)
		if !st.moves {
			require.Equal(t, location.OwnerLivenessSince{Stamp: prev.Stamp}, got, st.name)
			continue
		}
		require.Greater(t, got.Stamp, prev.Stamp, st.name)
		require.True(t, got.Changed, st.name)
		want, err := f.s.ReadOwnerLiveness(t.Context(), owners)
		require.NoError(t, err)
		require.Equal(t, want, got.Live, st.name)
		prev = got
	}

	off := f.other(t, noCache)
	res, err := off.ReadOwnerLivenessSince(t.Context(), owners, prev.Stamp)
	require.NoError(t, err)
	require.Zero(t, res.Stamp, "no cache, no stamp")
	require.True(t, res.Changed)
	require.Len(t, res.Live, 2)
	_, err = f.s.ReadOwnerLivenessSince(t.Context(), []string{"a", ""}, 0)
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = f.s.ReadOwnerLivenessSince(done, owners, 0)
	require.ErrorIs(t, err, context.Canceled)
}

// ListMeshNodesShared lists what ListMeshNodes lists; from the cache its
// descriptors share their slices with the cache (no deep copy), where
// ListMeshNodes's are the caller's own.
func TestListMeshNodesShared(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	for _, rid := range []location.RoutingID{"n1", "n2"} {
		storedIn(t)(f.s.UpdateMeshNode(t.Context(), creationNode("m", rid, a), location.IntentNewClaim))
	}
	f.warmCache(t)
	list := func(shared bool) []location.MeshNodeDescriptor {
		t.Helper()
		lister := f.s.ListMeshNodes
		if shared {
			lister = f.s.ListMeshNodesShared
		}
		page, err := lister(t.Context(), "m", location.PageRequest{})
		require.NoError(t, err)
		require.Len(t, page.Items, 2)
		return page.Items
	}
	same := func(x, y []location.MeshNodeDescriptor) bool {
		return &x[0].SpotTypes[0] == &y[0].SpotTypes[0]
	}
	own, shared := list(false), list(true)
	require.Equal(t, own, shared)
	require.True(t, same(shared, list(true)), "shared descriptors are the cache's")
	require.False(t, same(own, list(false)), "listed descriptors are copies")
	require.False(t, same(own, shared))
}
