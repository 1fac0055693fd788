package etcdstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Which key ranges a watcher's etcd watches cover: the watched tables
// (the location tables when none is given) and, for watchers of location
// tables, the owner keys (their deletions only); never the store's
// bookkeeping keys.
func TestWatchRanges(t *testing.T) {
	f := newFixture(t)
	l := f.s.layout
	table := func(t location.Table) string { return l.TablePrefix(string(t)) }
	var locations []string
	for _, t := range rules.LocationTables() {
		locations = append(locations, table(t))
	}
	tests := []struct {
		name   string
		tables []location.Table
		ranges []string
	}{
		{"every_location_table", nil, append(locations, l.OwnerPrefix())},
		{"peers", []location.Table{location.TablePeers}, []string{table(location.TablePeers), l.OwnerPrefix()}},
		{"mesh_nodes_twice", []location.Table{location.TableMeshNodes, location.TableMeshNodes},
			[]string{table(location.TableMeshNodes), l.OwnerPrefix()}},
		{"ledger_only", []location.Table{rules.TableLedger}, []string{table(rules.TableLedger)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.ranges, f.s.watchRanges(tc.tables))
		})
	}
}

// Watchers of the same ranges share one etcd watch per range, and a range
// is no longer watched once its last watcher is gone.
func TestWatchChangesShareWatches(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.WatchCache.Disabled = true })
	peers, meshNodes, owners := f.s.layout.TablePrefix(string(location.TablePeers)),
		f.s.layout.TablePrefix(string(location.TableMeshNodes)), f.s.layout.OwnerPrefix()
	ctx1, cancel1 := context.WithCancel(t.Context())
	ch1, err := f.s.WatchChanges(ctx1, location.TablePeers)
	require.NoError(t, err)
	ctx2, cancel2 := context.WithCancel(t.Context())
	ch2, err := f.s.WatchChanges(ctx2, location.TablePeers, location.TableMeshNodes)
	require.NoError(t, err)
	require.Equal(t, int64(3), f.s.WatchStats().Watchers, "peers, mesh nodes, owner keys")

	a := f.claim(t, "a")
	storedIn(t)(f.s.UpdatePeer(t.Context(), peer("n1", "a"), location.IntentNewClaim))
	receive(t, ch1, false)
	receive(t, ch2, false)
	storedIn(t)(f.s.UpdateMeshNode(t.Context(), meshNode("m", "n1", a), location.IntentNewClaim))
	receive(t, ch2, false)

	cancel2()
	for range ch2 {
	}
	waitFor(t, func() bool { return !f.s.hub.watching(meshNodes) })
	require.True(t, f.s.hub.watching(peers))
	require.True(t, f.s.hub.watching(owners))
	cancel1()
	for range ch1 {
	}
	waitFor(t, func() bool { return f.s.WatchStats().Watchers == 0 })
}

// waitFor waits until cond holds (10 s at most).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// The end of an owner lease wakes a watcher of an owner-bound table: its
// rows stopped being live although none of them changed.
func TestWatchChangesOwnerEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(t *testing.T, f *fixture, tok location.OwnerToken)
	}{
		{"expire", func(t *testing.T, f *fixture, tok location.OwnerToken) {
			require.NoError(t, f.s.ExpireOwnerLease(t.Context(), tok.OwnerID))
		}},
		{"release", func(t *testing.T, f *fixture, tok location.OwnerToken) {
			kind, err := f.s.ReleaseOwnerLease(t.Context(), tok)
			require.NoError(t, err)
			require.Equal(t, location.KindReleased, kind)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			a := f.claim(t, "a")
			storedIn(t)(f.s.UpdatePeer(t.Context(), peer("n1", "a"), location.IntentNewClaim))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ch, err := f.s.WatchChanges(ctx, location.TablePeers)
			require.NoError(t, err)
			tc.end(t, f, a)
			receive(t, ch, false)
			res, err := f.s.ReadOwnerLease(t.Context(), "a")
			require.NoError(t, err)
			require.Equal(t, location.KindMissing, res.Kind)
		})
	}
}

