package etcdstore

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Watch implements location.ChangeWatcher (storecore.Backend) on the
// store's watch hub (watch_hub.go): the ranges of the given tables (the
// location tables when none is given) and, when one of them is a location
// table (rules.LocationTables: its rows count as live only while their
// owner holds a lease), the deletions of owner keys (revoke, release or
// expiry), since the liveness of their rows changed. Each range is one
// etcd watch shared with the store's other consumers of it (other
// WatchChanges calls, the cache). A value is sent soon after a change of
// one of them that happens after Watch returns; notifications the receiver
// has not taken yet coalesce into one.
//
// A broken range watch resumes from the last revision it delivered, so no
// change is missed and nothing is sent for the break itself. When the
// history it would resume from has been compacted, changes may have been
// missed: one notification is sent (the receiver's cue to read everything
// again). The channel is closed when ctx is done, or the store closed.
func (b backend) Watch(ctx context.Context, tables []location.Table) (<-chan struct{}, error) {
	s := b.s
	rev, err := s.currentRevision(ctx)
	if err != nil {
		return nil, txn.Unavailable("read the current revision", err)
	}
	w := &changeNotifier{ch: make(chan struct{}, 1)}
	ranges := s.watchRanges(tables)
	subs := make([]*rangeSub, len(ranges))
	for i, prefix := range ranges {
		subs[i] = &rangeSub{consumer: w, puts: prefix != s.layout.OwnerPrefix()}
		s.hub.subscribe(prefix, subs[i], rev)
	}
	var once sync.Once
	end := func() {
		once.Do(func() {
			for i, prefix := range ranges {
				s.hub.unsubscribe(prefix, subs[i])
			}
			w.close()
		})
	}
	stopOnClose := context.AfterFunc(s.hub.ctx, end)
	context.AfterFunc(ctx, func() {
		stopOnClose()
		end()
	})
	return w.ch, nil
}

// watchRanges returns the key prefixes a WatchChanges of tables watches:
// each table's (the location tables' when tables is empty), and the owner
// keys' when one of them is a location table (only their deletions reach
// the watcher).
func (s *Store) watchRanges(tables []location.Table) []string {
	if len(tables) == 0 {
		tables = rules.LocationTables()
	}
	var out []string
	seen := map[location.Table]bool{}
	ownerEnds := false
	for _, t := range tables {
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, s.layout.TablePrefix(string(t)))
	}
	for _, t := range rules.LocationTables() {
		ownerEnds = ownerEnds || seen[t]
	}
	if ownerEnds {
		out = append(out, s.layout.OwnerPrefix())
	}
	return out
}

// changeNotifier is one WatchChanges subscription: every delivery with
// events (the deletions only, on the owner keys) and every compaction
// sends a notification; a send never blocks.
type changeNotifier struct {
	mu     sync.Mutex
	ch     chan struct{}
	closed bool
}

func (w *changeNotifier) delivered(evs []*clientv3.Event, _ int64) {
	if len(evs) > 0 {
		w.notify()
	}
}

func (w *changeNotifier) compacted(int64) { w.notify() }

func (w *changeNotifier) interrupted(bool) {}

// notify sends a notification unless one is pending or the channel is
// closed.
func (w *changeNotifier) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	select {
	case w.ch <- struct{}{}:
	default: // a notification is already pending
	}
}

// close closes the channel once.
func (w *changeNotifier) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}

// currentRevision returns the store's latest revision: one linearizable
// read of a single key (the root key itself, which never exists) that
// returns no value, ridden through elections by the store's Retrier.
func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	resp, err := s.kv.Get(ctx, s.layout.Root(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	s.engine.NoteRevision(resp.Header.Revision)
	return resp.Header.Revision, nil
}
