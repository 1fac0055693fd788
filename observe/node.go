package observe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/session"
)

// Causes of a session's end (the cause label of zlink_session_ends_total).
const (
	EndLeaseLost      = "lease_lost"      // session.ErrLeaseLost
	EndDeadlinePassed = "deadline_passed" // session.ErrDeadlinePassed
	EndClosed         = "closed"          // session.ErrClosed
	EndOrphaned       = "orphaned"        // session.ErrOrphaned
	EndContext        = "context"         // the context given to New or Adopt ended
	EndOther          = "other"
)

// Results of a tick (the result label of zlink_autoconnect_ticks_total).
const (
	TickReconciled   = "reconciled"
	TickSkipped      = "skipped"
	TickStoreFailure = "store_failure"
	TickError        = "error"
)

// NodeHooks are the calls a node type that owns owner-lease sessions and
// an auto-connect loop makes, so that one option of its wires its metrics:
// OnRenewal from each session's session.Options.OnRenewal, TrackSession
// after each claim, OnTick from autoconnect.LoopOptions.OnTick,
// DesiredSetChanged from its reconciler's autoconnect.EventSink, and
// SetAutoConnect with the current loop's status. *NodeMetrics implements
// it.
type NodeHooks interface {
	OnRenewal(r session.Renewal)
	TrackSession(s TrackedSession)
	OnTick(r autoconnect.TickReport)
	DesiredSetChanged(c autoconnect.DesiredSetChange)
	SetAutoConnect(status func() AutoConnectStatus)
}

var _ NodeHooks = (*NodeMetrics)(nil)

// NodeOptions configure NodeMetrics.
type NodeOptions struct {
	// Clock is the sessions' clock (session.Options.Clock), read at scrape
	// to age their last renewal; nil means clock.System().
	Clock clock.Clock
	// Buckets are the duration histograms' buckets in seconds; nil means
	// DurationBuckets().
	Buckets []float64
}

// TrackedSession is what NodeMetrics reads of a session; *session.Session
// implements it.
type TrackedSession interface {
	Valid() bool
	Status() session.Status
	Done() <-chan struct{}
	Err() error
}

// AutoConnectStatus is the state of an auto-connect loop, read at scrape
// (SetAutoConnect).
type AutoConnectStatus struct {
	// Desired is the size of the desired set (the targets the last
	// successful listing wants connected); negative when unknown.
	Desired int
	// Connected is the number of targets believed connected.
	Connected int
}

// NodeMetrics are the metrics of a node: its owner-lease sessions and its
// auto-connect loop. Wire it once:
//
//	session.Options{OnRenewal: m.OnRenewal}    (then m.TrackSession(s))
//	autoconnect.LoopOptions{OnTick: m.OnTick}
//	autoconnect.ReconcilerOptions{Events: m}   (an autoconnect.EventSink)
//	m.SetAutoConnect(observe.ReconcilerStatus(rec))
//
// Safe for concurrent use.
type NodeMetrics struct {
	clk clock.Clock

	renewals        *prometheus.CounterVec
	renewalDuration prometheus.Histogram
	ends            *prometheus.CounterVec
	ticks           *prometheus.CounterVec
	tickDuration    prometheus.Histogram
	lastTick        prometheus.Gauge
	storeFailed     prometheus.Gauge
	connects        prometheus.Counter
	disconnects     prometheus.Counter
	scraped         *nodeCollector

	mu          sync.Mutex
	sessions    map[TrackedSession]struct{}
	autoConnect func() AutoConnectStatus
}

