package etcdobserve

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zlink-systems/zlink-etcd/observe/etcdstats"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// ReadRetrier reports the counts of the reads a store sent again while
// etcd answered transient errors; *etcdstore.Store implements it.
type ReadRetrier interface {
	ReadRetries() txn.RetryStats
}

// WatchStatser reports the counters of a store's watches.
type WatchStatser interface {
	WatchStats() etcdstats.Watch
}

// CacheStatser reports the counters of a store's read cache.
type CacheStatser interface {
	CacheStats() etcdstats.Cache
}

// StatsCollector is a prometheus.Collector that reads a store's counters
// at every scrape, through the interfaces above; what the store does not
// implement is not exported:
//
//   - ReadRetrier: zlink_etcd_read_retries_total,
//     zlink_etcd_read_retry_recoveries_total,
//     zlink_etcd_read_retry_give_ups_total
//   - WatchStatser: zlink_etcd_watch_events_total,
//     zlink_etcd_watch_resumes_total,
//     zlink_etcd_watch_compaction_relists_total, zlink_etcd_watchers,
//     zlink_etcd_watch_lag_revisions
//   - CacheStatser: zlink_etcd_cache_hits_total,
//     zlink_etcd_cache_misses_total, zlink_etcd_cache_evictions_total,
//     zlink_etcd_cache_entries
type StatsCollector struct {
	src                                   any
	retries, recoveries, giveUps          *prometheus.Desc
	events, resumes, relists, watchers    *prometheus.Desc
	lag                                   *prometheus.Desc
	hits, misses, evictions, cacheEntries *prometheus.Desc
}

// NewStatsCollector returns the collector of store's counters (register it
// on the registry the store's other metrics are on).
func NewStatsCollector(store any) *StatsCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &StatsCollector{
		src:          store,
		retries:      d("zlink_etcd_read_retries_total", "Reads sent again after a transient etcd error (no leader, unavailable member, too many requests)."),
		recoveries:   d("zlink_etcd_read_retry_recoveries_total", "Reads that succeeded after at least one retry (they rode out an election)."),
		giveUps:      d("zlink_etcd_read_retry_give_ups_total", "Reads that retried until the caller's context ended."),
		events:       d("zlink_etcd_watch_events_total", "etcd watch events the store received."),
		resumes:      d("zlink_etcd_watch_resumes_total", "Watches opened again after a break, from the last revision seen."),
		relists:      d("zlink_etcd_watch_compaction_relists_total", "Watch resumes that found their history compacted and read everything again."),
		watchers:     d("zlink_etcd_watchers", "Watches the store holds open."),
		lag:          d("zlink_etcd_watch_lag_revisions", "Revisions the watch furthest behind is behind the newest revision the store has seen."),
		hits:         d("zlink_etcd_cache_hits_total", "Reads the store's cache answered."),
		misses:       d("zlink_etcd_cache_misses_total", "Reads the store's cache could not answer (sent to etcd)."),
		evictions:    d("zlink_etcd_cache_evictions_total", "Entries the store's cache dropped to make room."),
		cacheEntries: d("zlink_etcd_cache_entries", "Entries the store's cache holds."),
	}
}

// Describe implements prometheus.Collector: the metrics the store can
// report.
func (c *StatsCollector) Describe(ch chan<- *prometheus.Desc) {
	var descs []*prometheus.Desc
	if _, ok := c.src.(ReadRetrier); ok {
		descs = append(descs, c.retries, c.recoveries, c.giveUps)
	}
	if _, ok := c.src.(WatchStatser); ok {
		descs = append(descs, c.events, c.resumes, c.relists, c.watchers, c.lag)
	}
	if _, ok := c.src.(CacheStatser); ok {
		descs = append(descs, c.hits, c.misses, c.evictions, c.cacheEntries)
	}
	for _, d := range descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector: each Stats method is called
// once per scrape.
func (c *StatsCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(d *prometheus.Desc, kind prometheus.ValueType, v int64) {
		ch <- prometheus.MustNewConstMetric(d, kind, float64(v))
	}
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	if r, ok := c.src.(ReadRetrier); ok {
		s := r.ReadRetries()
		emit(c.retries, counter, s.Retries)
		emit(c.recoveries, counter, s.Recovered)
		emit(c.giveUps, counter, s.GaveUp)
	}
	if w, ok := c.src.(WatchStatser); ok {
		s := w.WatchStats()
		emit(c.events, counter, s.Events)
		emit(c.resumes, counter, s.Resumes)
		emit(c.relists, counter, s.CompactionRelists)
		emit(c.watchers, gauge, s.Watchers)
		emit(c.lag, gauge, s.LagRevisions)
	}
	if cs, ok := c.src.(CacheStatser); ok {
		s := cs.CacheStats()
		emit(c.hits, counter, s.Hits)
		emit(c.misses, counter, s.Misses)
		emit(c.evictions, counter, s.Evictions)
		emit(c.cacheEntries, gauge, s.Entries)
	}
}
