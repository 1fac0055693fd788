package autoconnect

import "github.com/zlink-systems/zlink-etcd/location"

// DesiredSetChange reports what one tick connected and disconnected.
type DesiredSetChange struct {
	// AutoConnectType and MeshName are the local node's.
	AutoConnectType location.AutoConnectType
	MeshName        string
	// ConnectedEndpoints lists the endpoints connected in the tick, in
	// processing order; an endpoint may appear twice, or in both lists (a
	// peer restarted under the same endpoint).
	ConnectedEndpoints []string
	// DisconnectedEndpoints lists the endpoints disconnected in the tick, in
	// processing order.
	DisconnectedEndpoints []string
}

// EventSink receives the reconciler's events. It is called without the
// reconciler's lock held, at most once per tick, and only when one of the
// lists is non-empty. Store-failure retries, transport-reported losses and
// shutdown report nothing.
type EventSink interface {
	DesiredSetChanged(c DesiredSetChange)
}

// EventSinkFunc adapts a function to EventSink.
type EventSinkFunc func(c DesiredSetChange)

// DesiredSetChanged implements EventSink.
func (f EventSinkFunc) DesiredSetChanged(c DesiredSetChange) { f(c) }