// scriptedWatcher reports the start revision of every Watch call of key
// on started and holds call number hold (from 1) until release is closed;
// when breakOn is set, it breaks the first call at the first response that
// carries an event on breakOn, without delivering it (as when a connection
// breaks after the server sent a change). Other keys' watches pass.
type scriptedWatcher struct {
	clientv3.Watcher
	key     string
	hold    int
	breakOn string
	release chan struct{}
	started chan int64
	calls   int
}

// scriptWatcher installs a scriptedWatcher of the peer table's watch on
// f's store.
func scriptWatcher(f *fixture, hold int, breakOn string) *scriptedWatcher {
	w := &scriptedWatcher{Watcher: f.s.watcher, key: f.s.layout.TablePrefix(string(location.TablePeers)),
		hold: hold, breakOn: breakOn, release: make(chan struct{}), started: make(chan int64, 4)}
	f.s.watcher = w
	return w
}

// Watch implements clientv3.Watcher. Only the goroutine of the key's
// range calls it for the key, so calls needs no lock.
func (w *scriptedWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	if key != w.key {
		return w.Watcher.Watch(ctx, key, opts...)
	}
	w.calls++
	w.started <- clientv3.OpGet(key, opts...).Rev()
	if w.calls == w.hold {
		select {
		case <-w.release:
		case <-ctx.Done():
		}
	}
	if w.calls > 1 || w.breakOn == "" {
		return w.Watcher.Watch(ctx, key, opts...)
	}
	return relay(ctx, w.Watcher, key, opts, nil, func(resp clientv3.WatchResponse) bool {
		for _, ev := range resp.Events {
			if string(ev.Kv.Key) == w.breakOn {
				return false
			}
		}
		return true
	})
}

// A watch whose start revision was compacted away is started again past the
// compaction, with one notification for the changes it may have missed, and
// then reports changes as before.
func TestWatchChangesRestartsAfterCompaction(t *testing.T) {
	f := newFixture(t)
	gw := scriptWatcher(f, 1, "")
	f.claim(t, "a")
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := f.s.WatchChanges(ctx, location.TablePeers)
	require.NoError(t, err)
	first := waitRevision(t, gw.started)

	// While the first watch is held back, its start revision is written
	// over and compacted away.
	storedIn(t)(f.s.UpdatePeer(t.Context(), peer("n1", "a"), location.IntentNewClaim))
	f.claim(t, "b")
	compacted, err := f.s.currentRevision(t.Context())
	require.NoError(t, err)
	require.Greater(t, compacted, first)
	_, err = f.s.client.Compact(t.Context(), compacted)
	require.NoError(t, err)
	close(gw.release)

	second := waitRevision(t, gw.started)
	require.GreaterOrEqual(t, second, compacted, "resumed at the revision read after the compaction (what it removed, before it, is not asked for)")
	receive(t, ch, false) // the re-list notification
	require.Zero(t, len(ch), "one notification for the missed changes")

	gw.requireSettled(t, f, ch, cancel, peer("n2", "a"))
}

// requireSettled checks that the restarted watch ch reports changes as
// before, a write of p and the end of p's owner's lease each notified, and
// that w's key was not watched a third time; then it ends the watch
// (cancel) and drains ch.
func (w *scriptedWatcher) requireSettled(t *testing.T, f *fixture, ch <-chan struct{}, cancel context.CancelFunc, p location.PeerLocation) {
	t.Helper()
	storedIn(t)(f.s.UpdatePeer(t.Context(), p, location.IntentNewClaim))
	receive(t, ch, false)
	require.NoError(t, f.s.ExpireOwnerLease(t.Context(), p.OwnerID))
	receive(t, ch, false)
	require.Equal(t, 2, w.calls, "no further restart")

	cancel()
	for range ch {
	}
}

