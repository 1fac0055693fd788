package etcdstore

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/observe/etcdstats"
)

// WatchStats returns the counters of the store's watch hub (watch_hub.go):
// every etcd watch the store keeps, one per key range, shared by
// WatchChanges and the watch cache. CompactionRelists counts the watches
// whose history was compacted (their consumers read everything again);
// Watchers is the number of ranges watched now.
func (s *Store) WatchStats() etcdstats.Watch {
	h := &s.hub.stats
	watchers, oldest := s.hub.openWatches()
	out := etcdstats.Watch{
		Watchers: int64(watchers), Opened: h.opened.Load(), Resumes: h.resumes.Load(), CompactionRelists: h.compactions.Load(),
		Events: h.events.Load(), EventBytes: h.eventBytes.Load(),
		ProgressNotifications: h.progress.Load(), ProgressRequests: h.progressRequests.Load(),
	}
	if watchers > 0 && oldest > 0 {
		out.LagRevisions = max(0, s.engine.LastRevision()-oldest)
	}
	return out
}

// CacheStats returns the counters of the store's watch cache
// (docs/caching.md; the zero value, with Enabled false, when the cache is
// disabled). Misses are the reads sent to etcd: those it could not answer
// at once (not loaded, a watch broken, a token's revision no longer kept)
// and the Fallbacks, which waited for it to catch up in vain
// (WatchCacheOptions.MaxWait). Entries are the mesh-node, peer and owner
// keys held; the cache mirrors whole ranges, so it evicts nothing
// (Evictions stays 0): above WatchCacheOptions.MaxBytes it turns itself
// off (Overflows).
func (s *Store) CacheStats() etcdstats.Cache {
	c := s.cache
	if c == nil {
		return etcdstats.Cache{}
	}
	st := &c.stats
	out := etcdstats.Cache{
		Hits: st.hits.Load(), Misses: st.misses.Load() + st.fallbacks.Load(), Fallbacks: st.fallbacks.Load(), Waits: st.waits.Load(),
		WaitTime: time.Duration(st.waitNanos.Load()), Loads: st.loads.Load(), Relists: st.relists.Load(), Overflows: st.overflows.Load(),
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out.Enabled = !c.off
	var started []*cacheRange
	for _, r := range c.ranges {
		if r.started {
			started = append(started, r)
		}
	}
	ready := len(started) > 0
	if ready {
		ready, _ = c.readiness(started)
	}
	out.Ready = ready
	out.Bytes = c.bytes
	out.Entries = int64(len(c.owners))
	for _, t := range []*cacheTable{c.meshNodes, c.peers} {
		for _, g := range t.groups {
			for _, e := range g.rows {
				if e.row != nil || e.err != nil {
					out.Entries++
				}
			}
		}
	}
	if ready {
		out.Revision = c.through(started)
		out.Lag = max(0, s.engine.LastRevision()-out.Revision)
	}
	if !c.lastAdvance.IsZero() {
		out.SinceProgress = time.Since(c.lastAdvance)
	}
	return out
}
