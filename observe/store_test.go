package observe_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/observe/internal/promtest"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// Each outcome is counted once under its labels, timed once, and the
// operation is in flight (and in its context) between Start and End.
func TestStoreObserverLabels(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name       string
		op         storecore.Op
		out        storecore.Outcome
		table      string
		result     string
		errorClass string
	}{
		{name: "a write", op: storecore.Op{Name: "UpdateSpot", Table: location.TableSpots},
			out:   storecore.Outcome{Result: location.WriteResult{Status: location.Stored}},
			table: "spots", result: "stored", errorClass: "none"},
		{name: "a result kind, no table", op: storecore.Op{Name: "ClaimOwnerLease"},
			out:   storecore.Outcome{Result: location.OwnerLeaseClaimResult{Kind: location.KindClaimed}},
			table: "none", result: "claimed", errorClass: "none"},
		{name: "a result without a kind", op: storecore.Op{Name: "ResolveSpot", Table: location.TableSpots},
			out:   storecore.Outcome{Result: (*location.SpotLocation)(nil)},
			table: "spots", result: "ok", errorClass: "none"},
		{name: "bad input", op: storecore.Op{Name: "UpdateSpot", Table: location.TableSpots},
			out:   storecore.Outcome{Err: fmt.Errorf("memstore: UpdateSpot: %w", location.ErrInvalidArgument)},
			table: "spots", result: "error", errorClass: "invalid_argument"},
		{name: "the caller's context", op: storecore.Op{Name: "ListSpots", Table: location.TableSpots},
			out:   storecore.Outcome{Err: canceled.Err()},
			table: "spots", result: "error", errorClass: "canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			o, err := observe.NewStoreObserver(observe.Options{Registerer: reg})
			require.NoError(t, err)
			ctx := o.Start(t.Context(), tc.op)
			require.Equal(t, tc.op, observe.OperationFrom(ctx).Op)
			require.Equal(t, tc.op.Name, observe.OperationName(ctx))
			require.Equal(t, 1.0, promtest.Value(t, reg, "zlink_store_operations_in_flight", "operation", tc.op.Name))
			tc.out.Elapsed = 3 * time.Millisecond
			o.End(ctx, tc.op, tc.out)

			require.Equal(t, 0.0, promtest.Value(t, reg, "zlink_store_operations_in_flight", "operation", tc.op.Name))
			require.Equal(t, []string{fmt.Sprintf("error_class=%s,operation=%s,result=%s,table=%s", tc.errorClass, tc.op.Name, tc.result, tc.table)},
				promtest.Labels(t, reg, "zlink_store_operations_total"))
			require.Equal(t, 1.0, promtest.Value(t, reg, "zlink_store_operations_total"))
			h := promtest.Series(t, reg, "zlink_store_operation_duration_seconds", "operation", tc.op.Name, "table", tc.table, "error_class", tc.errorClass)
			require.Len(t, h, 1)
			require.Equal(t, uint64(1), h[0].GetHistogram().GetSampleCount())
			require.InDelta(t, 0.003, h[0].GetHistogram().GetSampleSum(), 1e-9)
		})
	}
	require.Nil(t, observe.OperationFrom(t.Context()))
	require.Equal(t, observe.LabelNone, observe.OperationName(t.Context()))
}

// On a real store every call is one observation: N operations, N counts.
func TestStoreObserverOnMemstore(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := observe.NewStoreObserver(observe.Options{Registerer: reg})
	require.NoError(t, err)
	s := memstore.New(memstore.Options{Clock: clock.NewManual(fixture.T0()).Now, Observer: o})
	ctx := t.Context()
	claim := storetest.Claim(t, ctx, s, "x", time.Minute)
	for range 3 {
		_, err := s.UpdateSpot(ctx, fixture.SPOT("x", claim.LeaseGeneration), location.IntentNewClaim)
		require.NoError(t, err)
	}
	_, err = s.ResolveSpot(ctx, fixture.SpotKey())
	require.NoError(t, err)

	require.Equal(t, []string{
		"error_class=none,operation=ClaimOwnerLease,result=claimed,table=none",
		"error_class=none,operation=ResolveSpot,result=ok,table=spots",
		"error_class=none,operation=UpdateSpot,result=rejectedConflict,table=spots",
		"error_class=none,operation=UpdateSpot,result=stored,table=spots",
	}, promtest.Labels(t, reg, "zlink_store_operations_total"))
	require.Equal(t, 1.0, promtest.Value(t, reg, "zlink_store_operations_total", "operation", "UpdateSpot", "result", "stored"))
	require.Equal(t, 2.0, promtest.Value(t, reg, "zlink_store_operations_total", "operation", "UpdateSpot", "result", "rejectedConflict"))
	require.Equal(t, 3.0, promtest.Value(t, reg, "zlink_store_operation_duration_seconds", "operation", "UpdateSpot"))
}

