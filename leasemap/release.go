package leasemap

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Release ends the token's lease (03 §1.5; 03b E-19): the owner key is read,
// must have the token's generation, and is deleted by a transaction guarded
// by that CreateRevision; the etcd lease is then revoked. Anything else is
// stale. The owner's rows stay. Release takes no validation (reference).
func (m *Map) Release(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	const op = "release owner lease"
	if err := ctxError(op, ctx); err != nil {
		return "", err
	}
	if t.LeaseGeneration <= 0 {
		return location.KindStale, nil
	}
	key := m.layout.OwnerKey(t.OwnerID)
	for range m.maxAtt {
		if cerr := ctx.Err(); cerr != nil {
			return "", fmt.Errorf("leasemap: %s: %w", op, cerr)
		}
		got, err := m.kv.Get(ctx, key)
		if err != nil {
			return "", txn.Unavailable("leasemap: "+op, err)
		}
		m.seenKV(key, got)
		if len(got.Kvs) == 0 || got.Kvs[0].CreateRevision != t.LeaseGeneration {
			return location.KindStale, nil
		}
		leaseID := clientv3.LeaseID(got.Kvs[0].Lease)
		resp, err := m.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", t.LeaseGeneration)).
			Then(clientv3.OpDelete(key)).
			Commit()
		switch {
		case err == nil && resp.Succeeded:
			m.released(ctx, t.OwnerID, key, leaseID, resp.Header.Revision)
			return location.KindReleased, nil
		case err == nil:
			return location.KindStale, nil
		case !txn.IsAmbiguous(err):
			return "", txn.Unavailable("leasemap: "+op, err)
		}
		// The response was lost: the key of this generation existed just
		// before; if it is gone now, it ended (by this delete, or by expiring
		// meanwhile, which the reference also answers "released"). If it is
		// still there, the delete was not applied: try again.
		rctx, cancel := m.resolveContext(ctx)
		now, gerr := m.kv.Get(rctx, key)
		cancel()
		if gerr != nil {
			return "", fmt.Errorf("leasemap: %s: %w: %w", op, txn.ErrOutcomeUnknown, err)
		}
		m.seenKV(key, now)
		if len(now.Kvs) == 0 || now.Kvs[0].CreateRevision != t.LeaseGeneration {
			m.released(ctx, t.OwnerID, key, leaseID, now.Header.Revision)
			return location.KindReleased, nil
		}
	}
	return "", fmt.Errorf("leasemap: %s: %w (%w)", op, txn.ErrContention, location.ErrUnavailable)
}

// released finishes a release: forget the lease and revoke it.
func (m *Map) released(ctx context.Context, ownerID, key string, leaseID clientv3.LeaseID, rev int64) {
	m.forget(ownerID)
	m.seen(txn.Observation{Key: key, Revision: rev})
	m.revoke(ctx, leaseID)
}

// Expire ends ownerID's current lease at once, as if its TTL had elapsed:
// the etcd lease is revoked, which deletes the owner key. Rows are not
// touched. The conformance harness's ExpireOwnerLease hook; a missing lease
// is not an error.
func (m *Map) Expire(ctx context.Context, ownerID string) error {
	const op = "expire owner lease"
	if err := ctxError(op, ctx); err != nil {
		return err
	}
	key := m.layout.OwnerKey(ownerID)
	got, err := m.kv.Get(ctx, key)
	if err != nil {
		return txn.Unavailable("leasemap: "+op, err)
	}
	m.forget(ownerID)
	if len(got.Kvs) == 0 {
		return nil
	}
	resp, err := m.lease.Revoke(ctx, clientv3.LeaseID(got.Kvs[0].Lease))
	switch {
	case err == nil:
		m.seen(txn.Observation{Key: key, Revision: resp.Header.Revision})
	case !txn.IsLeaseNotFound(err):
		return txn.Unavailable("leasemap: "+op, err)
	}
	return nil
}
