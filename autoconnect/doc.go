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
//     which caches ReadOwnerLease answers for one polling interval, reads
//     each owner at most once per tick (all of a tick's owners in one call
//     when the store is a location.OwnerLivenessReader: etcdstore answers
//     it with one request from its watch cache), and forgets the owners no
//     listing references any more.
//   - The Reconciler runs one tick at a time: it publishes the local peer
//     row (when there is one; a claim whose answer was lost is settled by
//     reading the row back), lists the live peers, diffs the desired
//     targets against the active ones and calls the Executor. It rides out
//     store failures (fail-static, blind retries within a grace window, a
//     recovery window without removals) and reports one DesiredSetChange per
//     tick.
//   - The Loop runs the reconciler every polling interval (fixed delay) and,
//     when the store can push change notifications (location.ChangeWatcher),
//     also right after a change. With change stamps it skips a tick while
//     nothing it depends on moved and the reconciler has nothing left to do.
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
// channel, so a burst of changes becomes one tick). Stop ends both (no tick
// starts after it began), lets the tick in flight finish (its context is
// cancelled only if Stop's context ends first), waits for them, and only
// then disconnects the peers and removes the local row; no goroutine of the
// loop outlives Stop.
//
// # Wiring, shutdown and lease loss
//
// A node wires, in this order: a LeaseTracker over the store; a source over
// the store and the tracker (MeshNodeSource or PeerRowSource); a Reconciler
// with the source, the executor and, to publish a peer row, LocalRow (its
// OwnerID is the node's owner id) and the store as Publisher; a Loop with
// the reconciler and, for change stamps, Stamps (the store) and LiveOwners
// (the same tracker). Loop.Start runs the first tick.
//
// A graceful leave, in this order:
//
//  1. Loop.Stop: no tick starts any more, the tick in flight finishes (a
//     write it sent runs to its outcome, bounded by Stop's context: a
//     write cancelled on its way could still land after the removals
//     below, and a row it creates would stay), every peer is disconnected
//     and the local peer row is removed;
//  2. the store's RemoveAllByOwner with the node's owner token: the
//     descriptor and every other row of the owner (it needs the lease to be
//     live: releasing first would make it remove nothing, and the rows would
//     stay until their garbage collection);
//  3. ReleaseOwnerLease with the token;
//  4. closing the store.
//
// When the owner lease is lost (revoked, expired, taken over; a session's
// Done), stop acting on it at once and write nothing with it:
//
//  1. Loop.PrepareTransportShutdown: it cancels the timers, the watch and
//     the tick in flight, waits for that tick, and disconnects every peer.
//     It makes no store call. The wait is short because the tick's calls
//     return promptly once their context is cancelled: a store call must
//     (etcdstore's do, also a write whose answer was lost: a cancellation
//     ends its resolution at once and it answers location.ErrOutcomeUnknown;
//     memstore never blocks), and so must Executor.Connect. No connection
//     is started after it. Do not call
//     FinishTransportShutdown (or Stop) afterwards: it removes the local
//     peer row by owner id and row generation, which the next incarnation
//     may already have taken over.
//  2. Discard the Loop and its Reconciler (a stopped Loop does not start
//     again). The LeaseTracker may be kept.
//  3. To rejoin: claim a new lease, publish the descriptor with the next
//     lifecycle generation, then build a new Reconciler and Loop as above
//     and Start it. The new reconciler's first claim of the peer row
//     conflicts with the row of the lost lease (same owner id) and renews
//     it under the stored generation. An executor that registers several
//     OnDisconnected handlers should drop the discarded reconciler's.
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
//   - A claim of the local row whose answer was lost, or that conflicts
//     with a row this owner id published before (an earlier lease), is
//     settled by reading the row back and renewing it under the stored
//     generation; a repeated rejection is logged at Warn (at most every
//     30 s).
//   - The lease tracker forgets owners no listing references, reads each
//     owner once per tick (a missing one too), at most 8 at a time or all
//     at once from a store that can (location.OwnerLivenessReader), and its
//     live-owner version also moves when a followed owner appears or goes;
//     a listing records the answers it used, and the Loop remembers the
//     version the listing left.
//   - The Loop skips a tick only when the reconciler is settled (its local
//     row published or absent, every desired target connected, nothing
//     closing, no removals deferred); the framework skips whenever the local
//     row is published, and never without one.
//   - A polling interval of 0 is accepted by the tracker (no caching), not
//     by a Loop.
//
// docs/deviations.md lists these with their reasons.
package autoconnect
