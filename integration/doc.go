// Package integration holds the etcd store's fault, linearizability and
// least-privilege tests; it has no code outside its tests.
//
// The linearizability tests run a mixed workload of concurrent clients
// against etcdstore on an embedded three-member cluster while faults are
// injected (member kills and restarts, a blackholed client bridge, lost
// responses, cancelled calls, compactions, owner leases revoked or expired
// between a decision and its commit), record every call with its start and
// end times and its result, and check the history with porcupine, with the
// in-memory reference (memstore) as the sequential model. Invariants that a
// linearizability check cannot see (lost acknowledged writes, fenced writes
// after their lease ended, capacity ledgers, the owner index, goroutine
// leaks) are checked after every run. docs/reliability.md describes the
// model, the faults and the figures of a full run; docs/deployment.md the
// least-privilege deployment the least-privilege tests check.
//
// `go test ./integration/` runs the short version; `go test -tags stress`
// (make stress) the full one.
package integration
