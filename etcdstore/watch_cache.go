package etcdstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Defaults of WatchCacheOptions.
const (
	// DefaultCacheMaxBytes bounds the stored bytes the watch cache holds
	// (a 1,000-node mesh, its peers, ledgers and owners is about 2 MB).
	DefaultCacheMaxBytes = 256 << 20
	// DefaultCacheMaxWait bounds a read's wait for the cache to catch up:
	// Kubernetes' consistent reads from its watch cache wait as long. A
	// process that falls behind (a change reaches every node at once)
	// catches up within it, where a shorter wait sends each of its reads
	// to etcd for the whole range just when etcd and the process are
	// busiest (docs/scale.md).
	DefaultCacheMaxWait = 3 * time.Second
)

// WatchCacheOptions configure the store's watch cache (docs/caching.md):
// the mesh-node descriptors with their capacity ledgers, the peer rows and
// the owner keys, kept in memory from one range read and a watch of each,
// which answer ListMeshNodes, ListPeers and ReadOwnerLiveness with one
// request (a linearizable read of the current revision) whatever the
// number of rows. The zero value is the cache on, with the defaults.
type WatchCacheOptions struct {
	// Disabled turns the cache off: those reads go to etcd.
	Disabled bool
	// MaxBytes bounds the stored bytes (keys and values) the cache holds;
	// 0 means DefaultCacheMaxBytes. A cache that would hold more turns
	// itself off (logged at Warn, CacheStats.Overflows), and reads go to
	// etcd from then on.
	MaxBytes int64
	// MaxWait bounds how long a read waits for the cache to catch up with
	// the revision it confirmed before it reads etcd instead; 0 means
	// DefaultCacheMaxWait. A read never waits for longer than half of the
	// time its context has left.
	MaxWait time.Duration
}

// A read that waits for the cache to catch up asks etcd again for the
// watches' progress when nothing arrived for progressRetry, then for twice
// as long each time, up to progressRetryMax: a long wait (MaxWait) sends
// a few requests, not one per progressRetry.
const (
	progressRetry    = 20 * time.Millisecond
	progressRetryMax = 320 * time.Millisecond
)

// watchCache is a store's watch cache.
type watchCache struct {
	s       *Store
	maxB    int64
	maxWait time.Duration

	// wg counts the cache's loaders.
	wg sync.WaitGroup

	mu sync.RWMutex
	// advanced is closed (and replaced) whenever a range moves on or the
	// cache's readiness changes.
	advanced chan struct{}
	// off: the cache turned itself off (MaxBytes).
	off bool
	// stalled: a read waited for progress in vain; reads go to etcd until
	// a range moves on.
	stalled     bool
	lastAdvance time.Time
	bytes       int64

	meshNodes, peers *cacheTable
	// owners maps the id of every owner key to its CreateRevision.
	owners map[string]int64
	// ownersStamp is the revision of the last change of owners (an owner
	// key created, recreated or deleted), or of its last reload: the stamp
	// of ReadOwnerLivenessSince.
	ownersStamp int64
	ownerBytes  int64
	ownersRange *cacheRange
	ranges      []*cacheRange

	// progressSent counts progress requests (so that concurrent waiters
	// share them).
	progressSent atomic.Int64
	stats        cacheCounters
}

// cacheCounters are the cache's monotonic counters (CacheStats).
type cacheCounters struct {
	hits, misses, fallbacks, waits, waitNanos, loads, relists, overflows atomic.Int64
}

// cacheRange is one watched key range of the cache, and the hub's
// consumer of it.
type cacheRange struct {
	c      *watchCache
	prefix string
	// table and part say where its keys go; table is nil for the owner
	// keys.
	table *cacheTable
	part  component
	sub   *rangeSub

	// Guarded by the cache's mu:
	// started: a read needed the range (start).
	started bool
	// loaded: the range was read and its changes are applied; false while
	// it is (re)read, when buffered holds what arrives meanwhile. reads
	// counts the reads started (only the latest one's result is applied).
	loaded        bool
	buffered      []*clientv3.Event
	bufferedBytes int64
	reads         int
	// listedAt is the revision of the last read of the range; through the
	// revision through which every change of it is applied.
	listedAt, through int64
	// healthy: its watch runs (false from a break to its return).
	healthy bool
}

