package meshbench

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Result is what one run measured. Durations are in seconds, rates per
// second; Label, Commit and Load are the caller's notes.
type Result struct {
	// Label names the code measured ("before", "after").
	Label string `json:"label"`
	// Commit is the commit measured.
	Commit string `json:"commit,omitempty"`
	// Nodes is the number of nodes of the mesh.
	Nodes int `json:"nodes"`
	// At is when the run started (UTC).
	At time.Time `json:"at"`
	// Load is the machine's load average (1, 5, 15 min) at the start and
	// at the end of the run, as uptime prints it.
	Load []string `json:"load,omitempty"`
	// EtcdInProcess: etcd ran in the harness's process (embedded), so the
	// nodes' CPU and memory include etcd's.
	EtcdInProcess bool `json:"etcd_in_process"`
	// EtcdMetrics: etcd's metrics were scraped (else the etcd figures are
	// zero).
	EtcdMetrics bool `json:"etcd_metrics"`
	// LeaseLosses counts the leases the nodes lost during the run (a
	// renewal not confirmed before the session's trust deadline); each
	// node rejoined with the next lifecycle generation.
	LeaseLosses int64 `json:"lease_losses"`
	// SetupSeconds is the time from the first join until every node
	// agreed with the full mesh.
	SetupSeconds float64 `json:"setup_seconds"`
	Steady       Steady  `json:"steady"`
	Join         Change  `json:"join"`
	Leave        Change  `json:"leave"`
	Rolling      Rolling `json:"rolling"`
}

// Rates are counts per second.
type Rates struct {
	// From etcd's metrics: Raft proposals committed, watch events sent,
	// watch responses sent, bytes sent to clients, Range and Txn
	// requests served, lease keep-alives received.
	Proposals  float64 `json:"proposals"`
	Events     float64 `json:"events"`
	WatchMsgs  float64 `json:"watch_msgs"`
	EtcdSentB  float64 `json:"etcd_sent_bytes"`
	EtcdRange  float64 `json:"etcd_range"`
	EtcdTxn    float64 `json:"etcd_txn"`
	KeepAlives float64 `json:"keepalives"`
	// From the nodes' clients: watch bytes received, read requests
	// (Gets and read-only Txns), rows those returned, other requests.
	WatchBytes float64 `json:"watch_bytes"`
	Reads      float64 `json:"reads"`
	Rows       float64 `json:"rows"`
	Writes     float64 `json:"writes"`
	// The nodes' watch caches (etcdstore.Store.CacheStats): reads
	// answered from memory, reads sent to etcd, and of those the reads
	// that first waited for the cache in vain.
	CacheHits      float64 `json:"cache_hits"`
	CacheMisses    float64 `json:"cache_misses"`
	CacheFallbacks float64 `json:"cache_fallbacks"`
}

// Steady is the steady state: every node joined, nothing changing.
type Steady struct {
	Seconds float64 `json:"seconds"`
	Rates   Rates   `json:"rates"`
	// NodeCPUMillicores is the harness process's CPU per node
	// (milliseconds of CPU per second per node); with etcd in process it
	// includes etcd's share.
	NodeCPUMillicores float64 `json:"node_cpu_millicores"`
	// EtcdCPUMillicores is etcd's CPU (process_cpu_seconds_total); zero
	// when etcd runs in process (it cannot be told apart).
	EtcdCPUMillicores float64 `json:"etcd_cpu_millicores"`
	// NodeMemoryBytes is the Go memory the nodes added to the process
	// (after a GC, divided by the nodes); with etcd in process it
	// includes what etcd added.
	NodeMemoryBytes float64 `json:"node_memory_bytes"`
	// EtcdRSSBytes is etcd's resident memory at the end of the steady
	// state.
	EtcdRSSBytes float64 `json:"etcd_rss_bytes"`
	// Watchers and WatchStreams are etcd's gauges at the end.
	Watchers     float64 `json:"watchers"`
	WatchStreams float64 `json:"watch_streams"`
}

// Counts are what a change cost, as totals.
type Counts struct {
	Proposals  float64 `json:"proposals"`
	Events     float64 `json:"events"`
	WatchBytes float64 `json:"watch_bytes"`
	Reads      float64 `json:"reads"`
	Rows       float64 `json:"rows"`
	Writes     float64 `json:"writes"`
	EtcdRange  float64 `json:"etcd_range"`
	EtcdTxn    float64 `json:"etcd_txn"`
	// The nodes' watch caches, as in Rates.
	CacheHits      float64 `json:"cache_hits"`
	CacheMisses    float64 `json:"cache_misses"`
	CacheFallbacks float64 `json:"cache_fallbacks"`
	// RowsByRange splits Rows by the part of the store's layout read (a
	// table, "owner", "meshnode-stamp", …); raw counts only.
	RowsByRange map[string]int64 `json:"rows_by_range,omitempty"`
}

// Change is one node joining or leaving.
type Change struct {
	// WindowSeconds is the measured window: from the change until every
	// node agreed, plus a settle time for the trailing reads.
	WindowSeconds float64 `json:"window_seconds"`
	// Raw are the counts in the window; Excess the same minus the steady
	// state's rates over the window (what the change itself cost).
	Raw    Counts `json:"raw"`
	Excess Counts `json:"excess"`
	// Converge is, per live node, the time from the change until its
	// executor last changed to agree with the live set.
	Converge Percentiles `json:"converge"`
}

// Rolling is the rolling restart.
type Rolling struct {
	// Restarted is the number of nodes restarted, one after the other
	// (leave, then a new process joins with the next lifecycle).
	Restarted int `json:"restarted"`
	// Seconds is the whole restart, until every node agreed.
	Seconds float64 `json:"seconds"`
	// Converge is, per live node, the time from the start of the last
	// restarted node's new process (it starts joining) until the node
	// agreed.
	Converge Percentiles `json:"converge"`
	// Peak are etcd's highest rates over one-second windows during the
	// restart; Mean its mean rates over it.
	Peak Rates `json:"peak"`
	Mean Rates `json:"mean"`
}

// Percentiles of a set of durations, in seconds.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// percentiles summarises ds (nearest rank).
func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)].Seconds()
	}
	return Percentiles{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1].Seconds()}
}

// SortResults orders results by label (before first) and node count.
func SortResults(rs []Result) {
	slices.SortStableFunc(rs, func(a, b Result) int {
		if c := cmp.Compare(labelRank(a.Label), labelRank(b.Label)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Label, b.Label); c != 0 {
			return c
		}
		return cmp.Compare(a.Nodes, b.Nodes)
	})
}

// labelRank puts "before" ahead of "after" and other labels after both.
func labelRank(l string) int {
	switch l {
	case "before":
		return 0
	case "after":
		return 1
	}
	return 2
}

// Upsert replaces the result with r's label and node count in rs, or
// appends r, and sorts.
func Upsert(rs []Result, r Result) []Result {
	i := slices.IndexFunc(rs, func(o Result) bool { return o.Label == r.Label && o.Nodes == r.Nodes })
	if i >= 0 {
		rs[i] = r
	} else {
		rs = append(rs, r)
	}
	SortResults(rs)
	return rs
}
