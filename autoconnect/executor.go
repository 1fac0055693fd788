package autoconnect

import "context"

// Executor is the transport side of auto-connect. Its optional capabilities
// are the small interfaces below; the reconciler finds them by type
// assertion once, at construction, and their presence changes the algorithm
// (an executor without DisconnectProber is not the same as one whose prober
// always answers false).
//
// The reconciler never holds its lock while calling the executor, so every
// method may call back into the reconciler (for example the OnDisconnected
// handler from inside Disconnect).
type Executor interface {
	// Connect dials t, or records the intent to; it reports whether t may
	// now be considered connected. Failures are reported as false (and
	// retried on a later tick), never as panics. It must return promptly
	// once ctx is done: stopping a Loop (also on a lost owner lease) waits
	// for the tick in flight.
	Connect(ctx context.Context, t Target) bool
	// Disconnect drops the connection to t (fire and forget).
	Disconnect(t Target)
}

// DisconnectProber is an optional Executor capability: it tells whether the
// transport to a target is gone. With it the reconciler drops active targets
// whose transport went away, waits for an old connection to close before
// reusing its key, and skips Disconnect calls for closed targets.
type DisconnectProber interface {
	// IsDisconnected reports whether the transport to t is closed.
	IsDisconnected(t Target) bool
}

// DisconnectNotifier is an optional Executor capability: the transport
// reports endpoints it lost.
type DisconnectNotifier interface {
	// OnDisconnected registers handler; the executor calls it, from any
	// goroutine, with each endpoint whose connection it lost.
	OnDisconnected(handler func(endpoint string))
}

// StalePeerSweeper is an optional Executor capability: after each tick that
// is not in a recovery window, the transport may drop peers that are not
// among the candidates.
type StalePeerSweeper interface {
	// DisconnectStalePeers receives every candidate of the tick, dialed or
	// not, draining ones included.
	DisconnectStalePeers(candidates []Target)
}

// NotRequiredReceiver is an optional Executor capability: the transport
// learns which peers need no connection (RouteMesh client pairs).
type NotRequiredReceiver interface {
	// ReplaceNotRequired receives the tick's complete not-required list.
	ReplaceNotRequired(targets []Target)
}

// PeerExpecter is an optional Executor capability: the transport
// pre-registers admission expectations for every candidate.
type PeerExpecter interface {
	// ExpectPeers receives every candidate of the tick.
	ExpectPeers(candidates []Target)
}