// newWatchCache returns the cache of s (nothing runs until the first read).
func newWatchCache(s *Store, opts WatchCacheOptions) *watchCache {
	c := &watchCache{s: s, maxB: opts.MaxBytes, maxWait: opts.MaxWait, advanced: make(chan struct{}), owners: map[string]int64{}}
	if c.maxB <= 0 {
		c.maxB = DefaultCacheMaxBytes
	}
	if c.maxWait <= 0 {
		c.maxWait = DefaultCacheMaxWait
	}
	c.meshNodes = &cacheTable{table: location.TableMeshNodes, depth: 1, groups: map[string]*cacheGroup{}}
	c.peers = &cacheTable{table: location.TablePeers, depth: 2, groups: map[string]*cacheGroup{}}
	l := s.layout
	add := func(prefix string, t *cacheTable, part component) *cacheRange {
		// A range counts as healthy until its watch breaks.
		r := &cacheRange{c: c, prefix: prefix, table: t, part: part, healthy: true}
		r.sub = &rangeSub{consumer: r, puts: true}
		c.ranges = append(c.ranges, r)
		if t != nil {
			t.ranges = append(t.ranges, r)
		}
		return r
	}
	add(l.TablePrefix(string(location.TableMeshNodes)), c.meshNodes, componentRow)
	add(l.TablePrefix(string(rules.TableLedger)), c.meshNodes, componentLedger)
	add(l.TablePrefix(string(location.TablePeers)), c.peers, componentRow)
	c.ownersRange = add(l.OwnerPrefix(), nil, componentRow)
	return c
}

// table returns the cached table of t, or nil.
func (c *watchCache) table(t rules.Table) *cacheTable {
	switch t {
	case location.TableMeshNodes:
		return c.meshNodes
	case location.TablePeers:
		return c.peers
	}
	return nil
}

// start loads the given ranges in the background, those not started yet:
// each is subscribed to, then read. A range is started by the first read
// that needs it, so a process watches only what it reads (a node that
// never lists peers does not watch them).
func (c *watchCache) start(ranges []*cacheRange) {
	c.mu.Lock()
	var todo []*cacheRange
	reads := map[*cacheRange]int{}
	if !c.off && c.s.hub.ctx.Err() == nil {
		for _, r := range ranges {
			if !r.started {
				r.started = true
				r.reads++
				todo, reads[r] = append(todo, r), r.reads
			}
		}
	}
	c.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	c.wg.Go(func() {
		ctx := c.s.hub.ctx
		rev, err := retryRead(ctx, func() (int64, error) { return c.s.currentRevision(ctx) })
		if err != nil {
			return
		}
		for _, r := range todo {
			c.s.hub.subscribe(r.prefix, r.sub, rev)
		}
		for _, r := range todo {
			c.load(ctx, r, reads[r])
		}
	})
}

// close waits for the cache's loaders (the hub's end stops them).
func (c *watchCache) close() { c.wg.Wait() }

// retryRead runs read until it succeeds or ctx ends, waiting a growing
// backoff between failures (the store's Retrier already rides out
// transient errors; this outlasts the rest, such as a member that is
// down for longer).
func retryRead[R any](ctx context.Context, read func() (R, error)) (R, error) {
	backoff := watchBackoffMin
	for {
		r, err := read()
		if err == nil || ctx.Err() != nil {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, watchBackoffMax)
	}
}

// load reads range r and applies what arrived meanwhile (unless a later
// read of the range started: r.reads is no longer n); the range then
// serves reads again.
func (c *watchCache) load(ctx context.Context, r *cacheRange, n int) {
	type listing struct {
		kvs []*mvccpb.KeyValue
		rev int64
	}
	got, err := retryRead(ctx, func() (listing, error) {
		var l listing
		var err error
		l.rev, err = c.s.readRange(ctx, r.prefix, func(kvs []*mvccpb.KeyValue) { l.kvs = append(l.kvs, kvs...) })
		return l, err
	})
	if err != nil {
		return
	}
	c.stats.loads.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off || r.reads != n {
		return
	}
	if r.table != nil {
		before := c.tableBytes()
		after := r.table.reload(r.part, got.kvs, len(r.prefix), got.rev)
		c.bytes += after - before
	} else {
		clear(c.owners)
		c.bytes -= c.ownerBytes
		c.ownerBytes = 0
		for _, kv := range got.kvs {
			c.ownerChange(kv, false)
		}
		c.ownersStamp = max(c.ownersStamp, got.rev)
	}
	r.listedAt, r.through = got.rev, max(r.through, got.rev)
	for _, ev := range r.buffered {
		if ev.Kv.ModRevision > got.rev {
			c.apply(r, ev)
		}
	}
	r.buffered, r.bufferedBytes, r.loaded = nil, 0, true
	c.advance()
	c.checkSize()
}

// tableBytes is the stored bytes of the two tables. Called with mu held.
func (c *watchCache) tableBytes() int64 { return c.bytes - c.ownerBytes }

// apply applies one event of r. Called with mu held (Lock).
func (c *watchCache) apply(r *cacheRange, ev *clientv3.Event) {
	kv := ev.Kv
	if ev.Type == clientv3.EventTypeDelete {
		kv = nil
	}
	if r.table == nil {
		c.ownerChange(ev.Kv, ev.Type == clientv3.EventTypeDelete)
		return
	}
	key := string(ev.Kv.Key)
	if len(key) < len(r.prefix) {
		return
	}
	c.bytes += r.table.change(r.part, key[len(r.prefix):], kv, ev.Kv.ModRevision, true)
}