// NewNodeMetrics returns NodeMetrics registered on reg (nil registers
// nothing; an error when they are registered there already).
func NewNodeMetrics(reg prometheus.Registerer, opts NodeOptions) (*NodeMetrics, error) {
	buckets := DurationBucketsOr(opts.Buckets)
	m := &NodeMetrics{
		clk: opts.Clock,
		renewals: newCounterVec("zlink_session_renewals_total",
			"Owner-lease claims and renewals a session sent, by result: the store's answer (claimed, renewed, stale, …) or error (not confirmed).", "result"),
		renewalDuration: newHistogram("zlink_session_renewal_duration_seconds",
			"Duration of owner-lease claims and renewals, answered or failed.", buckets),
		ends: newCounterVec("zlink_session_ends_total",
			"Tracked sessions that ended, by cause: lease_lost and deadline_passed are losses; closed, orphaned and context are the process's doing.", "cause"),
		ticks: newCounterVec("zlink_autoconnect_ticks_total",
			"Auto-connect loop ticks, by result: reconciled, skipped (nothing changed), store_failure, error.", "result"),
		tickDuration: newHistogram("zlink_autoconnect_tick_duration_seconds", "Duration of auto-connect loop ticks.", buckets),
		lastTick:     newGauge("zlink_autoconnect_last_tick_timestamp_seconds", "When the last auto-connect tick ended (Unix time)."),
		storeFailed: newGauge("zlink_autoconnect_store_failed",
			"1 while the last auto-connect tick ended in a store failure (connections are kept), else 0."),
		connects:    newCounter("zlink_autoconnect_connects_total", "Targets auto-connect connected."),
		disconnects: newCounter("zlink_autoconnect_disconnects_total", "Targets auto-connect disconnected."),
		sessions:    map[TrackedSession]struct{}{},
	}
	if m.clk == nil {
		m.clk = clock.System()
	}
	m.scraped = newNodeCollector(m)
	if err := Register(reg, m.renewals, m.renewalDuration, m.ends, m.ticks, m.tickDuration, m.lastTick,
		m.storeFailed, m.connects, m.disconnects, m.scraped); err != nil {
		return nil, err
	}
	return m, nil
}

// OnRenewal counts one claim or renewal attempt: session.Options.OnRenewal.
func (m *NodeMetrics) OnRenewal(r session.Renewal) {
	result := string(r.Kind)
	if r.Err != nil || result == "" {
		result = ResultError
	}
	m.renewals.WithLabelValues(result).Inc()
	m.renewalDuration.Observe(r.Answered.Sub(r.Sent).Seconds())
}

// TrackSession makes the scrape read s (running, trusted, the age of its
// last confirmed renewal, the trust left) until it ends, and counts its end
// by cause. A goroutine waits for the end: it lives as long as s. Tracking
// a session that is tracked already does nothing.
func (m *NodeMetrics) TrackSession(s TrackedSession) {
	m.mu.Lock()
	if _, ok := m.sessions[s]; ok {
		m.mu.Unlock()
		return
	}
	m.sessions[s] = struct{}{}
	m.mu.Unlock()
	go func() {
		<-s.Done()
		m.mu.Lock()
		delete(m.sessions, s)
		m.mu.Unlock()
		m.ends.WithLabelValues(EndCause(s.Err())).Inc()
	}()
}

// EndCause is the cause label of a session's end (Session.Err).
func EndCause(err error) string {
	switch {
	case errors.Is(err, session.ErrLeaseLost):
		return EndLeaseLost
	case errors.Is(err, session.ErrDeadlinePassed):
		return EndDeadlinePassed
	case errors.Is(err, session.ErrClosed):
		return EndClosed
	case errors.Is(err, session.ErrOrphaned):
		return EndOrphaned
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return EndContext
	}
	return EndOther
}

// OnTick counts one auto-connect tick: autoconnect.LoopOptions.OnTick.
func (m *NodeMetrics) OnTick(r autoconnect.TickReport) {
	result := TickReconciled
	switch {
	case r.Err != nil:
		result = TickError
	case r.StoreFailed:
		result = TickStoreFailure
	case r.Skipped:
		result = TickSkipped
	}
	m.ticks.WithLabelValues(result).Inc()
	m.tickDuration.Observe(r.Took.Seconds())
	m.lastTick.Set(float64(time.Now().UnixNano()) / 1e9)
	if r.StoreFailed {
		m.storeFailed.Set(1)
	} else {
		m.storeFailed.Set(0)
	}
}

// DesiredSetChanged counts what a tick connected and disconnected: it
// implements autoconnect.EventSink (ReconcilerOptions.Events).
func (m *NodeMetrics) DesiredSetChanged(c autoconnect.DesiredSetChange) {
	m.connects.Add(float64(len(c.ConnectedEndpoints)))
	m.disconnects.Add(float64(len(c.DisconnectedEndpoints)))
}

