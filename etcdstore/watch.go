package etcdstore

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Restart delays of a broken change watch.
const (
	watchBackoffMin = 50 * time.Millisecond
	watchBackoffMax = 2 * time.Second
)

// Watch implements location.ChangeWatcher (storecore.Backend) with an etcd
// watch on the store's root prefix, started just after the current revision: a value is
// sent soon after a row of one of the given tables (every table when none is
// given) changes, and soon after an owner lease ends (its owner key is
// deleted: revoke, release or expiry) when one of the tables is a location
// table (rules.LocationTables: its rows count as live only while their owner
// holds a lease), since the liveness of their rows changed;
// notifications the receiver has not taken yet coalesce into one.
//
// When the watch breaks (lost leader, closed stream), it resumes after a
// short backoff from the last revision it saw (the last event's, or a
// progress notification's), so no change is missed and nothing is sent for
// the break itself. When the history it would resume from has been
// compacted, changes may have been missed: it sends one notification (the
// receiver's cue to read everything again) and continues from the current
// revision. The channel is closed when ctx is done; the goroutine serving it
// ends with it.
func (b backend) Watch(ctx context.Context, tables []location.Table) (<-chan struct{}, error) {
	s := b.s
	relevant := s.watchRelevance(tables)
	rev, err := s.currentRevision(ctx)
	if err != nil {
		return nil, txn.Unavailable("read the current revision", err)
	}
	out := make(chan struct{}, 1)
	notify := func() {
		select {
		case out <- struct{}{}:
		default: // a notification is already pending
		}
	}
	go func() {
		defer close(out)
		backoff := watchBackoffMin
		for ctx.Err() == nil {
			var compacted bool
			rev, compacted = s.watchFrom(ctx, rev, relevant, notify, func() { backoff = watchBackoffMin })
			if ctx.Err() != nil {
				return
			}
			s.log.Debug("etcdstore: change watch broke; resuming", "revision", rev, "compacted", compacted)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, watchBackoffMax)
			if compacted {
				// The history after rev is gone: start over from the current
				// revision and let the receiver read everything again. If the
				// current revision cannot be read, the next watch meets the
				// compaction again and this is retried.
				if r, err := s.currentRevision(ctx); err == nil {
					rev = r
					notify()
				}
			}
		}
	}()
	return out, nil
}

// watchFrom runs one etcd watch of the store's root from revision rev + 1
// until it breaks, notifying for relevant events (healthy is called for
// every response that carries them). It returns the last revision through
// which every change was delivered: the last event's revision or a progress
// notification's (sent only to a watch that has caught up), never a
// response header's (while a watch catches up on history, its header
// carries the store's current revision, ahead of the events delivered so
// far), and whether the watch ended because that history was compacted.
func (s *Store) watchFrom(ctx context.Context, rev int64, relevant func(*clientv3.Event) bool, notify, healthy func()) (int64, bool) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := s.watcher.Watch(wctx, s.layout.Root(), clientv3.WithRange(s.layout.RootEnd()),
		clientv3.WithRev(rev+1), clientv3.WithProgressNotify())
	for resp := range wch {
		if resp.CompactRevision != 0 {
			return rev, true
		}
		if resp.Canceled || resp.Err() != nil {
			return rev, false
		}
		healthy()
		for _, ev := range resp.Events {
			rev = max(rev, ev.Kv.ModRevision)
			if relevant(ev) {
				notify()
			}
		}
		if resp.IsProgressNotify() {
			rev = max(rev, resp.Header.Revision)
		}
	}
	return rev, false
}

// watchRelevance returns the test WatchChanges applies to each event: a
// change of a row of one of tables (of any table when tables is empty), or
// the deletion of an owner key when one of tables is a location table (or
// tables is empty). Other keys (stamps, the owner index, markers) never count.
func (s *Store) watchRelevance(tables []location.Table) func(ev *clientv3.Event) bool {
	watched := map[string]bool{}
	for _, t := range tables {
		watched[string(t)] = true
	}
	ownerEnds := len(watched) == 0
	for _, t := range rules.LocationTables() {
		ownerEnds = ownerEnds || watched[string(t)]
	}
	return func(ev *clientv3.Event) bool {
		if table, _, ok := s.layout.SplitTableKey(string(ev.Kv.Key)); ok {
			return len(watched) == 0 || watched[table]
		}
		if _, ok := s.layout.OwnerIDOfKey(string(ev.Kv.Key)); ok {
			return ownerEnds && ev.Type == clientv3.EventTypeDelete
		}
		return false
	}
}

// currentRevision returns the store's latest revision.
func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	resp, err := s.kv.Get(ctx, s.layout.Root(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	s.engine.NoteRevision(resp.Header.Revision)
	return resp.Header.Revision, nil
}
