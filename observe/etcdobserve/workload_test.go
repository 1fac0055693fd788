package etcdobserve_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/observe/etcdobserve"
	"github.com/zlink-systems/zlink-etcd/observe/internal/promtest"
	"github.com/zlink-systems/zlink-etcd/session"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// instrumented is a store on the shared member with every metric on one
// registry and every span in one recorder.
type instrumented struct {
	reg    *prometheus.Registry
	spans  *tracetest.SpanRecorder
	client *clientv3.Client
	faults *faultKV
	store  *etcdstore.Store
}

func newInstrumented(t *testing.T, configure ...func(*etcdstore.Options)) *instrumented {
	t.Helper()
	in := &instrumented{reg: prometheus.NewRegistry(), spans: tracetest.NewSpanRecorder(), client: etcdtest.Connect(t)}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(in.spans))
	inst, err := etcdobserve.New(etcdobserve.Options{Registerer: in.reg, TracerProvider: tp})
	require.NoError(t, err)
	in.faults = &faultKV{KV: in.client.KV}
	opts := etcdstore.Options{Root: etcdtest.UniquePrefix(t), KV: in.faults}
	for _, c := range configure {
		c(&opts)
	}
	in.store, err = etcdstore.New(in.client, inst.StoreOptions(opts))
	require.NoError(t, err)
	require.NoError(t, in.reg.Register(etcdobserve.NewStatsCollector(in.store)))
	return in
}

// touchSpots writes every spot row again with its own value, behind the
// store's back: a concurrent writer that changes what a decision read.
func (in *instrumented) touchSpots(t *testing.T) {
	resp, err := in.client.Get(context.Background(), in.store.Layout().TablePrefix(string(location.TableSpots)), clientv3.WithPrefix())
	require.NoError(t, err)
	require.NotEmpty(t, resp.Kvs)
	for _, kv := range resp.Kvs {
		_, err := in.client.Put(context.Background(), string(kv.Key), string(kv.Value), clientv3.WithIgnoreLease())
		require.NoError(t, err)
	}
}

func (in *instrumented) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	return promtest.Value(t, in.reg, name, labels...)
}

