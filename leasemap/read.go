package leasemap

import (
	"context"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Read returns ownerID's lease (03 §1.3): found while the owner key exists,
// with the generation (its CreateRevision) and the expiry recorded by the
// last claim or renewal; missing (with no other field, as the reference)
// otherwise. Liveness is the key's existence
// (decision E-2): etcd deletes it when the lease ends, so there is no
// "expired but present" state to clean up (03b E-19).
func (m *Map) Read(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	const op = "read owner lease"
	if err := ctxError(op, ctx); err != nil {
		return location.OwnerLeaseReadResult{}, err
	}
	if err := location.ValidateOwnerID(ownerID); err != nil {
		return location.OwnerLeaseReadResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
	}
	now := m.now()
	key := m.layout.OwnerKey(ownerID)
	got, err := m.kv.Get(ctx, key)
	if err != nil {
		return location.OwnerLeaseReadResult{}, txn.Unavailable("leasemap: "+op, err)
	}
	m.seenKV(key, got)
	if len(got.Kvs) == 0 {
		m.forget(ownerID)
		return location.OwnerLeaseReadResult{Kind: location.KindMissing}, nil
	}
	info, rec, err := infoOf(got)
	if err != nil {
		return location.OwnerLeaseReadResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
	}
	m.remember(ownerID, info)
	return location.OwnerLeaseReadResult{
		Kind:           location.KindFound,
		Token:          location.OwnerToken{OwnerID: ownerID, LeaseGeneration: info.generation},
		LeaseExpiresAt: time.UnixMilli(rec.ExpiresAtMs).UTC(),
		StoreNow:       now,
	}, nil
}
