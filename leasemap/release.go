package leasemap

import (
	"context"
	"errors"
	"fmt"

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
// a short etcd lease of its own), so that a lost response is settled by
// reading whose delete ended the generation: this call's (released),
// another release's (stale: of two concurrent releases of one lease, one
// answers released), or none, the key having expired (released, as the
// reference answers for an expired entry, anomaly A-20). The marker is put
// only by the delete of the generation's key, so at most one release
// writes it, and its lease outlives the resolution: the state alone
// settles the outcome (txn.Guarded.StateOnly).
func (m *Map) Release(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	const op = "release owner lease"
	if err := ctxError(op, ctx); err != nil {
		return "", err
	}
	if t.LeaseGeneration <= 0 {
		return location.KindStale, nil
	}
	key := m.layout.OwnerKey(t.OwnerID)
	owner, err := m.readOwner(ctx, key)
	if err != nil {
		return "", txn.Unavailable("leasemap: "+op, err)
	}
	if !owner.Present || owner.CreateRevision != t.LeaseGeneration {
		return location.KindStale, nil
	}
	grant, err := m.lease.Grant(ctx, releaseMarkerSeconds)
	if err != nil {
		return "", txn.Unavailable("leasemap: "+op, err)
	}
	r := release{m: m, op: op, token: t, key: key, marker: m.layout.ReleaseMarkerKey(t.OwnerID, t.LeaseGeneration),
		markerLease: grant.ID, nonce: txn.NewNonce(), owner: owner}
	kind, err := r.run(ctx)
	if kind != location.KindReleased {
		// The marker of a release that ended the generation stays until its
		// lease expires: a concurrent release whose response was lost reads
		// it. Otherwise the marker lease is revoked, so that an attempt of
		// this call still queued at the server cannot land after the answer.
		m.revoke(ctx, grant.ID)
	}
	return kind, err
}

// releaseMarkerSeconds is the TTL of a release marker's etcd lease: far
// longer than resolving a lost response takes.
const releaseMarkerSeconds = 60

// release is one Release call of a generation found live.
type release struct {
	m           *Map
	op          string
	token       location.OwnerToken
	key, marker string
	markerLease clientv3.LeaseID
	// nonce is the marker's value, the same for every attempt: an attempt
	// that lands late is this call's.
	nonce string
	// owner is the owner key as last read.
	owner txn.Observation
	// lost is set once an attempt's response was lost: that attempt may
	// still land, so a later failure no longer proves nothing was applied,
	// and a key found gone may be this call's doing.
	lost bool
}

// run sends the deleting transaction until it is settled.
func (r *release) run(ctx context.Context) (location.ResultKind, error) {
	for range r.m.maxAtt {
		if cerr := ctx.Err(); cerr != nil {
			return "", r.failed(fmt.Errorf("leasemap: %s: %w", r.op, cerr))
		}
		sent, err := r.m.engine.Send(ctx, "leasemap: "+r.op, txn.Guarded{
			If: []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(r.key), "=", r.token.LeaseGeneration)},
			Then: []clientv3.Op{clientv3.OpDelete(r.key),
				clientv3.OpPut(r.marker, r.nonce, clientv3.WithLease(r.markerLease))},
			Read:      []string{r.key, r.marker},
			Nonce:     r.nonce,
			Puts:      []string{r.marker},
			Deletes:   []string{r.key},
			Before:    map[string]txn.Observation{r.key: r.owner},
			StateOnly: true,
		})
		r.lost = r.lost || sent.Lost
		owner, mark := sent.Now.Keys[r.key], sent.Now.Keys[r.marker]
		switch {
		case err != nil:
			return "", r.failed(err)
		case sent.Applied:
			// The key was deleted at the marker's revision.
			r.m.seen(txn.Observation{Key: r.key, Revision: sent.Revision})
			r.m.released(ctx, r.token.OwnerID, clientv3.LeaseID(r.owner.Lease))
			return location.KindReleased, nil
		case !sent.Lost, mark.Present:
			// The guard failed, or another release's marker ended the
			// generation.
			return location.KindStale, nil
		case !owner.Present || owner.CreateRevision != r.token.LeaseGeneration:
			// No marker and the generation's key gone: it expired.
			r.m.released(ctx, r.token.OwnerID, clientv3.LeaseID(r.owner.Lease))
			return location.KindReleased, nil
		}
		r.owner = owner // not applied: send it again
	}
	return "", r.failed(contention(r.op))
}

// failed is the error of a release that ended without an answer (err,
// prefixed like every error of the map): once an attempt's response was
// lost, that attempt may still land, so the outcome is unknown (and err no
// longer proves that nothing was applied).
func (r *release) failed(err error) error {
	if r.lost && !errors.Is(err, txn.ErrOutcomeUnknown) {
		return fmt.Errorf("leasemap: %s: %w: an earlier attempt whose answer was lost may still apply (%v)", r.op, txn.ErrOutcomeUnknown, err)
	}
	return err
}

// released finishes a release: forget the lease and revoke it.
func (m *Map) released(ctx context.Context, ownerID string, leaseID clientv3.LeaseID) {
	m.forget(ownerID)
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
	got, err := m.readOwner(ctx, key)
	if err != nil {
		return txn.Unavailable("leasemap: "+op, err)
	}
	m.forget(ownerID)
	if !got.Present {
		return nil
	}
	resp, err := m.lease.Revoke(ctx, clientv3.LeaseID(got.Lease))
	switch {
	case err == nil:
		m.seen(txn.Observation{Key: key, Revision: resp.Header.Revision})
	case !txn.IsLeaseNotFound(err):
		return txn.Unavailable("leasemap: "+op, err)
	}
	return nil
}