// The counters move as a scripted workload says: N operations are N
// observations with their labels, a forced contention is one retried
// transaction, a read during an election is one read retry, and every
// etcd request is counted under the operation that sent it. Each
// operation is one span with its etcd requests as children.
func TestWorkload(t *testing.T) {
	in := newInstrumented(t)
	s, ctx := in.store, t.Context()

	claim := storetest.Claim(t, ctx, s, "x", time.Minute)
	spot := fixture.SPOT("x", claim.LeaseGeneration)
	write := func(row location.SpotLocation, intent location.WriteIntent, want location.WriteStatus) {
		t.Helper()
		res, err := s.UpdateSpot(ctx, row, intent)
		require.NoError(t, err)
		require.Equal(t, want, res.Status)
	}
	write(spot, location.IntentNewClaim, location.Stored)
	for range 3 {
		write(spot, location.IntentRenew, location.Stored)
	}
	write(fixture.SPOT("y", 1), location.IntentNewClaim, location.RejectedConflict) // x is live
	_, err := s.UpdateSpot(ctx, location.SpotLocation{}, location.IntentNewClaim)
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	for range 2 {
		got, err := s.ResolveSpot(ctx, fixture.SpotKey())
		require.NoError(t, err)
		require.NotNil(t, got)
	}
	page, err := s.ListSpots(ctx, location.SpotFilter{}, location.PageRequest{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)

	// A concurrent writer between the read and the commit: one contention.
	in.faults.armBeforeWrite(func() { in.touchSpots(t) })
	write(spot, location.IntentRenew, location.Stored)
	// A read during an election: one retry.
	in.faults.armReadFailure()
	_, err = s.ResolveSpot(ctx, fixture.SpotKey())
	require.NoError(t, err)

	// Operations: N calls, N observations, by result kind and error class.
	require.Equal(t, []string{
		"error_class=invalid_argument,operation=UpdateSpot,result=error,table=spots",
		"error_class=none,operation=ClaimOwnerLease,result=claimed,table=none",
		"error_class=none,operation=ListSpots,result=ok,table=spots",
		"error_class=none,operation=ResolveSpot,result=ok,table=spots",
		"error_class=none,operation=UpdateSpot,result=rejectedConflict,table=spots",
		"error_class=none,operation=UpdateSpot,result=stored,table=spots",
	}, promtest.Labels(t, in.reg, "zlink_store_operations_total"))
	for _, c := range []struct {
		op, result string
		want       float64
	}{
		{"ClaimOwnerLease", "claimed", 1}, {"UpdateSpot", "stored", 5}, {"UpdateSpot", "rejectedConflict", 1},
		{"UpdateSpot", "error", 1}, {"ResolveSpot", "ok", 3}, {"ListSpots", "ok", 1},
	} {
		require.Equal(t, c.want, in.value(t, "zlink_store_operations_total", "operation", c.op, "result", c.result), "%s %s", c.op, c.result)
	}
	require.Equal(t, 7.0, in.value(t, "zlink_store_operation_duration_seconds", "operation", "UpdateSpot"))
	require.Equal(t, 0.0, in.value(t, "zlink_store_operations_in_flight"))

	// Transactions: five commits of UpdateSpot, one of which needed a second
	// attempt; nothing failed or was lost.
	require.Equal(t, 5.0, in.value(t, "zlink_etcd_txn_attempts_total", "operation", "UpdateSpot", "result", "committed"))
	require.Equal(t, 1.0, in.value(t, "zlink_etcd_txn_attempts_total", "operation", "UpdateSpot", "result", "guard_failed"))
	require.Equal(t, 1.0, in.value(t, "zlink_etcd_txn_attempts_total", "result", "guard_failed"))
	require.Equal(t, 0.0, in.value(t, "zlink_etcd_txn_attempts_total", "result", "failed"))
	require.Equal(t, 0.0, in.value(t, "zlink_etcd_txn_outcome_unknown_total"))
	// Every write transaction of UpdateSpot is one request, every request
	// was sent by an operation, and the failed read is one of them.
	require.Equal(t, 6.0, in.value(t, "zlink_etcd_requests_total", "operation", "UpdateSpot", "request", "txn"))
	require.Equal(t, 0.0, in.value(t, "zlink_etcd_requests_total", "operation", "none"))
	require.Equal(t, []string{"code=OK", "code=Unavailable"}, requestCodes(t, in.reg))
	require.Equal(t, 1.0, in.value(t, "zlink_etcd_requests_total", "operation", "ResolveSpot", "code", "Unavailable"))
	require.Equal(t, in.value(t, "zlink_etcd_requests_total"), in.value(t, "zlink_etcd_request_duration_seconds"))
	// Read retries, read at scrape from the store.
	require.Equal(t, 1.0, in.value(t, "zlink_etcd_read_retries_total"))
	require.Equal(t, 1.0, in.value(t, "zlink_etcd_read_retry_recoveries_total"))
	require.Equal(t, 0.0, in.value(t, "zlink_etcd_read_retry_give_ups_total"))

	// Spans: one per operation, each etcd request a child of its
	// operation's, each transaction attempt an event of it.
	ops, children := map[string]sdktrace.ReadOnlySpan{}, map[string][]sdktrace.ReadOnlySpan{}
	var names []string
	for _, sp := range in.spans.Ended() {
		if !sp.Parent().IsValid() {
			ops[sp.SpanContext().SpanID().String()] = sp
			names = append(names, sp.Name())
		}
	}
	for _, sp := range in.spans.Ended() {
		if sp.Parent().IsValid() {
			parent, ok := ops[sp.Parent().SpanID().String()]
			require.True(t, ok, "%s is a child of an operation's span", sp.Name())
			require.True(t, strings.HasPrefix(sp.Name(), "etcd "), sp.Name())
			children[parent.SpanContext().SpanID().String()] = append(children[parent.SpanContext().SpanID().String()], sp)
		}
	}
	require.Equal(t, []string{"ClaimOwnerLease", "UpdateSpot", "UpdateSpot", "UpdateSpot", "UpdateSpot", "UpdateSpot", "UpdateSpot",
		"ResolveSpot", "ResolveSpot", "ListSpots", "UpdateSpot", "ResolveSpot"}, names)
	require.Len(t, in.spans.Ended(), len(ops)+int(in.value(t, "zlink_etcd_requests_total")), "one span per operation and per request")
	var contended, retried sdktrace.ReadOnlySpan
	for id, sp := range ops {
		attempts := attr(sp, observe.AttrAttempts).AsInt64()
		var txns int64
		for _, c := range children[id] {
			if c.Name() == "etcd txn" {
				txns++
			}
		}
		if sp.Name() == "UpdateSpot" {
			var events int64
			for _, ev := range sp.Events() {
				if ev.Name == "txn attempt" {
					events++
				}
			}
			require.Equal(t, attempts, events, "one event per attempt")
			if attr(sp, observe.AttrResult).AsString() != "rejectedConflict" {
				require.Equal(t, attempts, txns, "every attempt of a write is one write transaction")
			}
		}
		if attempts == 2 {
			contended = sp
		}
		for _, c := range children[id] {
			if c.Status().Description == "Unavailable" {
				retried = sp
			}
		}
	}
	require.NotNil(t, contended)
	require.Equal(t, "UpdateSpot", contended.Name())
	var results []string
	for _, ev := range contended.Events() {
		for _, a := range ev.Attributes {
			if a.Key == "zlink.txn.result" {
				results = append(results, a.Value.AsString())
			}
		}
	}
	require.Equal(t, []string{"guard_failed", "committed"}, results)
	require.NotNil(t, retried, "the failed read is a child span with its code")
	require.Equal(t, "ResolveSpot", retried.Name())
}

// An operation that runs out of attempts on contention is counted as a
// give-up, with its failed attempts.
func TestContentionGiveUp(t *testing.T) {
	in := newInstrumented(t, func(o *etcdstore.Options) { o.MaxAttempts = 1 })
	ctx := t.Context()
	claim := storetest.Claim(t, ctx, in.store, "x", time.Minute)
	spot := fixture.SPOT("x", claim.LeaseGeneration)
	_, err := in.store.UpdateSpot(ctx, spot, location.IntentNewClaim)
	require.NoError(t, err)

	in.faults.armBeforeWrite(func() { in.touchSpots(t) })
	_, err = in.store.UpdateSpot(ctx, spot, location.IntentRenew)
	require.ErrorIs(t, err, txn.ErrContention)
	require.Equal(t, 1.0, in.value(t, "zlink_etcd_txn_contention_give_ups_total", "operation", "UpdateSpot"))
	require.Equal(t, 1.0, in.value(t, "zlink_etcd_txn_attempts_total", "operation", "UpdateSpot", "result", "guard_failed"))
	require.Equal(t, 1.0, in.value(t, "zlink_store_operations_total", "operation", "UpdateSpot", "error_class", "unavailable"))
}

// requestCodes lists the code labels of the requests counted.
func requestCodes(t *testing.T, g prometheus.Gatherer) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range promtest.Series(t, g, "zlink_etcd_requests_total") {
		for _, l := range m.GetLabel() {
			if l.GetName() == "code" && !seen[l.GetValue()] {
				seen[l.GetValue()] = true
				out = append(out, "code="+l.GetValue())
			}
		}
	}
	slices.Sort(out)
	return out
}

