package etcdstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/zlink-systems/zlink-etcd/keys"
)

// The watch hub: every watch of a store shares one etcd watch per key
// range (a table's prefix, or the owner keys), opened when the first
// consumer needs the range and closed when the last one leaves. A range's
// etcd watch filters out puts on the server (WithFilterPut) while every
// consumer of the range needs only deletions (owner ends, for
// WatchChanges). All of a hub's watches share one gRPC stream of their own
// (hubStream), so that a progress request (RequestProgress) is answered as
// soon as they have caught up, whatever other watches of the client do.
//
// Which ranges filter puts out is fixed when the store is made: the owner
// keys do while the store's cache is off (then WatchChanges, which needs
// only owner ends, is their only consumer); nothing else does. So a
// range's filter never changes under a consumer.
//
// A broken watch resumes from the last revision it delivered (after a
// short backoff; its consumers are told, so that the cache stops answering
// until it is back); a watch whose history was compacted starts again from
// the current revision and tells its consumers that changes may have been
// missed (the cache reads the range again; WatchChanges notifies).

// Restart delays of a broken watch.
const (
	watchBackoffMin = 50 * time.Millisecond
	watchBackoffMax = 2 * time.Second
)

// rangeConsumer is one consumer of a range's watch. Its methods are called
// from the range's goroutine, one at a time and in order, and must not
// block.
type rangeConsumer interface {
	// delivered: evs (the range's changes, puts left out unless the
	// consumer wants them) were received, and every change of the range
	// through revision through has now been delivered (a progress
	// notification has no events).
	delivered(evs []*clientv3.Event, through int64)
	// compacted: the history after the last delivered revision was
	// compacted; the watch continues after revision rev, and changes before
	// it may have been missed.
	compacted(rev int64)
	// interrupted: the watch broke and resumes (nothing is missed); true
	// again once it is back (its first response).
	interrupted(broken bool)
}

// rangeSub is one consumer's subscription to one range.
type rangeSub struct {
	consumer rangeConsumer
	// puts: the consumer wants puts too, not only deletions.
	puts bool
}

// rangeWatch is one range's etcd watch and its consumers.
type rangeWatch struct {
	prefix string
	// puts says whether the etcd watch delivers puts (fixed).
	puts bool
	// subs are the consumers, and through the revision through which the
	// range has delivered every change to them (both guarded by the hub's
	// mu).
	subs    map[*rangeSub]struct{}
	through int64
	// stop ends the range's goroutine.
	stop context.CancelFunc
}

// watchHub holds a store's range watches.
type watchHub struct {
	s *Store
	// ctx ends when the store is closed or its client is.
	ctx    context.Context
	cancel context.CancelFunc
	// stream is the metadata that puts the hub's watches on a gRPC stream
	// of their own.
	stream string
	// deletesOnly is the prefix whose watch filters puts out ("" for none).
	deletesOnly string

	mu     sync.Mutex
	ranges map[string]*rangeWatch
	wg     sync.WaitGroup

	stats hubCounters
}

// hubCounters are the hub's monotonic counters (WatchStats).
type hubCounters struct {
	opened, resumes, compactions, events, eventBytes, progress, progressRequests atomic.Int64
}

// newWatchHub returns the hub of s, alive until the client closes or close
// is called. The watch of deletesOnly ("" for none) filters puts out.
func newWatchHub(s *Store, deletesOnly string) *watchHub {
	ctx, cancel := context.WithCancel(s.client.Ctx())
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &watchHub{s: s, ctx: ctx, cancel: cancel, stream: hex.EncodeToString(id[:]), deletesOnly: deletesOnly,
		ranges: map[string]*rangeWatch{}}
}

// hubStream returns ctx with the hub's stream metadata and etcd's
// require-leader flag (a member that loses its leader cancels the watch,
// which then resumes on a member that has one).
func (h *watchHub) hubStream(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx), "zlink-watch-hub", h.stream)
}

// subscribe adds sub to the range of prefix and returns the revision
// through which the range has delivered its changes: sub is delivered
// every later one. A range that is not watched yet starts after revision
// start (a revision the caller read). A consumer that wants puts must not
// subscribe to the deletes-only range (the cache, the only such consumer,
// exists only when that range is not deletes-only).
func (h *watchHub) subscribe(prefix string, sub *rangeSub, start int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	rw, ok := h.ranges[prefix]
	if !ok {
		ctx, stop := context.WithCancel(h.ctx)
		rw = &rangeWatch{prefix: prefix, puts: prefix != h.deletesOnly, subs: map[*rangeSub]struct{}{}, through: start, stop: stop}
		h.ranges[prefix] = rw
		h.wg.Add(1)
		go h.run(ctx, rw)
	}
	rw.subs[sub] = struct{}{}
	return rw.through
}

// unsubscribe removes sub from the range of prefix; the last consumer's
// leaving stops the range's watch.
func (h *watchHub) unsubscribe(prefix string, sub *rangeSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rw, ok := h.ranges[prefix]
	if !ok {
		return
	}
	delete(rw.subs, sub)
	if len(rw.subs) == 0 {
		rw.stop()
		delete(h.ranges, prefix)
	}
}

// consumers returns the range's subscriptions now, after moving its
// delivered revision to through (when greater): a consumer that subscribes
// later is delivered only what comes after.
func (h *watchHub) consumers(rw *rangeWatch, through int64) []*rangeSub {
	h.mu.Lock()
	defer h.mu.Unlock()
	rw.through = max(rw.through, through)
	out := make([]*rangeSub, 0, len(rw.subs))
	for sub := range rw.subs {
		out = append(out, sub)
	}
	return out
}

