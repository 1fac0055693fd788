package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Change stamps (decision E-5): one key per (kind, mesh) counter, put
// unconditionally by every transaction that changes a row of the scope; the
// stamp is the key's Version, which moves by one per such transaction (so a
// transaction that changes several rows of a scope moves it once), and is 0
// before the first change. Stamps increase on change and never otherwise.

// ChangeStamp returns the stamp of one (kind, mesh) counter: its key's
// Version, 0 when absent. It implements storecore.Backend.
func (b backend) ChangeStamp(ctx context.Context, c rules.StampCounter) (int64, error) {
	return b.s.stampVersion(ctx, b.s.layout.StampKey(string(c.Kind), c.Mesh))
}

// MeshNodeChangeStamp returns a mesh's mesh-node stamp: its key's Version,
// 0 when absent. It implements storecore.Backend.
func (b backend) MeshNodeChangeStamp(ctx context.Context, meshName string) (int64, error) {
	return b.s.stampVersion(ctx, b.s.layout.MeshNodeStampKey(meshName))
}

// stampVersion reads one stamp key's Version (0 when absent).
func (s *Store) stampVersion(ctx context.Context, key string) (int64, error) {
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return 0, txn.Unavailable("read", err)
	}
	s.engine.NoteRevision(resp.Header.Revision)
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	return resp.Kvs[0].Version, nil
}
