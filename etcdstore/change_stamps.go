package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Change stamps (decision E-5): one key per (kind, mesh) counter, put
// unconditionally by every transaction that changes a row of the scope; the
// stamp is the key's Version, which moves by one per such transaction (so a
// transaction that changes several rows of a scope moves it once), and is 0
// before the first change. Stamps increase on change and never otherwise.

// GetChangeStamp returns the stamp of (scope.Kind, scope.MeshName): a nil or
// empty mesh name selects the kind's global counter; ChannelName is ignored
// (anomaly A-06, reproduced). No validation. It implements
// location.ChangeStampReader.
func (s *Store) GetChangeStamp(ctx context.Context, scope location.ChangeStampScope) (int64, error) {
	mesh := ""
	if scope.MeshName != nil {
		mesh = *scope.MeshName
	}
	return s.stampVersion(ctx, "GetChangeStamp", s.layout.StampKey(string(scope.Kind), mesh))
}

// GetMeshNodeChangeStamp returns a stamp that moves whenever a mesh-node row
// of the mesh is created, really updated, taken over or removed (also by
// RemoveAllByOwner and garbage collection), and never otherwise. Always ok.
// It implements location.MeshNodeChangeStamper.
func (s *Store) GetMeshNodeChangeStamp(ctx context.Context, meshName string) (int64, bool, error) {
	v, err := s.stampVersion(ctx, "GetMeshNodeChangeStamp", s.layout.MeshNodeStampKey(meshName))
	if err != nil {
		return 0, false, err
	}
	return v, true, nil
}

// stampVersion reads one stamp key's Version (0 when absent).
func (s *Store) stampVersion(ctx context.Context, op, key string) (int64, error) {
	if err := checkContext(ctx, op); err != nil {
		return 0, err
	}
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return 0, txn.Unavailable("etcdstore: "+op, err)
	}
	s.engine.NoteRevision(resp.Header.Revision)
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	return resp.Kvs[0].Version, nil
}
