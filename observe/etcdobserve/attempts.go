package etcdobserve

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// ResolutionAppliedLate is the resolution label of a lost answer first
// resolved as not applied that turned out applied (txn.Attempt.EarlierApplied).
const ResolutionAppliedLate = "applied_late"

// Attributes of the "txn attempt" span event.
const (
	attrAttempt    = attribute.Key("zlink.txn.attempt")
	attrVerify     = attribute.Key("zlink.txn.verify")
	attrResult     = attribute.Key("zlink.txn.result")
	attrResolution = attribute.Key("zlink.txn.resolution")
)

// OnTxnAttempt counts one transaction of a store operation
// (etcdstore.Options.OnTxnAttempt): zlink_etcd_txn_attempts_total, and
// zlink_etcd_txn_outcome_unknown_total for a lost answer; it counts the
// attempt on the operation in flight (observe.Operation, the
// zlink.attempts attribute of its span) and adds a "txn attempt" event to
// the operation's span.
func (i *Instrumentation) OnTxnAttempt(ctx context.Context, a txn.Attempt) {
	name := observe.OperationName(ctx)
	if op := observe.OperationFrom(ctx); op != nil {
		op.NoteAttempt()
	}
	i.attempts.WithLabelValues(name, string(a.Result)).Inc()
	if a.Result == txn.AttemptOutcomeUnknown {
		i.outcomeUnknown.WithLabelValues(name, string(a.Resolution)).Inc()
	}
	if a.EarlierApplied {
		i.outcomeUnknown.WithLabelValues(name, ResolutionAppliedLate).Inc()
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := []attribute.KeyValue{attrAttempt.Int(a.Number), attrVerify.Bool(a.Verify), attrResult.String(string(a.Result))}
		if a.Resolution != "" {
			attrs = append(attrs, attrResolution.String(string(a.Resolution)))
		}
		span.AddEvent("txn attempt", trace.WithAttributes(attrs...))
	}
}