// With a TracerProvider every operation is one span, a child of the
// caller's, with its attributes; an error sets the status, a business
// outcome does not.
func TestStoreObserverSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	o, err := observe.NewStoreObserver(observe.Options{TracerProvider: tp})
	require.NoError(t, err)
	s := memstore.New(memstore.Options{Clock: clock.NewManual(fixture.T0()).Now, Observer: o})

	ctx, parent := tp.Tracer("test").Start(t.Context(), "request")
	claim := storetest.Claim(t, ctx, s, "x", time.Minute)
	_, err = s.UpdateSpot(ctx, fixture.SPOT("x", claim.LeaseGeneration), location.IntentNewClaim)
	require.NoError(t, err)
	_, err = s.UpdateSpot(ctx, location.SpotLocation{}, location.IntentNewClaim)
	require.Error(t, err)
	parent.End()

	spans := rec.Ended()
	require.Len(t, spans, 4)
	type got struct {
		name   string
		attrs  map[attribute.Key]attribute.Value
		status codes.Code
	}
	var ops []got
	for _, sp := range spans[:3] {
		require.Equal(t, parent.SpanContext().SpanID(), sp.Parent().SpanID(), "a child of the caller's span")
		attrs := map[attribute.Key]attribute.Value{}
		for _, a := range sp.Attributes() {
			attrs[a.Key] = a.Value
		}
		ops = append(ops, got{name: sp.Name(), attrs: attrs, status: sp.Status().Code})
	}
	attrs := func(op, table, result, class string) map[attribute.Key]attribute.Value {
		return map[attribute.Key]attribute.Value{
			observe.AttrOperation: attribute.StringValue(op), observe.AttrTable: attribute.StringValue(table),
			observe.AttrResult: attribute.StringValue(result), observe.AttrErrorClass: attribute.StringValue(class),
			observe.AttrAttempts: attribute.Int64Value(0),
		}
	}
	require.Equal(t, []got{
		{name: "ClaimOwnerLease", attrs: attrs("ClaimOwnerLease", "none", "claimed", "none"), status: codes.Unset},
		{name: "UpdateSpot", attrs: attrs("UpdateSpot", "spots", "stored", "none"), status: codes.Unset},
		{name: "UpdateSpot", attrs: attrs("UpdateSpot", "spots", "error", "invalid_argument"), status: codes.Error},
	}, ops)
	require.Len(t, spans[2].Events(), 1, "the error is recorded")
}

// Registration is all or nothing, and a second set of the same metrics on
// one registry is refused with the way out.
func TestRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := observe.NewStoreObserver(observe.Options{Registerer: reg})
	require.NoError(t, err)
	_, err = observe.NewStoreObserver(observe.Options{Registerer: reg})
	require.ErrorContains(t, err, "WrapRegistererWith")

	labelled := prometheus.NewRegistry()
	for _, store := range []string{"a", "b"} {
		_, err = observe.NewStoreObserver(observe.Options{Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"store": store}, labelled)})
		require.NoError(t, err)
	}

	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "other_total", Help: "h"})
	taken := prometheus.NewCounter(prometheus.CounterOpts{Name: "taken_total", Help: "h"})
	require.NoError(t, reg.Register(taken))
	require.Error(t, observe.Register(reg, other, taken))
	require.NoError(t, reg.Register(other), "the collectors registered before the failure are unregistered")
	require.NoError(t, observe.Register(nil, other), "a nil registerer registers nothing")
}
