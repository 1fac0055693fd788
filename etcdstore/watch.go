package etcdstore

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Restart delays of a broken change watch.
const (
	watchBackoffMin = 50 * time.Millisecond
	watchBackoffMax = 2 * time.Second
)

// WatchChanges implements location.ChangeWatcher with an etcd watch on the
// store's root prefix, started just after the current revision: a value is
// sent soon after a row of one of the given tables (every table when none is
// given) changes; notifications the receiver has not taken yet coalesce into
// one. When the watch breaks (compaction, lost leader, closed stream) it is
// started again at the latest revision and a notification is sent, since
// changes may have been missed. The channel is closed when ctx is done; the
// goroutine serving it ends with it.
func (s *Store) WatchChanges(ctx context.Context, tables ...location.Table) (<-chan struct{}, error) {
	const op = "WatchChanges"
	if err := checkContext(ctx, op); err != nil {
		return nil, err
	}
	watched := map[string]bool{}
	for _, t := range tables {
		watched[string(t)] = true
	}
	rev, err := s.currentRevision(ctx)
	if err != nil {
		return nil, txn.Unavailable("etcdstore: "+op, err)
	}
	out := make(chan struct{}, 1)
	notify := func() {
		select {
		case out <- struct{}{}:
		default: // a notification is already pending
		}
	}
	relevant := func(key []byte) bool {
		table, _, ok := s.layout.SplitTableKey(string(key))
		return ok && (len(watched) == 0 || watched[table])
	}
	go func() {
		defer close(out)
		backoff := watchBackoffMin
		for ctx.Err() == nil {
			wch := s.watcher.Watch(clientv3.WithRequireLeader(ctx), s.layout.Root(),
				clientv3.WithRange(s.layout.RootEnd()), clientv3.WithRev(rev+1))
			for resp := range wch {
				if resp.Canceled || resp.Err() != nil {
					break
				}
				backoff = watchBackoffMin
				for _, ev := range resp.Events {
					rev = max(rev, ev.Kv.ModRevision)
					if relevant(ev.Kv.Key) {
						notify()
					}
				}
				rev = max(rev, resp.Header.Revision)
			}
			if ctx.Err() != nil {
				return
			}
			// The watch broke: changes may have been missed.
			s.log.Debug("etcdstore: change watch restarted", "revision", rev)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, watchBackoffMax)
			if r, err := s.currentRevision(ctx); err == nil {
				rev = r
			}
			notify()
		}
	}()
	return out, nil
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
