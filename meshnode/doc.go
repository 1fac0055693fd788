// Package meshnode runs one node of a RouteMesh: it owns an owner-lease
// session, publishes the node's mesh-node descriptor (and, if asked, its
// peer row), keeps the transport connected to the live peers with the
// auto-connect loop, stops acting as soon as its lease can no longer be
// trusted, rejoins under a new lease, and leaves in the right order.
//
// One call wires it all (what autoconnect's NewLeaseTracker,
// NewMeshNodeSource, NewReconciler and NewLoop, plus a session, do when
// wired by hand; those stay available for other wirings):
//
//	node, err := meshnode.Join(ctx, meshnode.Options{
//		Store:      store,    // etcdstore.Store, memstore.Store, …
//		Executor:   transport, // autoconnect.Executor: Connect / Disconnect
//		Descriptor: location.MeshNodeDescriptor{MeshName: "m", RID: "node-7", OwnerID: "node-7", Endpoint: "tcp://10.0.0.7:7300", …},
//	})
//	…
//	defer node.Leave(context.Background())
//
// # Life of a node
//
// A node lives as a sequence of incarnations, one at a time. An
// incarnation is one owner lease (a session.Session), one lifecycle
// generation in the descriptor, and one autoconnect reconciler and loop.
// Join starts the first: it claims the lease, publishes the descriptor
// with the lease's token, starts the loop (which publishes the peer row)
// and returns after the loop's first tick.
//
// When the incarnation's lease can no longer be trusted — its lease was
// revoked, expired or taken over (session.ErrLeaseLost), or no renewal was
// confirmed before its trust deadline, TTL − fencing margin after the last
// confirmed one (session.ErrDeadlinePassed; the node watches the deadline
// itself, as the session's Done closes only once a renewal in flight
// returned) — the node, at once:
//
//  1. hands the application the signal: Options.OnEvent receives
//     EventLeaseLost with the cause, and the incarnation's session
//     (Incarnation().Session) is not Valid any more. Anything else the
//     application does under the lease (its own writes) must stop now;
//  2. tells the executor to disconnect every peer, then stops the loop
//     without a store call (Loop.PrepareTransportShutdown: the tick in
//     flight has its context cancelled and connects nothing more; the peer
//     row is not removed, the next incarnation takes it over).
//     EventFenced follows.
//
// Both happen when the lease stops being trusted, so the node stops acting
// before the lease can have ended in the store (the fencing margin covers
// the time this takes); the fault tests check it with each node's own
// timestamps.
// The context an Executor's Connect receives carries the incarnation
// (IncarnationFrom): an executor can refuse a connection whose lease is no
// longer trusted, closing the last window.
//
// Unless Options.NoRejoin is set, the node then rejoins: it releases the
// ended lease if it may still live, claims a new one, publishes its
// descriptor with the next lifecycle generation (peers see a new target and
// reconnect) and starts a new reconciler and loop. Claims against an
// unreachable store are retried with a jittered backoff (the session's),
// other failed attempts after Options.RejoinBackoff. A claim whose answer
// was lost may leave a lease the node cannot name; the owner id then holds
// it until it expires (at most the TTL) and the node waits.
//
// # Leaving
//
// Leave (or Close) leaves gracefully in the only order that removes
// everything: the loop stops (its tick in flight finishes first, bounded by
// Leave's context and the lease's trust, session.Session.WhileTrusted:
// the session's end or its trust deadline; peers disconnected, peer row
// removed), then RemoveAllByOwner removes every row of the owner id while
// the lease still lives, then the session closes and releases the lease.
// Releasing first would make the removal a no-op. Orphan stops the node as
// a crash would: connections dropped, nothing written, the lease left to
// expire.
//
// # Observability
//
// State returns a snapshot read without races: the phase (joining, joined,
// rejoining, leaving, left), the current incarnation (number, token,
// lifecycle generation, session), the session's Status, whether the lease
// is trusted now, the loop's store-failure state, the desired and
// connected counts, the last tick (start, duration, skipped, store
// failure), lease losses and join attempts. ActiveTargets lists the
// connected peers. Options.Logger receives the logs, Options.OnEvent the
// events; the session's OnRenewal hook (Options.Session) sees every
// renewal.
package meshnode