// ownerChange records an owner key put or deletion; one that changes the
// owners (not a rewrite of a key with the same CreateRevision) moves
// ownersStamp to its revision. Called with mu held.
func (c *watchCache) ownerChange(kv *mvccpb.KeyValue, deleted bool) {
	id, ok := c.s.layout.OwnerIDOfKey(string(kv.Key))
	if !ok {
		return
	}
	size := int64(len(kv.Key)) + 16
	gen, had := c.owners[id]
	switch {
	case deleted && had:
		delete(c.owners, id)
		c.ownerBytes -= size
		c.bytes -= size
		c.ownersStamp = max(c.ownersStamp, kv.ModRevision)
	case !deleted:
		c.owners[id] = kv.CreateRevision
		if !had {
			c.ownerBytes += size
			c.bytes += size
		}
		if !had || gen != kv.CreateRevision {
			c.ownersStamp = max(c.ownersStamp, kv.ModRevision)
		}
	}
}

// delivered implements rangeConsumer: the changes are applied (or
// buffered while the range is read).
func (r *cacheRange) delivered(evs []*clientv3.Event, through int64) {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return
	}
	if !r.loaded {
		r.buffered = append(r.buffered, evs...)
		for _, ev := range evs {
			r.bufferedBytes += int64(len(ev.Kv.Key) + len(ev.Kv.Value))
		}
		r.through = max(r.through, through)
		if c.bytes+r.bufferedBytes > c.maxB {
			c.turnOff("the changes buffered while a range is read exceed WatchCacheOptions.MaxBytes")
		}
		return
	}
	for _, ev := range evs {
		// The watch may deliver changes the read already had.
		if ev.Kv.ModRevision > r.listedAt {
			c.apply(r, ev)
		}
	}
	if through > r.through {
		r.through = through
		c.advance()
	}
	c.checkSize()
}

// compacted implements rangeConsumer: the range is read again.
func (r *cacheRange) compacted(rev int64) {
	c := r.c
	c.mu.Lock()
	if c.off {
		c.mu.Unlock()
		return
	}
	r.loaded, r.buffered, r.bufferedBytes, r.through = false, nil, 0, rev
	r.reads++
	n := r.reads
	c.advance()
	c.mu.Unlock()
	c.stats.relists.Add(1)
	c.wg.Go(func() { c.load(c.s.hub.ctx, r, n) })
}

// interrupted implements rangeConsumer.
func (r *cacheRange) interrupted(broken bool) {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	r.healthy = !broken
	c.advance()
}

// advance wakes the readers waiting for the cache. Called with mu held
// (Lock).
func (c *watchCache) advance() {
	close(c.advanced)
	c.advanced = make(chan struct{})
	c.stalled = false
	c.lastAdvance = time.Now()
}

// checkSize turns the cache off when it holds more than its bound. Called
// with mu held (Lock).
func (c *watchCache) checkSize() {
	if c.bytes > c.maxB {
		c.turnOff("the cached rows exceed WatchCacheOptions.MaxBytes")
	}
}

// turnOff drops the cache's state for good: reads go to etcd. The range
// watches end. Called with mu held (Lock).
func (c *watchCache) turnOff(why string) {
	c.off = true
	c.stats.overflows.Add(1)
	c.s.log.Warn("etcdstore: watch cache turned off; lists and liveness reads go to etcd (raise WatchCacheOptions.MaxBytes to keep it)",
		"reason", why, "bytes", c.bytes, "max_bytes", c.maxB)
	c.meshNodes.groups, c.peers.groups, c.owners = map[string]*cacheGroup{}, map[string]*cacheGroup{}, map[string]int64{}
	c.bytes, c.ownerBytes = 0, 0
	for _, r := range c.ranges {
		r.loaded, r.buffered, r.bufferedBytes = false, nil, 0
		// The hub never calls its consumers with its lock held, so this
		// cannot wait for the cache's.
		c.s.hub.unsubscribe(r.prefix, r.sub)
	}
	c.advance()
}

// readRange reads every key under prefix at one revision, batch by batch
// (fn gets each batch), through ScanRange, and returns the revision.
func (s *Store) readRange(ctx context.Context, prefix string, fn func([]*mvccpb.KeyValue)) (int64, error) {
	return ScanRange(ctx, s.kv, prefix, keys.PrefixEnd(prefix), ScanOptions{Batch: listBatch}, func(p ScanPage) (bool, error) {
		s.engine.NoteRevision(p.HeaderRevision)
		fn(p.KVs)
		return false, nil
	})
}
