package txn

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// DefaultCacheSize is the number of keys the engine remembers.
const DefaultCacheSize = 4096

// cache remembers the latest observation of recently seen keys, so that a
// steady-state write (a renew, a revision update) can start deciding without
// a read. A cached observation is only a suggestion: every decision based on
// it is verified by the guards of its commit (or, when it writes nothing, by
// a verifying transaction). Keys seen absent are kept too (their absence is
// guarded like any observation); a View never issues a generation from a
// remembered absence, though (View.Revision reads such a key again), so that
// a create's generation is based on a fresh read. Keys the engine deletes
// itself are forgotten rather than remembered absent, so that a large
// removal does not fill the cache with keys nobody will use.
//
// Every write of the engine reads the cache and stores into it, so
// concurrent callers would queue on one lock (and, with more goroutines
// than processors, park and wake each other): the keys are spread over
// shards by hash, each with its own lock and its own least-recently-used
// order, and a shard holds at most its share of the limit. Eviction is
// therefore least-recently-used within a shard, not across the cache.
type cache struct {
	disabled bool
	seed     maphash.Seed
	shards   []cacheShard
}

// cacheShard is one lock's share of the cache.
type cacheShard struct {
	mu    sync.Mutex
	limit int
	order *list.List // of string keys, most recent first
	items map[string]cacheItem
	// Padding keeps two shards' locks off one cache line.
	_ [64]byte
}

type cacheItem struct {
	obs  Observation
	elem *list.Element
}

// Cache shards: as many as keep at least minKeysPerShard keys each (so that
// a small cache stays one least-recently-used list), up to maxCacheShards.
const (
	maxCacheShards  = 32
	minKeysPerShard = 64
)

// newCache returns a cache holding up to limit keys; limit < 0 disables it.
func newCache(limit int) *cache {
	if limit < 0 {
		return &cache{disabled: true}
	}
	if limit == 0 {
		limit = DefaultCacheSize
	}
	n := 1
	for n < maxCacheShards && limit/(2*n) >= minKeysPerShard {
		n *= 2
	}
	c := &cache{seed: maphash.MakeSeed(), shards: make([]cacheShard, n)}
	for i := range c.shards {
		// The shards' limits add up to limit.
		c.shards[i] = cacheShard{limit: limit*(i+1)/n - limit*i/n, order: list.New(), items: map[string]cacheItem{}}
	}
	return c
}

// shard returns the shard of key.
func (c *cache) shard(key string) *cacheShard {
	if len(c.shards) == 1 {
		return &c.shards[0]
	}
	return &c.shards[maphash.String(c.seed, key)&uint64(len(c.shards)-1)]
}

// get returns the cached observation of key.
func (c *cache) get(key string) (Observation, bool) {
	if c.disabled {
		return Observation{}, false
	}
	return c.shard(key).get(key)
}

func (s *cacheShard) get(key string) (Observation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[key]
	if !ok {
		return Observation{}, false
	}
	s.order.MoveToFront(it.elem)
	return it.obs, true
}

// cacheViewKeys is the number of keys a view collects without allocating.
const cacheViewKeys = 8

// view fills v with the cached observations of keys and reports true, when
// the cache holds every one of them (absent keys it does not hold are
// assumed absent); otherwise it leaves v alone and reports false. The
// observations are remembered (View.remember): this operation did not
// read them. Each key is looked up under its own shard's lock: the
// observations may be of different revisions, as they may be anyway (a
// cached View is not consistent).
func (c *cache) view(v *View, keys, absent []string) bool {
	if c.disabled {
		return len(keys) == 0 && c.assumeAbsent(v, absent)
	}
	var buf [cacheViewKeys]Observation
	found := buf[:0]
	for _, k := range keys {
		o, ok := c.shard(k).get(k) // the keys before a miss count as used
		if !ok {
			return false
		}
		found = append(found, o)
	}
	for _, o := range found {
		v.remember(o)
	}
	for _, k := range absent {
		o, ok := c.shard(k).get(k)
		if !ok {
			o = Observation{Key: k}
		}
		v.remember(o)
	}
	return true
}

// assumeAbsent remembers every key of absent as absent (a disabled
// cache's view).
func (*cache) assumeAbsent(v *View, absent []string) bool {
	for _, k := range absent {
		v.remember(Observation{Key: k})
	}
	return true
}

// store records an observation (present or absent). An older observation
// never replaces a newer one.
func (c *cache) store(o Observation) {
	if c.disabled {
		return
	}
	s := c.shard(o.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[o.Key]
	if ok && it.obs.Revision > o.Revision {
		return
	}
	if ok {
		it.obs = o
		s.items[o.Key] = it
		s.order.MoveToFront(it.elem)
		return
	}
	s.items[o.Key] = cacheItem{obs: o, elem: s.order.PushFront(o.Key)}
	for s.order.Len() > s.limit {
		last := s.order.Back()
		s.order.Remove(last)
		delete(s.items, last.Value.(string))
	}
}

// forget drops key.
func (c *cache) forget(key string) {
	if c.disabled {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := s.items[key]; ok {
		s.order.Remove(it.elem)
		delete(s.items, key)
	}
}

// len returns the number of cached keys.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.items)
		s.mu.Unlock()
	}
	return n
}
