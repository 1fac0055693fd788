// Package etcdstats declares the counters an etcd store reports about its
// watches and its read cache, as plain values without dependencies, so that
// package etcdstore can return them (Store.WatchStats, Store.CacheStats)
// and package observe/etcdobserve can export them as metrics at scrape
// (etcdobserve.NewStatsCollector). Counters count since the store was made;
// they never go down.
package etcdstats

import "time"

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
	// Opened counts the watches opened, resumed ones included.
	Opened int64
	// EventBytes counts the keys' and values' bytes of the events.
	EventBytes int64
	// ProgressNotifications counts the progress notifications received;
	// ProgressRequests the requests for one (a consistent cache read sends
	// one).
	ProgressNotifications, ProgressRequests int64
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

	// The fields below are reported by a cache that mirrors whole key
	// ranges from etcd watches (etcdstore's watch cache).

	// Enabled: the cache is on (configured on, and not turned off). Ready:
	// it holds every range a read has needed so far and answers reads.
	Enabled, Ready bool
	// Bytes is the keys' and values' bytes held now (a gauge).
	Bytes int64
	// Revision is the revision through which the cache has applied every
	// change (a gauge); Lag the newest revision the store has seen minus
	// Revision (0 when not ready); SinceProgress the time since the cache
	// last moved on (0 before the first).
	Revision, Lag int64
	SinceProgress time.Duration
	// Fallbacks counts the misses that first waited for the cache to catch
	// up, in vain.
	Fallbacks int64
	// Waits counts the reads that waited for the cache to catch up with
	// the revision they confirmed, and WaitTime their total wait.
	Waits    int64
	WaitTime time.Duration
	// Loads counts the range reads that (re)filled the cache, Relists those
	// after a compaction, Overflows the times it turned itself off because
	// it grew past its bound.
	Loads, Relists, Overflows int64
}
