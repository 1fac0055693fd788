package autoconnect

import (
	"context"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// LivenessChecker tells whether an owner holds a live lease; *LeaseTracker
// implements it.
type LivenessChecker interface {
	IsOwnerLive(ctx context.Context, ownerID string) (bool, error)
}

// PeerRowSource lists live peers from the peer table (the framework's
// generic peer resolver): ListPeers, then keep the rows with a known
// auto-connect type and role whose owner is live. Endpoints are normalised
// on read.
type PeerRowSource struct {
	store    PeerLister
	liveness LivenessChecker
}

// NewPeerRowSource returns a source over store, filtering by liveness.
func NewPeerRowSource(store PeerLister, liveness LivenessChecker) (*PeerRowSource, error) {
	if store == nil || liveness == nil {
		return nil, location.NewTypeError("autoconnect.peer_source", "peer row source needs a peer store and a liveness checker")
	}
	return &PeerRowSource{store: store, liveness: liveness}, nil
}

// ListLivePeers implements PeerSource.
func (s *PeerRowSource) ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	rows, err := s.store.ListPeers(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("autoconnect: list peers: %w", err)
	}
	live := make([]location.PeerLocation, 0, len(rows))
	for _, row := range rows {
		if !row.AutoConnectType.Known() || !row.Role.Known() {
			continue
		}
		ok, err := s.liveness.IsOwnerLive(ctx, row.OwnerID)
		if err != nil {
			return nil, err
		}
		if ok {
			row.Endpoint = keys.NormalizeEndpoint(row.Endpoint)
			live = append(live, row)
		}
	}
	return live, nil
}

// ChangeWatch implements WatchableSource: the peer table, when the store can
// watch.
func (s *PeerRowSource) ChangeWatch() (location.ChangeWatcher, []location.Table, bool) {
	return watchOf(s.store, location.TablePeers)
}
