package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// changeWatcher is one WatchChanges subscription.
type changeWatcher struct {
	// tables are the watched tables; nil watches every table.
	tables map[location.Table]bool
	// ch has room for one pending notification, so that a burst of changes
	// coalesces into one.
	ch chan struct{}
}

// Watch implements location.ChangeWatcher for storecore.Backend: after
// every applied decision that wrote or deleted a row of one of the given
// tables (every table when none is given), and after an owner lease was
// released or expired through ExpireOwnerLease, a notification is sent on
// the returned channel; notifications the receiver has not taken yet
// coalesce into one. The channel is closed when ctx is done. No goroutine
// runs while ctx is live.
func (b backend) Watch(ctx context.Context, tables []location.Table) (<-chan struct{}, error) {
	s := b.s
	w := &changeWatcher{ch: make(chan struct{}, 1)}
	if len(tables) > 0 {
		w.tables = make(map[location.Table]bool, len(tables))
		for _, t := range tables {
			w.tables[t] = true
		}
	}
	s.mu.Lock()
	if s.watchers == nil {
		s.watchers = map[*changeWatcher]struct{}{}
	}
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.watchers, w)
		close(w.ch)
	})
	return w.ch, nil
}

// notifyWatchers signals every watcher of a table the plan touched. Called
// by apply with s.mu held, so a watcher's channel is never closed while a
// notification is sent on it.
func (s *Store) notifyWatchers(p *rules.Plan) {
	if len(s.watchers) == 0 || len(p.Writes) == 0 {
		return
	}
	touched := make(map[location.Table]bool, len(p.Writes))
	for _, w := range p.Writes {
		touched[w.Table] = true
	}
	s.signalWatchers(touched)
}

// notifyLeaseEnded signals every watcher of a location table: an owner lease
// ended (released, or expired through the test hook), so the liveness of the
// owner's rows changed. Called with s.mu held.
func (s *Store) notifyLeaseEnded() {
	touched := make(map[location.Table]bool)
	for _, t := range rules.LocationTables() {
		touched[t] = true
	}
	s.signalWatchers(touched)
}

// signalWatchers signals every watcher of a touched table. Called with s.mu
// held.
func (s *Store) signalWatchers(touched map[location.Table]bool) {
	for w := range s.watchers {
		if !w.watches(touched) {
			continue
		}
		select {
		case w.ch <- struct{}{}:
		default: // a notification is already pending
		}
	}
}

// watches reports whether w watches any of the touched tables.
func (w *changeWatcher) watches(touched map[location.Table]bool) bool {
	if w.tables == nil {
		return true
	}
	for t := range touched {
		if w.tables[t] {
			return true
		}
	}
	return false
}
