package autoconnect

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
)

// PeerSource lists the live peers of a mesh. The reconciler passes a filter
// with only AutoConnectType and MeshName set.
type PeerSource interface {
	// ListLivePeers returns the rows that match f and whose owner holds a
	// live lease. An error makes the tick a store failure. The rows are
	// the caller's: the source must not modify them, or what they
	// reference (metadata, routing ids), after returning them (the
	// reconciler keeps what it needs without copying it).
	ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error)
}

// WatchableSource is an optional PeerSource capability: the source's store
// can push change notifications for the tables the listing reads. A Loop
// whose reconciler's source has it reacts to changes right away.
type WatchableSource interface {
	// ChangeWatch returns the store's watcher and the tables to watch; ok is
	// false when the store cannot watch.
	ChangeWatch() (w location.ChangeWatcher, tables []location.Table, ok bool)
}
