// Package storecore is location.Store written once, over a small backend
// port.
//
// Every store method goes through the same steps (docs/architecture.md,
// "How a write flows"), here and nowhere else: an Observer's Start, the
// context check, validation of the input, then the backend — for writes and
// point reads a decision of package rules run through Backend.Decide, for
// lists and the rest one of the backend's reads — and the Observer's End.
// A backend (memstore's maps under a mutex, etcdstore's guarded
// transactions) implements Backend: how a decision's view of the state is
// built and its plan applied, how a table is listed, how owner leases,
// change stamps and change watches work. memstore and etcdstore embed Store
// and add only what is theirs (test hooks, garbage collection).
//
// Each decision names what it is expected to read (Call.Reads), so that a
// backend that reads remotely can fetch it in one round trip before the
// decision's first run; a backend in memory ignores it.
//
// Observer is the hook for per-operation instrumentation: latency, counts
// by result kind (Outcome.Kind) and error class (ErrorClass), a tracing
// span named after the operation and its table (Op). It is called for every
// operation of every store built on Store, and for backend operations run
// through Do.
//
// The package sits above rules and below the stores: it imports location,
// rules and keys, never a store or etcd.
package storecore