func attr(sp sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, a := range sp.Attributes() {
		if a.Key == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

// A session on the store is measured (renewals, the age of the last one)
// and its loss counted when its lease is revoked; its health check turns
// unready at once.
func TestRevokedLeaseIsALostSession(t *testing.T) {
	in := newInstrumented(t)
	nm, err := observe.NewNodeMetrics(in.reg, observe.NodeOptions{})
	require.NoError(t, err)
	s, err := session.New(t.Context(), in.store, "y", session.Options{TTL: 3 * time.Second, RenewInterval: 200 * time.Millisecond,
		RenewTimeout: 500 * time.Millisecond, FencingMargin: time.Second, OnRenewal: nm.OnRenewal})
	require.NoError(t, err)
	defer s.Close(context.Background())
	nm.TrackSession(s)
	h, err := health.NewHandler(etcdobserve.StoreCheck(in.store), health.SessionCheck(s))
	require.NoError(t, err)

	eventually(t, func() bool { return in.value(t, "zlink_session_renewals_total", "result", "renewed") >= 2 }, "renewals")
	require.Equal(t, 1.0, in.value(t, "zlink_session_renewals_total", "result", "claimed"))
	require.Equal(t, 1.0, in.value(t, "zlink_sessions_running"))
	require.Equal(t, 0.0, in.value(t, "zlink_sessions_untrusted"))
	require.Less(t, in.value(t, "zlink_session_last_renewal_age_seconds"), 2.0, "renewed within TTL − margin")
	status, _ := probe(t, h, "/readyz")
	require.Equal(t, http.StatusOK, status)

	require.NoError(t, in.store.ExpireOwnerLease(t.Context(), "y"))
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after its lease was revoked")
	}
	require.ErrorIs(t, s.Err(), session.ErrLeaseLost)
	eventually(t, func() bool { return in.value(t, "zlink_session_ends_total", "cause", "lease_lost") == 1 }, "the loss counted")
	require.Equal(t, []string{"cause=lease_lost"}, promtest.Labels(t, in.reg, "zlink_session_ends_total"))
	require.Equal(t, 0.0, in.value(t, "zlink_sessions_running"))
	status, body := probe(t, h, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "[+]etcd ok\n[-]session failed: the owner-lease session of \"y\" ended at ")
	status, _ = probe(t, h, "/livez")
	require.Equal(t, http.StatusOK, status, "a lost lease is no reason to restart")
}

func probe(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, msg)
}