// SetAutoConnect sets the function the scrape reads the loop's desired and
// connected targets from (ReconcilerStatus, or a node's own state); nil
// stops reading.
func (m *NodeMetrics) SetAutoConnect(status func() AutoConnectStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.autoConnect = status
}

// Reconciler is what ReconcilerStatus reads; *autoconnect.Reconciler
// implements it.
type Reconciler interface {
	ActiveTargets() []autoconnect.Target
}

// ReconcilerStatus reads a reconciler's status: the targets believed
// connected, and the desired set when the reconciler tells it (a
// DesiredTargets method), else Desired is -1.
func ReconcilerStatus(r Reconciler) func() AutoConnectStatus {
	return func() AutoConnectStatus {
		st := AutoConnectStatus{Desired: -1, Connected: len(r.ActiveTargets())}
		if d, ok := r.(interface{ DesiredTargets() []autoconnect.Target }); ok {
			st.Desired = len(d.DesiredTargets())
		}
		return st
	}
}

// nodeCollector makes the gauges read at scrape.
type nodeCollector struct {
	m                                                             *NodeMetrics
	running, untrusted, renewalAge, trustLeft, desired, connected *prometheus.Desc
}

func newNodeCollector(m *NodeMetrics) *nodeCollector {
	return &nodeCollector{
		m: m,
		running: prometheus.NewDesc("zlink_sessions_running",
			"Tracked owner-lease sessions that have not ended.", nil, nil),
		untrusted: prometheus.NewDesc("zlink_sessions_untrusted",
			"Running sessions whose lease may not be trusted now (no renewal confirmed within TTL − fencing margin).", nil, nil),
		renewalAge: prometheus.NewDesc("zlink_session_last_renewal_age_seconds",
			"Seconds since the last confirmed renewal was sent, for the running session that renewed longest ago.", nil, nil),
		trustLeft: prometheus.NewDesc("zlink_session_trust_remaining_seconds",
			"Seconds until the lease of the running session trusted shortest stops being trusted (0 when it is not).", nil, nil),
		desired: prometheus.NewDesc("zlink_autoconnect_desired_targets",
			"Targets the last successful auto-connect listing wants connected.", nil, nil),
		connected: prometheus.NewDesc("zlink_autoconnect_connected_targets",
			"Auto-connect targets believed connected.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.running, c.untrusted, c.renewalAge, c.trustLeft, c.desired, c.connected} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	m.mu.Lock()
	sessions := make([]TrackedSession, 0, len(m.sessions))
	for s := range m.sessions {
		sessions = append(sessions, s)
	}
	status := m.autoConnect
	m.mu.Unlock()

	now := m.clk.Now()
	running, untrusted := 0, 0
	var oldest, shortest time.Duration
	for _, s := range sessions {
		st := s.Status()
		if st.Err != nil {
			continue // ended; the waiting goroutine counts it
		}
		running++
		if !s.Valid() {
			untrusted++
		}
		age, left := now.Sub(st.LastRenewal), max(st.TrustedUntil.Sub(now), 0)
		if running == 1 || age > oldest {
			oldest = age
		}
		if running == 1 || left < shortest {
			shortest = left
		}
	}
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(running))
	ch <- prometheus.MustNewConstMetric(c.untrusted, prometheus.GaugeValue, float64(untrusted))
	if running > 0 {
		ch <- prometheus.MustNewConstMetric(c.renewalAge, prometheus.GaugeValue, oldest.Seconds())
		ch <- prometheus.MustNewConstMetric(c.trustLeft, prometheus.GaugeValue, shortest.Seconds())
	}
	if status != nil {
		st := status()
		if st.Desired >= 0 {
			ch <- prometheus.MustNewConstMetric(c.desired, prometheus.GaugeValue, float64(st.Desired))
		}
		ch <- prometheus.MustNewConstMetric(c.connected, prometheus.GaugeValue, float64(st.Connected))
	}
}
