package txn

import (
	"container/list"
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
type cache struct {
	mu    sync.Mutex
	limit int
	order *list.List // of string keys, most recent first
	items map[string]cacheItem
}

type cacheItem struct {
	obs  Observation
	elem *list.Element
}

// newCache returns a cache holding up to limit keys; limit < 0 disables it.
func newCache(limit int) *cache {
	if limit == 0 {
		limit = DefaultCacheSize
	}
	return &cache{limit: limit, order: list.New(), items: map[string]cacheItem{}}
}

// get returns the cached observation of key.
func (c *cache) get(key string) (Observation, bool) {
	if c.limit < 0 {
		return Observation{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	if !ok {
		return Observation{}, false
	}
	c.order.MoveToFront(it.elem)
	return it.obs, true
}

// view fills v with the cached observations of keys and reports true, when
// the cache holds every one of them (absent keys it does not hold are
// assumed absent); otherwise it leaves v alone and reports false. The
// observations are remembered (View.remember): this operation did not
// read them.
func (c *cache) view(v *View, keys, absent []string) bool {
	if c.limit < 0 {
		return len(keys) == 0 && c.assumeAbsent(v, absent)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		it, ok := c.items[k]
		if !ok {
			return false
		}
		c.order.MoveToFront(it.elem) // as get would: the keys before a miss count as used
	}
	for _, k := range keys {
		v.remember(c.items[k].obs)
	}
	for _, k := range absent {
		it, ok := c.items[k]
		if !ok {
			v.remember(Observation{Key: k})
			continue
		}
		c.order.MoveToFront(it.elem)
		v.remember(it.obs)
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
	if c.limit < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[o.Key]
	if ok && it.obs.Revision > o.Revision {
		return
	}
	if ok {
		it.obs = o
		c.items[o.Key] = it
		c.order.MoveToFront(it.elem)
		return
	}
	c.items[o.Key] = cacheItem{obs: o, elem: c.order.PushFront(o.Key)}
	for c.order.Len() > c.limit {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(string))
	}
}

// forget drops key.
func (c *cache) forget(key string) {
	if c.limit < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.items[key]; ok {
		c.order.Remove(it.elem)
		delete(c.items, key)
	}
}

// len returns the number of cached keys.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
