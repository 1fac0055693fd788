package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// GetChangeStamp returns the change-stamp counter of (scope.Kind,
// scope.MeshName): a nil or empty mesh name selects the kind's global
// counter; ChannelName is ignored (anomaly A-06, reproduced: a client-server
// channel is passed as MeshName). Counters start at 0 and move by exactly 1
// per changed row (03 §4). No validation.
func (s *Store) GetChangeStamp(ctx context.Context, scope location.ChangeStampScope) (int64, error) {
	return decide(ctx, s, "GetChangeStamp", nil, func(*rules.Tx) (int64, error) {
		c := rules.StampCounter{Kind: scope.Kind}
		if scope.MeshName != nil {
			c.Mesh = *scope.MeshName
		}
		return s.stamps[c], nil
	})
}

// GetMeshNodeChangeStamp implements location.MeshNodeChangeStamper: a
// per-mesh counter that moves by 1 whenever a mesh-node row of the mesh is
// created, really updated, taken over or removed (also by RemoveAllByOwner),
// and never otherwise. Always ok.
func (s *Store) GetMeshNodeChangeStamp(ctx context.Context, meshName string) (int64, bool, error) {
	stamp, err := decide(ctx, s, "GetMeshNodeChangeStamp", nil, func(*rules.Tx) (int64, error) {
		return s.meshNodeStamps[meshName], nil
	})
	if err != nil {
		return 0, false, err
	}
	return stamp, true, nil
}
