// Package observe instruments a process that uses the location store:
// Prometheus metrics and OpenTelemetry traces of every store operation,
// and metrics of the owner-lease sessions and the auto-connect loop. It
// works with any store built on storecore (memstore, etcdstore); what is
// particular to etcd (requests, transactions, read retries, watches) is in
// observe/etcdobserve, and the health probes are in package health.
//
//   - StoreObserver is a storecore.Observer: per operation a latency
//     histogram, a counter by result kind and error class, an in-flight
//     gauge, and (with a TracerProvider) one span. It puts the operation in
//     flight in the context (OperationFrom), where etcdobserve finds it to
//     label the etcd requests and transactions the operation sends and to
//     make their spans the operation's children.
//   - NodeMetrics holds the metrics of a node's owner-lease sessions
//     (session.Options.OnRenewal, TrackSession) and of its auto-connect
//     loop (autoconnect.LoopOptions.OnTick, autoconnect.EventSink,
//     SetAutoConnect).
//
// Metrics are registered on the prometheus.Registerer the caller passes,
// never on the global one; two sets of the same metrics on one registry
// need a label each (prometheus.WrapRegistererWith). Every metric, span
// and attribute is listed in docs/observability.md.
package observe
