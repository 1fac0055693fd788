package observe

import (
	"context"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/zlink-systems/zlink-etcd/storecore"
)

// InstrumentationName names the tracer of this module's spans.
const InstrumentationName = "github.com/zlink-systems/zlink-etcd"

// Label values used when a label has nothing to say.
const (
	// LabelNone is the table of an operation without one, the error class
	// of a success, and the operation of a request sent outside any
	// operation.
	LabelNone = "none"
	// ResultOK and ResultError are the result of an operation whose result
	// has no kind (rows, pages, counts), without and with an error.
	ResultOK    = "ok"
	ResultError = "error"
)

// Span attributes of an operation's span.
const (
	AttrOperation  = attribute.Key("zlink.operation")
	AttrTable      = attribute.Key("zlink.table")
	AttrResult     = attribute.Key("zlink.result")
	AttrErrorClass = attribute.Key("zlink.error_class")
	AttrAttempts   = attribute.Key("zlink.attempts")
)

// Options configure a StoreObserver.
type Options struct {
	// Registerer receives the metrics; nil registers none (tracing only).
	Registerer prometheus.Registerer
	// TracerProvider makes one span per operation; nil traces nothing.
	TracerProvider trace.TracerProvider
	// Buckets are the latency histogram's buckets in seconds; nil means
	// DurationBuckets().
	Buckets []float64
}

// StoreObserver is a storecore.Observer (memstore.Options.Observer,
// etcdstore.Options.Observer) that measures and traces every operation:
//
//   - zlink_store_operations_total{operation, table, result, error_class}
//   - zlink_store_operation_duration_seconds{operation, table, error_class}
//   - zlink_store_operations_in_flight{operation}
//   - with a TracerProvider, one span per operation, named after it, with
//     the attributes zlink.operation, zlink.table, zlink.result,
//     zlink.error_class and zlink.attempts (transactions sent, on etcd).
//
// Labels: operation is the method's name, table the table it reads or
// writes first (LabelNone for owner leases, change stamps and watches),
// result the result's kind (storecore.Outcome.Kind, for example
// "conflict"), else ResultOK or ResultError, and error_class
// storecore.ErrorClass (LabelNone on success). All are bounded sets.
// Safe for concurrent use.
type StoreObserver struct {
	tracer   trace.Tracer // nil: no spans
	ops      *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

// NewStoreObserver returns a StoreObserver whose metrics are registered on
// opts.Registerer (an error when they are registered there already).
func NewStoreObserver(opts Options) (*StoreObserver, error) {
	buckets := DurationBucketsOr(opts.Buckets)
	o := &StoreObserver{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zlink_store_operations_total",
			Help: "Store operations that ended, by operation, table, result kind and error class.",
		}, []string{"operation", "table", "result", "error_class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zlink_store_operation_duration_seconds",
			Help:    "Duration of store operations, by operation, table and error class.",
			Buckets: buckets,
		}, []string{"operation", "table", "error_class"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zlink_store_operations_in_flight",
			Help: "Store operations running now, by operation.",
		}, []string{"operation"}),
	}
	if opts.TracerProvider != nil {
		o.tracer = opts.TracerProvider.Tracer(InstrumentationName)
	}
	if err := Register(opts.Registerer, o.ops, o.duration, o.inFlight); err != nil {
		return nil, err
	}
	return o, nil
}

// Operation is a store operation in flight, as its context carries it
// (OperationFrom). The etcd instrumentation counts the operation's
// transactions on it.
type Operation struct {
	// Op is the operation.
	Op       storecore.Op
	attempts atomic.Int64
}

// NoteAttempt counts one transaction the operation sent.
func (o *Operation) NoteAttempt() { o.attempts.Add(1) }

// Attempts returns the number of transactions the operation sent so far.
func (o *Operation) Attempts() int64 { return o.attempts.Load() }

// operationKey is the context key of the Operation in flight.
type operationKey struct{}

// OperationFrom returns the operation whose context ctx is (or derives
// from), as a StoreObserver's Start put it there; nil outside one.
func OperationFrom(ctx context.Context) *Operation {
	op, _ := ctx.Value(operationKey{}).(*Operation)
	return op
}

// OperationName returns the name of the operation in flight in ctx, or
// LabelNone: the operation label of metrics about what it sends.
func OperationName(ctx context.Context) string {
	if op := OperationFrom(ctx); op != nil {
		return op.Op.Name
	}
	return LabelNone
}

// Start implements storecore.Observer: it counts the operation in flight,
// starts its span (a child of ctx's span, if any) and puts both in the
// context the operation runs with.
func (o *StoreObserver) Start(ctx context.Context, op storecore.Op) context.Context {
	o.inFlight.WithLabelValues(op.Name).Inc()
	if o.tracer != nil {
		ctx, _ = o.tracer.Start(ctx, op.Name, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(AttrOperation.String(op.Name), AttrTable.String(tableLabel(op))))
	}
	return context.WithValue(ctx, operationKey{}, &Operation{Op: op})
}

// End implements storecore.Observer: it counts and times the operation and
// ends its span. A business outcome (a conflict, a stale token) is a
// result, never a span error; an error sets the span's status to Error
// with the error class.
func (o *StoreObserver) End(ctx context.Context, op storecore.Op, out storecore.Outcome) {
	table, class, result := tableLabel(op), errorClassLabel(out.Err), ResultLabel(out)
	o.inFlight.WithLabelValues(op.Name).Dec()
	o.ops.WithLabelValues(op.Name, table, result, class).Inc()
	o.duration.WithLabelValues(op.Name, table, class).Observe(out.Elapsed.Seconds())
	if o.tracer == nil {
		return
	}
	span := trace.SpanFromContext(ctx)
	var attempts int64
	if cur := OperationFrom(ctx); cur != nil {
		attempts = cur.Attempts()
	}
	span.SetAttributes(AttrResult.String(result), AttrErrorClass.String(class), AttrAttempts.Int64(attempts))
	if out.Err != nil {
		span.RecordError(out.Err)
		span.SetStatus(codes.Error, class)
	}
	span.End()
}

// ResultLabel is the result label of an outcome: its kind, else ResultOK
// or ResultError.
func ResultLabel(out storecore.Outcome) string {
	if k := out.Kind(); k != "" {
		return k
	}
	if out.Err != nil {
		return ResultError
	}
	return ResultOK
}

func tableLabel(op storecore.Op) string {
	if op.Table == "" {
		return LabelNone
	}
	return string(op.Table)
}

func errorClassLabel(err error) string {
	if c := storecore.ErrorClass(err); c != storecore.ClassNone {
		return c
	}
	return LabelNone
}

var _ storecore.Observer = (*StoreObserver)(nil)
