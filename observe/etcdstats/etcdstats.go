// Package etcdstats declares the counters an etcd store reports about its
// watches and its read cache, as plain values without dependencies, so that
// package etcdstore can return them (Store.WatchStats, Store.CacheStats)
// and package observe/etcdobserve can export them as metrics at scrape
// (etcdobserve.NewStatsCollector). Counters count since the store was made;
// they never go down.
package etcdstats

// Watch are the counters of a store's watches.
type Watch struct {
	// Events counts the etcd watch events the store received.
	Events int64
	// Resumes counts the watches opened again after a break (lost leader,
	// closed stream), from the last revision seen.
	Resumes int64
	// CompactionRelists counts the resumes that found the history they
	// needed compacted and read everything again instead.
	CompactionRelists int64
	// Watchers is the number of watches open now (a gauge).
	Watchers int64
	// LagRevisions is how many revisions the watch furthest behind is
	// behind the newest revision the store has seen (a gauge; 0 when it
	// has caught up or cannot tell).
	LagRevisions int64
}

// Cache are the counters of a store's read cache.
type Cache struct {
	// Hits counts the reads the cache answered; Misses those it could not
	// (they went to etcd).
	Hits, Misses int64
	// Evictions counts the entries dropped to make room.
	Evictions int64
	// Entries is the number of entries held now (a gauge).
	Entries int64
}