// watching reports whether the range of prefix is watched (tests).
func (h *watchHub) watching(prefix string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.ranges[prefix]
	return ok
}

// openWatches returns the number of ranges watched and the lowest revision
// through which one of them has delivered its changes.
func (h *watchHub) openWatches() (n int, oldest int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rw := range h.ranges {
		if oldest == 0 || rw.through < oldest {
			oldest = rw.through
		}
	}
	return len(h.ranges), oldest
}

// close stops every range watch and waits for their goroutines.
func (h *watchHub) close() {
	h.cancel()
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.ranges)
}

// requestProgress asks etcd to tell every watch of the hub's stream the
// revision it has caught up to (a progress notification, answered once
// they all have).
func (h *watchHub) requestProgress() {
	h.stats.progressRequests.Add(1)
	_ = h.s.watcher.RequestProgress(h.hubStream(h.ctx))
}

// run serves one range until ctx ends: it follows the etcd watch, opens it
// again after a break, and starts over from the current revision after a
// compaction.
func (h *watchHub) run(ctx context.Context, rw *rangeWatch) {
	defer h.wg.Done()
	backoff := watchBackoffMin
	resumed := false
	for ctx.Err() == nil {
		end := h.follow(ctx, rw, resumed, func() { backoff = watchBackoffMin })
		if ctx.Err() != nil {
			return
		}
		resumed = true
		h.stats.resumes.Add(1)
		for _, sub := range h.consumers(rw, 0) {
			sub.consumer.interrupted(true)
		}
		h.s.log.Debug("etcdstore: watch broke; resuming", "prefix", rw.prefix, "compacted", end == watchCompacted)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, watchBackoffMax)
		if end == watchCompacted {
			// The history after the last delivered revision is gone: start
			// over from the current revision. If it cannot be read, the
			// next watch meets the compaction again and this is retried.
			rev, err := h.s.currentRevision(ctx)
			if err != nil {
				continue
			}
			h.stats.compactions.Add(1)
			for _, sub := range h.consumers(rw, rev) {
				sub.consumer.compacted(rev)
			}
		}
	}
}

// watchEnd says why one etcd watch of a range ended.
type watchEnd int

const (
	watchBroken watchEnd = iota
	watchCompacted
)

// follow runs one etcd watch of the range from the last delivered revision
// (whose changes it does not deliver again) until it ends, delivering the
// later changes to the consumers. healthy is
// called for every response. When resumed, the first response tells the
// consumers that the watch is back.
func (h *watchHub) follow(ctx context.Context, rw *rangeWatch, resumed bool, healthy func()) watchEnd {
	h.mu.Lock()
	from, puts := rw.through, rw.puts
	h.mu.Unlock()
	wctx, cancel := context.WithCancel(h.hubStream(ctx))
	defer cancel()
	// The watch starts at the last delivered revision, not after it, and
	// drops that revision's changes (delivered already): etcd answers a
	// progress request only when no watch of the stream starts after its
	// current revision, and from+1 is after it whenever from is the
	// current revision (a range just read, or a quiet cluster). Such a
	// watch held back every progress notification of the hub's stream
	// until the next write anywhere, and the cache's reads of the ranges
	// behind with them.
	delivered := max(from, 1)
	opts := []clientv3.OpOption{clientv3.WithRange(keys.PrefixEnd(rw.prefix)), clientv3.WithRev(delivered),
		clientv3.WithProgressNotify(), clientv3.WithCreatedNotify()}
	if !puts {
		opts = append(opts, clientv3.WithFilterPut())
	}
	h.stats.opened.Add(1)
	wch := h.s.watcher.Watch(wctx, rw.prefix, opts...)
	for resp := range wch {
		if resp.CompactRevision != 0 {
			return watchCompacted
		}
		if resp.Canceled || resp.Err() != nil {
			return watchBroken
		}
		healthy()
		evs := resp.Events
		for len(evs) > 0 && evs[0].Kv.ModRevision <= delivered {
			evs = evs[1:] // events come in revision order
		}
		through := from
		for _, ev := range evs {
			through = max(through, ev.Kv.ModRevision)
			h.stats.eventBytes.Add(int64(len(ev.Kv.Key) + len(ev.Kv.Value)))
		}
		h.stats.events.Add(int64(len(evs)))
		if resp.IsProgressNotify() {
			h.stats.progress.Add(1)
			through = max(through, resp.Header.Revision)
		}
		from = through
		subs := h.consumers(rw, through)
		if resumed {
			resumed = false
			for _, sub := range subs {
				sub.consumer.interrupted(false)
			}
		}
		if resp.Created {
			continue
		}
		var deletes []*clientv3.Event
		for _, sub := range subs {
			subEvs := evs
			if !sub.puts && puts {
				if deletes == nil {
					deletes = onlyDeletes(evs)
				}
				subEvs = deletes
			}
			sub.consumer.delivered(subEvs, through)
		}
	}
	return watchBroken
}

// onlyDeletes returns the deletions among evs (never nil).
func onlyDeletes(evs []*clientv3.Event) []*clientv3.Event {
	out := make([]*clientv3.Event, 0, len(evs))
	for _, ev := range evs {
		if ev.Type == clientv3.EventTypeDelete {
			out = append(out, ev)
		}
	}
	return out
}
