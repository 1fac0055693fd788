package etcdobserve_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/observe/etcdobserve"
	"github.com/zlink-systems/zlink-etcd/observe/etcdstats"
	"github.com/zlink-systems/zlink-etcd/observe/internal/promtest"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// retrying reports read retries only.
type retrying struct{ stats txn.RetryStats }

func (r *retrying) ReadRetries() txn.RetryStats { return r.stats }

// watching reports everything.
type watching struct {
	retrying
	watch etcdstats.Watch
	cache etcdstats.Cache
}

func (w *watching) WatchStats() etcdstats.Watch { return w.watch }
func (w *watching) CacheStats() etcdstats.Cache { return w.cache }

// The collector exports what the store reports, read at every scrape, and
// nothing of what it does not implement.
func TestStatsCollector(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store any
		want  map[string]float64
	}{
		{name: "nothing", store: struct{}{}, want: map[string]float64{}},
		{name: "read retries only", store: &retrying{stats: txn.RetryStats{Retries: 7, Recovered: 3, GaveUp: 1}}, want: map[string]float64{
			"zlink_etcd_read_retries_total": 7, "zlink_etcd_read_retry_recoveries_total": 3, "zlink_etcd_read_retry_give_ups_total": 1,
		}},
		{name: "everything", store: &watching{
			retrying: retrying{stats: txn.RetryStats{Retries: 1}},
			watch:    etcdstats.Watch{Events: 100, Resumes: 2, CompactionRelists: 1, Watchers: 3, LagRevisions: 5},
			cache:    etcdstats.Cache{Hits: 90, Misses: 10, Evictions: 4, Entries: 50},
		}, want: map[string]float64{
			"zlink_etcd_read_retries_total": 1, "zlink_etcd_read_retry_recoveries_total": 0, "zlink_etcd_read_retry_give_ups_total": 0,
			"zlink_etcd_watch_events_total": 100, "zlink_etcd_watch_resumes_total": 2, "zlink_etcd_watch_compaction_relists_total": 1,
			"zlink_etcd_watchers": 3, "zlink_etcd_watch_lag_revisions": 5,
			"zlink_etcd_cache_hits_total": 90, "zlink_etcd_cache_misses_total": 10, "zlink_etcd_cache_evictions_total": 4,
			"zlink_etcd_cache_entries": 50,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			require.NoError(t, reg.Register(etcdobserve.NewStatsCollector(tc.store)))
			families, err := reg.Gather()
			require.NoError(t, err)
			got := map[string]float64{}
			for _, f := range families {
				got[f.GetName()] = promtest.Value(t, reg, f.GetName())
			}
			require.Equal(t, tc.want, got)
		})
	}
	// Read at every scrape.
	r := &retrying{}
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(etcdobserve.NewStatsCollector(r)))
	require.Equal(t, 0.0, promtest.Value(t, reg, "zlink_etcd_read_retries_total"))
	r.stats.Retries = 4
	require.Equal(t, 4.0, promtest.Value(t, reg, "zlink_etcd_read_retries_total"))
}