// faultKV is the store's KV (etcdstore.Options.KV) with faults the test
// arms: the next read fails with a transient error before it is sent (as
// during a leader election), and a function runs once just before the next
// write transaction is sent (a concurrent writer).
type faultKV struct {
	clientv3.KV
	failRead    oneShot[bool]
	beforeWrite oneShot[func()]
}

// oneShot is a value armed for its next take only.
type oneShot[T any] struct {
	mu sync.Mutex
	v  T
}

// arm sets the value the next take returns.
func (o *oneShot[T]) arm(v T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.v = v
}

// take returns the armed value (the zero value when none is) and disarms.
func (o *oneShot[T]) take() T {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := o.v
	var zero T
	o.v = zero
	return v
}

func (f *faultKV) armReadFailure() { f.failRead.arm(true) }

func (f *faultKV) armBeforeWrite(fn func()) { f.beforeWrite.arm(fn) }

// errLeaderChanged is what etcd answers while it elects a leader.
func errLeaderChanged() error { return status.Error(codes.Unavailable, "etcdserver: leader changed") }

func (f *faultKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if f.failRead.take() {
		return nil, errLeaderChanged()
	}
	return f.KV.Get(ctx, key, opts...)
}

// Txn implements clientv3.KV.
func (f *faultKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		switch {
		case ops.OnlyReads():
			if f.failRead.take() {
				return nil, errLeaderChanged()
			}
		default:
			if fn := f.beforeWrite.take(); fn != nil {
				fn()
			}
		}
		return ops.Send(ctx, f.KV)
	})
}