// waitRevision waits for the next start revision a scriptedWatcher reports.
func waitRevision(t *testing.T, started <-chan int64) int64 {
	t.Helper()
	select {
	case rev := <-started:
		return rev
	case <-time.After(10 * time.Second):
		t.Fatal("the watch was not started")
		return 0
	}
}

// relay opens a watch through w and forwards its responses on the returned
// channel while pass says so (it may wait); the relay ends, closing its
// channel as a broken watch does, when pass returns false, stop is closed
// or ctx ends.
func relay(ctx context.Context, w clientv3.Watcher, key string, opts []clientv3.OpOption, stop <-chan struct{},
	pass func(clientv3.WatchResponse) bool) clientv3.WatchChan {
	wctx, cancel := context.WithCancel(ctx)
	real := w.Watch(wctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		defer func() {
			cancel()
			for range real {
			}
		}()
		for {
			// stop ends the relay at once, also while no response is on
			// its way (a break must not wait for the next event).
			var resp clientv3.WatchResponse
			select {
			case r, ok := <-real:
				if !ok {
					return
				}
				resp = r
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
			if !pass(resp) {
				return
			}
			select {
			case <-stop:
				return
			default:
			}
			select {
			case out <- resp:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// A watch that breaks (not by compaction) resumes at the last revision it
// delivered, whose changes it does not deliver again: the change lost with
// the break comes again, the delivered one does not, and the break itself
// sends nothing.
func TestWatchChangesResumesAfterABreak(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "a")
	first, lost := peer("n1", "a"), peer("n2", "a")
	bw := scriptWatcher(f, 2, f.s.tableKey(location.TablePeers, rules.PeerKey(lost.Key())))
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := f.s.WatchChanges(ctx, location.TablePeers)
	require.NoError(t, err)
	waitRevision(t, bw.started)

	storedIn(t)(f.s.UpdatePeer(t.Context(), first, location.IntentNewClaim))
	receive(t, ch, false)
	seen, err := f.s.client.Get(t.Context(), f.s.tableKey(location.TablePeers, rules.PeerKey(first.Key())))
	require.NoError(t, err)
	delivered := seen.Kvs[0].ModRevision

	// The change of n2 breaks the watch before it is delivered.
	storedIn(t)(f.s.UpdatePeer(t.Context(), lost, location.IntentNewClaim))
	second := waitRevision(t, bw.started)
	require.Equal(t, delivered, second, "resumed at the last delivered revision")
	require.Zero(t, len(ch), "the break itself notifies nothing")
	close(bw.release)
	receive(t, ch, false) // n2's change, delivered by the resumed watch

	bw.requireSettled(t, f, ch, cancel, peer("n3", "a"))
}

// receive waits for a notification (or the channel's close when closed is
// set).
func receive(t *testing.T, ch <-chan struct{}, closed bool) {
	t.Helper()
	select {
	case _, ok := <-ch:
		require.Equal(t, !closed, ok)
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
}

func TestWatchChanges(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	ctx, cancel := context.WithCancel(t.Context())
	spots, err := f.s.WatchChanges(ctx, location.TableSpots)
	require.NoError(t, err)
	all, err := f.s.WatchChanges(ctx)
	require.NoError(t, err)

	storedIn(t)(f.s.UpdateSpot(t.Context(), spot("s1", a), location.IntentNewClaim))
	receive(t, spots, false)
	receive(t, all, false)
	storedIn(t)(f.s.UpdatePeer(t.Context(), peer("n1", "a"), location.IntentNewClaim))
	receive(t, all, false)

	cancel()
	for {
		if _, ok := <-spots; !ok {
			break
		}
	}
	for {
		if _, ok := <-all; !ok {
			break
		}
	}
	_, err = f.s.WatchChanges(ctx)
	require.ErrorIs(t, err, context.Canceled)
}
