package leasemap

import (
	"bytes"
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Release ends the token's lease (03 §1.5; 03b E-19): the owner key is read,
// must have the token's generation, and is deleted by a transaction guarded
// by that CreateRevision; the etcd lease is then revoked. Anything else is
// stale. The owner's rows stay. Release takes no validation (reference).
//
// The deleting transaction also writes a release marker (Layout.
// ReleaseMarkerKey: the owner and generation, holding this call's nonce, on
// a short etcd lease of its own), so that a lost response is resolved by
// reading whose delete ended the generation: this call's (released),
// another release's (stale: of two concurrent releases of one lease, one
// answers released), or none, the key having expired (released, as the
// reference answers for an expired entry, anomaly A-20).
func (m *Map) Release(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	const op = "release owner lease"
	if err := ctxError(op, ctx); err != nil {
		return "", err
	}
	if t.LeaseGeneration <= 0 {
		return location.KindStale, nil
	}
	key := m.layout.OwnerKey(t.OwnerID)
	marker := m.layout.ReleaseMarkerKey(t.OwnerID, t.LeaseGeneration)
	nonce := []byte(txn.NewNonce())
	markerLease := clientv3.NoLease
	var kind location.ResultKind
	defer func() {
		// The marker of a release that ended the generation stays until its
		// lease expires: a concurrent release whose response was lost reads
		// it. Otherwise the marker lease is revoked, so that an attempt of
		// this call still queued at the server cannot land after the answer.
		if kind != location.KindReleased {
			m.revoke(ctx, markerLease)
		}
	}()
	// lost is set once an attempt's response was lost: that attempt may
	// still land, so a later failure no longer proves nothing was applied,
	// and a key found gone may be this call's doing.
	lost := false
	failed := func(err error) error {
		if lost {
			return fmt.Errorf("leasemap: %s: %w: %w", op, txn.ErrOutcomeUnknown, err)
		}
		return txn.Unavailable("leasemap: "+op, err)
	}
	done := func(k location.ResultKind, leaseID clientv3.LeaseID, rev int64) (location.ResultKind, error) {
		if k == location.KindReleased {
			m.released(ctx, t.OwnerID, key, leaseID, rev)
		}
		kind = k
		return k, nil
	}
	var leaseID clientv3.LeaseID
	for range m.maxAtt {
		if cerr := ctx.Err(); cerr != nil {
			if lost {
				return "", failed(cerr)
			}
			return "", fmt.Errorf("leasemap: %s: %w", op, cerr)
		}
		got, err := m.kv.Get(ctx, key)
		if err != nil {
			return "", failed(err)
		}
		m.seenKV(key, got)
		if len(got.Kvs) == 0 || got.Kvs[0].CreateRevision != t.LeaseGeneration {
			if !lost {
				return location.KindStale, nil
			}
			k, rev, rerr := m.resolveRelease(ctx, key, marker, nonce, t.LeaseGeneration)
			if rerr != nil {
				return "", failed(rerr)
			}
			return done(k, leaseID, rev)
		}
		leaseID = clientv3.LeaseID(got.Kvs[0].Lease)
		if markerLease == clientv3.NoLease {
			grant, err := m.lease.Grant(ctx, releaseMarkerSeconds)
			if err != nil {
				return "", failed(err)
			}
			markerLease = grant.ID
		}
		resp, err := m.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", t.LeaseGeneration)).
			Then(clientv3.OpDelete(key), clientv3.OpPut(marker, string(nonce), clientv3.WithLease(markerLease))).
			Else(clientv3.OpGet(marker)).
			Commit()
		switch {
		case err == nil && resp.Succeeded:
			return done(location.KindReleased, leaseID, resp.Header.Revision)
		case err == nil && markedBy(resp.Responses[0].GetResponseRange(), nonce):
			// An earlier attempt of this call, whose response was lost,
			// landed since.
			return done(location.KindReleased, leaseID, resp.Header.Revision)
		case err == nil:
			return done(location.KindStale, leaseID, resp.Header.Revision)
		case !txn.IsAmbiguous(err):
			return "", failed(err)
		}
		lost = true
		k, rev, rerr := m.resolveRelease(ctx, key, marker, nonce, t.LeaseGeneration)
		if rerr != nil {
			return "", failed(err)
		}
		if k != "" {
			return done(k, leaseID, rev)
		}
	}
	if lost {
		return "", failed(txn.ErrContention)
	}
	return "", fmt.Errorf("leasemap: %s: %w (%w)", op, txn.ErrContention, location.ErrUnavailable)
}

// releaseMarkerSeconds is the TTL of a release marker's etcd lease: far
// longer than resolving a lost response takes.
const releaseMarkerSeconds = 60

// resolveRelease reads the owner key and the release marker after a lost
// response, at revision rev: the marker names the release that ended the
// generation; with no marker, a key of the generation still there means
// nothing was applied (kind "": try again), and a key gone means it
// expired.
func (m *Map) resolveRelease(ctx context.Context, key, marker string, nonce []byte, generation int64) (kind location.ResultKind, rev int64, err error) {
	rctx, cancel := m.resolveContext(ctx)
	defer cancel()
	resp, err := m.kv.Txn(rctx).Then(clientv3.OpGet(key), clientv3.OpGet(marker)).Commit()
	if err != nil {
		return "", 0, err
	}
	owner, mark := resp.Responses[0].GetResponseRange(), resp.Responses[1].GetResponseRange()
	m.seenKV(key, &clientv3.GetResponse{Header: resp.Header, Kvs: owner.GetKvs()})
	rev = resp.Header.Revision
	switch {
	case markedBy(mark, nonce):
		return location.KindReleased, rev, nil
	case len(mark.GetKvs()) > 0:
		return location.KindStale, rev, nil
	case len(owner.GetKvs()) > 0 && owner.GetKvs()[0].CreateRevision == generation:
		return "", rev, nil
	default:
		return location.KindReleased, rev, nil
	}
}

// markedBy reports whether a read of a release marker found this call's
// nonce.
func markedBy(r *etcdserverpb.RangeResponse, nonce []byte) bool {
	kvs := r.GetKvs()
	return len(kvs) > 0 && bytes.Equal(kvs[0].Value, nonce)
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
