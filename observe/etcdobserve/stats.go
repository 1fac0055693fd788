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
	src    any
	groups []statsGroup
}

// statsMetric is one metric of a store's counters: its name, help and
// kind, and its value in the counters S one Stats method returns.
type statsMetric[S any] struct {
	name, help string
	kind       prometheus.ValueType
	value      func(S) int64
}

// statsGroup is the metrics that one of the interfaces above gives.
type statsGroup struct {
	descs []*prometheus.Desc
	// implemented says src implements the group's interface.
	implemented func(src any) bool
	// collect calls the interface's Stats method once and sends every
	// metric of the group (nothing when src does not implement it).
	collect func(src any, ch chan<- prometheus.Metric)
}

// counterStat and gaugeStat define a counter and a gauge.
func counterStat[S any](name, help string, value func(S) int64) statsMetric[S] {
	return statsMetric[S]{name: name, help: help, kind: prometheus.CounterValue, value: value}
}

func gaugeStat[S any](name, help string, value func(S) int64) statsMetric[S] {
	return statsMetric[S]{name: name, help: help, kind: prometheus.GaugeValue, value: value}
}

// group is the statsGroup of interface I, whose stats method returns the
// counters the metrics read.
func group[I, S any](stats func(I) S, metrics ...statsMetric[S]) statsGroup {
	descs := make([]*prometheus.Desc, len(metrics))
	for i, m := range metrics {
		descs[i] = prometheus.NewDesc(m.name, m.help, nil, nil)
	}
	return statsGroup{
		descs:       descs,
		implemented: func(src any) bool { _, ok := src.(I); return ok },
		collect: func(src any, ch chan<- prometheus.Metric) {
			i, ok := src.(I)
			if !ok {
				return
			}
			s := stats(i)
			for k, m := range metrics {
				ch <- prometheus.MustNewConstMetric(descs[k], m.kind, float64(m.value(s)))
			}
		},
	}
}

// NewStatsCollector returns the collector of store's counters (register it
// on the registry the store's other metrics are on).
func NewStatsCollector(store any) *StatsCollector {
	return &StatsCollector{src: store, groups: []statsGroup{
		group(ReadRetrier.ReadRetries,
			counterStat("zlink_etcd_read_retries_total", "Reads sent again after a transient etcd error (no leader, unavailable member, too many requests).",
				func(s txn.RetryStats) int64 { return s.Retries }),
			counterStat("zlink_etcd_read_retry_recoveries_total", "Reads that succeeded after at least one retry (they rode out an election).",
				func(s txn.RetryStats) int64 { return s.Recovered }),
			counterStat("zlink_etcd_read_retry_give_ups_total", "Reads that retried until the caller's context ended.",
				func(s txn.RetryStats) int64 { return s.GaveUp })),
		group(WatchStatser.WatchStats,
			counterStat("zlink_etcd_watch_events_total", "etcd watch events the store received.",
				func(s etcdstats.Watch) int64 { return s.Events }),
			counterStat("zlink_etcd_watch_resumes_total", "Watches opened again after a break, from the last revision seen.",
				func(s etcdstats.Watch) int64 { return s.Resumes }),
			counterStat("zlink_etcd_watch_compaction_relists_total", "Watch resumes that found their history compacted and read everything again.",
				func(s etcdstats.Watch) int64 { return s.CompactionRelists }),
			gaugeStat("zlink_etcd_watchers", "Watches the store holds open.",
				func(s etcdstats.Watch) int64 { return s.Watchers }),
			gaugeStat("zlink_etcd_watch_lag_revisions", "Revisions the watch furthest behind is behind the newest revision the store has seen.",
				func(s etcdstats.Watch) int64 { return s.LagRevisions })),
		group(CacheStatser.CacheStats,
			counterStat("zlink_etcd_cache_hits_total", "Reads the store's cache answered.",
				func(s etcdstats.Cache) int64 { return s.Hits }),
			counterStat("zlink_etcd_cache_misses_total", "Reads the store's cache could not answer (sent to etcd).",
				func(s etcdstats.Cache) int64 { return s.Misses }),
			counterStat("zlink_etcd_cache_evictions_total", "Entries the store's cache dropped to make room.",
				func(s etcdstats.Cache) int64 { return s.Evictions }),
			gaugeStat("zlink_etcd_cache_entries", "Entries the store's cache holds.",
				func(s etcdstats.Cache) int64 { return s.Entries })),
	}}
}

// Describe implements prometheus.Collector: the metrics the store can
// report.
func (c *StatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range c.groups {
		if g.implemented(c.src) {
			for _, d := range g.descs {
				ch <- d
			}
		}
	}
}

// Collect implements prometheus.Collector: each Stats method is called
// once per scrape.
func (c *StatsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.groups {
		g.collect(c.src, ch)
	}
}
