package etcdstore

import "time"

// WatchStats are the counters of the store's watch hub (watch_hub.go):
// every etcd watch the store keeps, shared by WatchChanges and the watch
// cache. Counters are monotonic since the store was made; Watches is a
// gauge.
type WatchStats struct {
	// Watches is the number of key ranges watched now (one etcd watch
	// each).
	Watches int
	// Opened counts etcd watches opened, resumed ones included; Resumes
	// the watches opened again after a break; Compactions the watches whose
	// history was compacted (their consumers were told to read everything
	// again).
	Opened, Resumes, Compactions int64
	// Events and EventBytes count the changes etcd delivered (every
	// consumer of a range shares them) and their keys' and values' bytes.
	Events, EventBytes int64
	// ProgressNotifications counts the progress notifications received;
	// ProgressRequests the requests for one (consistent cache reads).
	ProgressNotifications, ProgressRequests int64
}

// WatchStats returns the counters of the store's watches.
func (s *Store) WatchStats() WatchStats {
	h := &s.hub.stats
	return WatchStats{
		Watches: s.hub.openWatches(), Opened: h.opened.Load(), Resumes: h.resumes.Load(), Compactions: h.compactions.Load(),
		Events: h.events.Load(), EventBytes: h.eventBytes.Load(),
		ProgressNotifications: h.progress.Load(), ProgressRequests: h.progressRequests.Load(),
	}
}

// CacheStats are the counters and gauges of the store's watch cache
// (docs/caching.md). Counters are monotonic since the store was made.
type CacheStats struct {
	// Enabled: the cache is configured on and has not turned itself off.
	// Ready: every range a read has needed so far (at least one) is loaded
	// and watched, and answers reads.
	Enabled, Ready bool
	// Bytes is the stored bytes (keys and values) it holds; Rows the
	// mesh-node, peer and owner keys.
	Bytes int64
	Rows  int
	// Revision is the revision through which every cached range has applied
	// its changes; Lag the store's latest revision seen by this process
	// minus Revision (0 when not ready); SinceProgress the time since a
	// range last moved on (0 before the first).
	Revision, Lag int64
	SinceProgress time.Duration
	// Hits counts reads answered from the cache; Misses the reads it could
	// not answer at once (not loaded, a watch broken, a token's revision no
	// longer kept); Fallbacks the reads that waited for it to catch up in
	// vain (WatchCacheOptions.MaxWait). Misses and fallbacks read etcd.
	Hits, Misses, Fallbacks int64
	// Waits counts reads that waited for the cache to catch up with the
	// revision they confirmed, and WaitTime their total wait.
	Waits    int64
	WaitTime time.Duration
	// Loads counts the range reads that (re)filled the cache, Relists those
	// after a compaction, Overflows the times it turned itself off
	// (WatchCacheOptions.MaxBytes).
	Loads, Relists, Overflows int64
}

// CacheStats returns the watch cache's counters (the zero value, with
// Enabled false, when the cache is disabled).
func (s *Store) CacheStats() CacheStats {
	c := s.cache
	if c == nil {
		return CacheStats{}
	}
	st := &c.stats
	out := CacheStats{
		Hits: st.hits.Load(), Misses: st.misses.Load(), Fallbacks: st.fallbacks.Load(), Waits: st.waits.Load(),
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
	out.Rows = len(c.owners)
	for _, t := range []*cacheTable{c.meshNodes, c.peers} {
		for _, g := range t.groups {
			for _, e := range g.rows {
				if e.row != nil || e.err != nil {
					out.Rows++
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
