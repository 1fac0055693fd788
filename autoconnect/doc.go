// Package autoconnect keeps a process's transport connections in line with
// the peers that the location store says are alive: the zlink framework's
// auto-connect planner, reconciler and loop, over any location store.
//
// The package has four layers:
//
//   - The planner (Candidates, Desired, NotRequired) is a set of pure
//     functions from the local description and the listed peer rows to
//     targets, keyed "<role>|<rid hex or endpoint>|<generation>".
//   - A PeerSource lists the live peers of a mesh. PeerRowSource reads the
//     peer table; MeshNodeSource maps live mesh-node descriptors to peer rows
//     (the framework's production RouteMesh wiring) and reads every page of
//     the listing. Both filter rows by owner liveness through a LeaseTracker,
//     which caches ReadOwnerLease answers for one polling interval.
//   - The Reconciler runs one tick at a time: it publishes the local peer
//     row (when there is one), lists the live peers, diffs the desired
//     targets against the active ones and calls the Executor. It rides out
//     store failures (fail-static, blind retries within a grace window, a
//     recovery window without removals) and reports one DesiredSetChange per
//     tick.
//   - The Loop runs the reconciler every polling interval (fixed delay) and,
//     when the store can push change notifications (location.ChangeWatcher),
//     also right after a change.
//
// # Concurrency
//
// The framework serialises the reconciler's state through a single-owner
// "state lane". This package uses one mutex per Reconciler instead: every
// read or write of the reconciler state is a short critical section, and the
// mutex is never held while the executor, the store, the peer source or the
// event sink is called. The executor may therefore call the OnDisconnected
// handler from any goroutine, also synchronously from inside Disconnect.
// Ticks are serialised by a second mutex, so two ticks never interleave
// (the framework does not serialise them; no behaviour depends on it).
//
// A Loop owns at most two goroutines: the polling goroutine, which runs every
// tick after Start's first one, and, when the store can watch, a watch
// goroutine that turns change notifications into tick requests (a one-slot
// channel, so a burst of changes becomes one tick). Stop cancels both, waits
// for them and for the tick in flight, and only then disconnects the peers
// and removes the local row; no goroutine of the loop outlives Stop.
//
// # Differences from the framework
//
//   - Every page of the mesh-node listing is read (the framework reads only
//     the first page).
//   - Endpoint comparison for the pairwise initiator uses byte order; the
//     framework uses locale collation (they differ only for rid-less rows).
//   - The lost-local-row check matches the listed rows against the local
//     row's full peer identity (role and rid, or endpoint when there is no
//     rid), not the rid alone.
//   - Executor.Connect reports failure as false; there is no exception path.
//   - A Loop's timer or change notification that arrives after Stop does
//     nothing; Stop waits for the tick in flight; concurrent Starts start one
//     loop; a stopped Loop cannot be started again.
//   - A change stamp that the store cannot tell (ok == false) forces a full
//     reconcile instead of comparing equal to the previous "no stamp".
//
// docs/deviations.md lists these with their reasons.
package autoconnect
