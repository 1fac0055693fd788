package etcdobserve

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Request types (the request label of zlink_etcd_requests_total).
const (
	RequestGet     = "get"      // a Get of one key
	RequestRange   = "range"    // a Get of a range or prefix
	RequestPut     = "put"      // a Put
	RequestDelete  = "delete"   // a Delete
	RequestTxn     = "txn"      // a Txn that may write
	RequestTxnRead = "txn_read" // a Txn whose branches only read
	RequestCompact = "compact"  // a Compact
)

// Span attributes of an etcd request's span (OpenTelemetry's database
// conventions).
const (
	attrDBSystem    = attribute.Key("db.system.name")
	attrDBOperation = attribute.Key("db.operation.name")
	attrStatusCode  = attribute.Key("db.response.status_code")
)

// WrapKV returns kv with every request counted (zlink_etcd_requests_total,
// zlink_etcd_request_duration_seconds) under the store operation found in
// its context and, when that operation is traced, sent in a child span of
// the operation's, named "etcd <request>". Install it innermost
// (etcdstore.Options.WrapKV), so that it sees each request as sent, every
// retry included.
func (i *Instrumentation) WrapKV(kv clientv3.KV) clientv3.KV { return &observedKV{KV: kv, i: i} }

// observedKV is WrapKV's wrapper.
type observedKV struct {
	clientv3.KV
	i *Instrumentation
}

// Get implements clientv3.KV.
func (k *observedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (resp *clientv3.GetResponse, err error) {
	err = k.i.send(ctx, getKind(clientv3.OpGet(key, opts...)), func(ctx context.Context) error {
		resp, err = k.KV.Get(ctx, key, opts...)
		return err
	})
	return resp, err
}

// Put implements clientv3.KV.
func (k *observedKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (resp *clientv3.PutResponse, err error) {
	err = k.i.send(ctx, RequestPut, func(ctx context.Context) error {
		resp, err = k.KV.Put(ctx, key, val, opts...)
		return err
	})
	return resp, err
}

// Delete implements clientv3.KV.
func (k *observedKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (resp *clientv3.DeleteResponse, err error) {
	err = k.i.send(ctx, RequestDelete, func(ctx context.Context) error {
		resp, err = k.KV.Delete(ctx, key, opts...)
		return err
	})
	return resp, err
}

// Compact implements clientv3.KV.
func (k *observedKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (resp *clientv3.CompactResponse, err error) {
	err = k.i.send(ctx, RequestCompact, func(ctx context.Context) error {
		resp, err = k.KV.Compact(ctx, rev, opts...)
		return err
	})
	return resp, err
}

// Do implements clientv3.KV.
func (k *observedKV) Do(ctx context.Context, op clientv3.Op) (resp clientv3.OpResponse, err error) {
	kind := RequestTxn
	switch {
	case op.IsGet():
		kind = getKind(op)
	case op.IsPut():
		kind = RequestPut
	case op.IsDelete():
		kind = RequestDelete
	}
	err = k.i.send(ctx, kind, func(ctx context.Context) error {
		resp, err = k.KV.Do(ctx, op)
		return err
	})
	return resp, err
}

// Txn implements clientv3.KV: the transaction is built on the wrapped KV
// when committed, with the context of the request's span.
func (k *observedKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (resp *clientv3.TxnResponse, err error) {
		kind := RequestTxn
		if ops.OnlyReads() {
			kind = RequestTxnRead
		}
		err = k.i.send(ctx, kind, func(ctx context.Context) error {
			resp, err = ops.Send(ctx, k.KV)
			return err
		})
		return resp, err
	})
}

// getKind tells a Get of one key from a range read.
func getKind(op clientv3.Op) string {
	if len(op.RangeBytes()) > 0 {
		return RequestRange
	}
	return RequestGet
}

// send sends one request: counted, timed, and traced when its context's
// span records.
func (i *Instrumentation) send(ctx context.Context, kind string, fn func(ctx context.Context) error) error {
	var span trace.Span
	if i.tracer != nil && trace.SpanFromContext(ctx).IsRecording() {
		ctx, span = i.tracer.Start(ctx, "etcd "+kind, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attrDBSystem.String("etcd"), attrDBOperation.String(kind)))
	}
	start := time.Now()
	err := fn(ctx)
	code := txn.Code(err).String()
	i.requests.WithLabelValues(observe.OperationName(ctx), kind, code).Inc()
	i.requestDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	if span != nil {
		span.SetAttributes(attrStatusCode.String(code))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
	return err
}
