package etcdstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Which events wake which watchers: rows of the watched tables, and the end
// of an owner lease for watchers of owner-bound tables; never the store's
// bookkeeping keys.
func TestWatchRelevance(t *testing.T) {
	f := newFixture(t)
	l := f.s.layout
	put, del := clientv3.EventTypePut, clientv3.EventTypeDelete
	events := []struct {
		name string
		typ  mvccpb.Event_EventType
		key  string
	}{
		{"peer_put", put, l.TableKey(string(location.TablePeers), "k")},
		{"peer_delete", del, l.TableKey(string(location.TablePeers), "k")},
		{"mesh_node_put", put, l.TableKey(string(location.TableMeshNodes), "k")},
		{"ledger_put", put, l.TableKey(string(rules.TableLedger), "k")},
		{"owner_claim", put, l.OwnerKey("a")},
		{"owner_end", del, l.OwnerKey("a")},
		{"stamp", put, l.StampKey("peers", "play")},
		{"mesh_node_stamp", put, l.MeshNodeStampKey("play")},
		{"owner_index", put, l.OwnerIndexKey("a", string(location.TablePeers), "k")},
		{"marker", put, l.MarkerKey(string(location.TablePeers))},
	}
	tests := []struct {
		name   string
		tables []location.Table
		wakes  []string
	}{
		{"every_table", nil, []string{"peer_put", "peer_delete", "mesh_node_put", "ledger_put", "owner_end"}},
		{"peers", []location.Table{location.TablePeers}, []string{"peer_put", "peer_delete", "owner_end"}},
		{"mesh_nodes", []location.Table{location.TableMeshNodes}, []string{"mesh_node_put", "owner_end"}},
		{"ledger_only", []location.Table{rules.TableLedger}, []string{"ledger_put"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			relevant := f.s.watchRelevance(tc.tables)
			woken := []string{}
			for _, e := range events {
				if relevant(&clientv3.Event{Type: e.typ, Kv: &mvccpb.KeyValue{Key: []byte(e.key)}}) {
					woken = append(woken, e.name)
				}
			}
			require.Equal(t, tc.wakes, woken)
		})
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

// gatedWatcher holds the first Watch call until release is closed, and
// reports the start revision of every call on started.
type gatedWatcher struct {
	clientv3.Watcher
	release chan struct{}
	started chan int64
	calls   int
}

// Watch implements clientv3.Watcher. Only the store's watch goroutine calls
// it, so calls needs no lock.
func (w *gatedWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	w.calls++
	w.started <- clientv3.OpGet(key, opts...).Rev()
	if w.calls == 1 {
		select {
		case <-w.release:
		case <-ctx.Done():
		}
	}
	return w.Watcher.Watch(ctx, key, opts...)
}

// A watch whose start revision was compacted away is started again past the
// compaction, with one notification for the changes it may have missed, and
// then reports changes as before.
func TestWatchChangesRestartsAfterCompaction(t *testing.T) {
	f := newFixture(t)
	gw := &gatedWatcher{Watcher: f.s.watcher, release: make(chan struct{}), started: make(chan int64, 4)}
	f.s.watcher = gw
	a := f.claim(t, "a")
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
	require.Greater(t, second, compacted, "resumed past the compaction")
	receive(t, ch, false) // the re-list notification
	require.Zero(t, len(ch), "one notification for the missed changes")

	storedIn(t)(f.s.UpdatePeer(t.Context(), peer("n2", "a"), location.IntentNewClaim))
	receive(t, ch, false)
	require.NoError(t, f.s.ExpireOwnerLease(t.Context(), a.OwnerID))
	receive(t, ch, false)
	require.Equal(t, 2, gw.calls, "no further restart")

	cancel()
	for range ch {
	}
}

// waitRevision waits for the next start revision a gatedWatcher reports.
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

// breakingWatcher breaks the first watch at the first response that carries
// an event on breakOn, without delivering it (as when a connection breaks
// after the server sent a change), and holds the second Watch call until
// release is closed. Every call reports its start revision on started.
type breakingWatcher struct {
	clientv3.Watcher
	breakOn string
	release chan struct{}
	started chan int64
	calls   int
}

// Watch implements clientv3.Watcher. Only the store's watch goroutine calls
// it, so calls needs no lock.
func (w *breakingWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	w.calls++
	w.started <- clientv3.OpGet(key, opts...).Rev()
	if w.calls > 1 {
		if w.calls == 2 {
			select {
			case <-w.release:
			case <-ctx.Done():
			}
		}
		return w.Watcher.Watch(ctx, key, opts...)
	}
	wctx, cancel := context.WithCancel(ctx)
	real := w.Watcher.Watch(wctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		defer func() {
			cancel()
			for range real {
			}
		}()
		for resp := range real {
			for _, ev := range resp.Events {
				if string(ev.Kv.Key) == w.breakOn {
					return
				}
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// A watch that breaks (not by compaction) resumes just after the last
// revision it delivered: the change lost with the break comes again, and
// the break itself sends nothing.
func TestWatchChangesResumesAfterABreak(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	first, lost := peer("n1", "a"), peer("n2", "a")
	bw := &breakingWatcher{Watcher: f.s.watcher, breakOn: f.s.tableKey(location.TablePeers, rules.PeerKey(lost.Key())),
		release: make(chan struct{}), started: make(chan int64, 4)}
	f.s.watcher = bw
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
	require.Equal(t, delivered+1, second, "resumed after the last delivered revision")
	require.Zero(t, len(ch), "the break itself notifies nothing")
	close(bw.release)
	receive(t, ch, false) // n2's change, delivered by the resumed watch

	storedIn(t)(f.s.UpdatePeer(t.Context(), peer("n3", "a"), location.IntentNewClaim))
	receive(t, ch, false)
	require.NoError(t, f.s.ExpireOwnerLease(t.Context(), a.OwnerID))
	receive(t, ch, false)
	require.Equal(t, 2, bw.calls, "no further restart")

	cancel()
	for range ch {
	}
}
