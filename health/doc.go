// Package health answers Kubernetes' liveness and readiness probes for a
// process that uses the location store: /livez and /readyz, with
// ?verbose listing every check and ?exclude=<name> leaving one out, and
// /livez/<name>, /readyz/<name> for one check, like the Kubernetes API
// server's healthz endpoints.
//
// The checks are the caller's: NewHandler takes them, each with a name, a
// timeout and whether it counts for liveness. Every check counts for
// readiness. The package provides the checks of a session (SessionCheck)
// and of an auto-connect loop (AutoConnectCheck); package
// observe/etcdobserve provides the etcd one (LeaderCheck, StoreCheck).
//
// # Liveness and readiness
//
// A failed liveness probe restarts the container; a failed readiness probe
// only takes the pod out of its Services' endpoints until it passes again.
// So a check counts for liveness only when a restart fixes what it finds:
// a deadlocked process, a state it cannot leave by itself. etcd that is
// down, without a leader or unreachable, a session that is not trusted and
// an auto-connect loop in store failure are not such states — restarting
// every pod of the mesh because etcd lost its quorum turns an etcd outage
// into a full outage (every process reconnects, claims new leases and
// re-publishes its rows at once when etcd comes back) and fixes nothing.
// They make the process unready instead: it keeps its connections and
// retries, and becomes ready again by itself. Only the built-in "ping"
// check (the process serves HTTP) and the caller's own liveness checks
// count for /livez.
package health
