package etcdobserve

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Options configure an Instrumentation.
type Options struct {
	// Registerer receives the metrics; nil registers none (tracing only).
	Registerer prometheus.Registerer
	// TracerProvider makes a span per store operation with a child span
	// per etcd request; nil traces nothing.
	TracerProvider trace.TracerProvider
	// TraceGRPC makes Config add otelgrpc's client handler to the etcd
	// client: a span per gRPC call, the calls of keep-alive and watch
	// streams included (which no store operation sends). It needs a
	// TracerProvider.
	TraceGRPC bool
	// Buckets are the latency histograms' buckets in seconds; nil means
	// observe.DurationBuckets().
	Buckets []float64
}

// Instrumentation measures and traces an etcd store: the store's
// operations (an observe.StoreObserver), the etcd requests they send
// (WrapKV) and their transactions (OnTxnAttempt):
//
//   - zlink_etcd_requests_total{operation, request, code}
//   - zlink_etcd_request_duration_seconds{request}
//   - zlink_etcd_txn_attempts_total{operation, result}
//   - zlink_etcd_txn_outcome_unknown_total{operation, resolution}
//   - zlink_etcd_txn_contention_give_ups_total{operation}
//
// operation is the store operation that sent the request (observe.LabelNone
// for requests outside one), request its type (get, range, put, delete,
// txn, txn_read, compact), code etcd's gRPC code ("OK" on success), result
// a txn.AttemptResult and resolution a txn.Resolution, or "applied_late"
// for a lost answer first resolved as not applied that turned out applied.
// Safe for concurrent use.
type Instrumentation struct {
	observer  *observer
	tracer    trace.Tracer // nil: no spans
	tp        trace.TracerProvider
	traceGRPC bool

	requests         *prometheus.CounterVec
	requestDuration  *prometheus.HistogramVec
	attempts         *prometheus.CounterVec
	outcomeUnknown   *prometheus.CounterVec
	contentionGaveUp *prometheus.CounterVec
}

// New returns an Instrumentation whose metrics (the store observer's
// included) are registered on opts.Registerer.
func New(opts Options) (*Instrumentation, error) {
	buckets := observe.DurationBucketsOr(opts.Buckets)
	i := &Instrumentation{
		tp:        opts.TracerProvider,
		traceGRPC: opts.TraceGRPC && opts.TracerProvider != nil,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zlink_etcd_requests_total",
			Help: "etcd requests the store sent, every retry included, by store operation, request type and gRPC code.",
		}, []string{"operation", "request", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zlink_etcd_request_duration_seconds",
			Help:    "Duration of the etcd requests the store sent, by request type.",
			Buckets: buckets,
		}, []string{"request"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zlink_etcd_txn_attempts_total",
			Help: "Transactions store operations sent, by operation and result: committed, verified, guard_failed (contention: decided again), failed, outcome_unknown.",
		}, []string{"operation", "result"}),
		outcomeUnknown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zlink_etcd_txn_outcome_unknown_total",
			Help: "Transactions whose answer was lost, by operation and what re-reading found: applied, not_applied, gave_up (the operation failed with an unknown outcome), applied_late.",
		}, []string{"operation", "resolution"}),
		contentionGaveUp: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zlink_etcd_txn_contention_give_ups_total",
			Help: "Store operations that gave up because what they read kept changing for their whole attempt budget (txn.ErrContention; nothing written).",
		}, []string{"operation"}),
	}
	if opts.TracerProvider != nil {
		i.tracer = opts.TracerProvider.Tracer(observe.InstrumentationName)
	}
	own := []prometheus.Collector{i.requests, i.requestDuration, i.attempts, i.outcomeUnknown, i.contentionGaveUp}
	if err := observe.Register(opts.Registerer, own...); err != nil {
		return nil, err
	}
	obs, err := observe.NewStoreObserver(observe.Options{Registerer: opts.Registerer, TracerProvider: opts.TracerProvider, Buckets: opts.Buckets})
	if err != nil && opts.Registerer != nil {
		for _, c := range own {
			opts.Registerer.Unregister(c)
		}
	}
	if err != nil {
		return nil, err
	}
	i.observer = &observer{StoreObserver: obs, i: i}
	return i, nil
}

// Observer returns the store observer (etcdstore.Options.Observer): an
// observe.StoreObserver that also counts the operations that gave up on
// contention.
func (i *Instrumentation) Observer() storecore.Observer { return i.observer }

// observer is the StoreObserver with what only etcd's errors tell.
type observer struct {
	*observe.StoreObserver
	i *Instrumentation
}

// End implements storecore.Observer.
func (o *observer) End(ctx context.Context, op storecore.Op, out storecore.Outcome) {
	if errors.Is(out.Err, txn.ErrContention) {
		o.i.contentionGaveUp.WithLabelValues(op.Name).Inc()
	}
	o.StoreObserver.End(ctx, op, out)
}

// StoreOptions returns o instrumented: Observer set to the store observer
// (replacing o's), WrapKV and OnTxnAttempt set to the Instrumentation's
// (after o's own, when set).
func (i *Instrumentation) StoreOptions(o etcdstore.Options) etcdstore.Options {
	o.Observer = i.observer
	if wrap := o.WrapKV; wrap != nil {
		o.WrapKV = func(kv clientv3.KV) clientv3.KV { return i.WrapKV(wrap(kv)) }
	} else {
		o.WrapKV = i.WrapKV
	}
	if hook := o.OnTxnAttempt; hook != nil {
		o.OnTxnAttempt = func(ctx context.Context, a txn.Attempt) {
			hook(ctx, a)
			i.OnTxnAttempt(ctx, a)
		}
	} else {
		o.OnTxnAttempt = i.OnTxnAttempt
	}
	return o
}

// Config returns c with its store options instrumented (StoreOptions) and,
// with Options.TraceGRPC, otelgrpc's client handler added to the dial
// options.
func (i *Instrumentation) Config(c etcdstore.Config) etcdstore.Config {
	c.Options = i.StoreOptions(c.Options)
	if i.traceGRPC {
		c.DialOptions = append(append([]grpc.DialOption(nil), c.DialOptions...), i.GRPCDialOption())
	}
	return c
}

// GRPCDialOption returns the dial option that traces every gRPC call of
// an etcd client with otelgrpc (spans only, on the Instrumentation's
// TracerProvider; no metrics, no propagation to etcd, nothing global), for
// clients made outside Dial (clientv3.Config.DialOptions). Without a
// TracerProvider it traces nothing.
func (i *Instrumentation) GRPCDialOption() grpc.DialOption {
	tp := i.tp
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	return grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		otelgrpc.WithTracerProvider(tp),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelgrpc.WithPropagators(propagation.NewCompositeTextMapPropagator()),
	))
}
