package leasemap

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Claim issues a new owner lease for ownerID (03 §1.2): a fresh etcd lease,
// then one transaction that creates the owner key only if it does not exist.
// A live lease of the same owner id, the caller's own included, is a
// conflict. The generation is the owner key's CreateRevision.
// generationExhausted cannot happen on etcd.
func (m *Map) Claim(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	const op = "claim owner lease"
	if err := ctxError(op, ctx); err != nil {
		return location.OwnerLeaseClaimResult{}, err
	}
	if err := location.ValidateOwnerID(ownerID); err != nil {
		return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
	}
	ms, err := location.ValidateLeaseTTL(ttl)
	if err != nil {
		return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
	}
	now := m.now()
	secs := m.leaseSeconds(ms)
	grant, err := m.lease.Grant(ctx, secs)
	if err != nil {
		return location.OwnerLeaseClaimResult{}, txn.Unavailable("leasemap: "+op, err)
	}
	key := m.layout.OwnerKey(ownerID)
	var nonces []string
	claimed := func(generation int64) location.OwnerLeaseClaimResult {
		m.remember(ownerID, leaseInfo{generation: generation, leaseID: grant.ID, seconds: secs})
		return location.OwnerLeaseClaimResult{
			Kind:           location.KindClaimed,
			Token:          location.OwnerToken{OwnerID: ownerID, LeaseGeneration: generation},
			LeaseExpiresAt: now.Add(time.Duration(ms) * time.Millisecond),
			StoreNow:       now,
		}
	}
	conflict := func() location.OwnerLeaseClaimResult {
		m.revoke(ctx, grant.ID)
		return location.OwnerLeaseClaimResult{Kind: location.KindConflict}
	}
	for range m.maxAtt {
		nonce := txn.NewNonce()
		nonces = append(nonces, nonce)
		val, err := encodeRecord(Record{OwnerID: ownerID, TTLMs: ms, ExpiresAtMs: now.UnixMilli() + ms,
			LeaseID: leaseIDText(grant.ID), LeaseSeconds: secs, Nonce: nonce})
		if err != nil {
			m.revoke(ctx, grant.ID)
			return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
		}
		resp, err := m.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, val, clientv3.WithLease(grant.ID))).
			Else(clientv3.OpGet(key)).
			Commit()
		if err == nil {
			if resp.Succeeded {
				rev := resp.Header.Revision
				m.seen(txn.Observation{Key: key, Present: true, Value: []byte(val), ModRevision: rev, CreateRevision: rev,
					Version: 1, Lease: int64(grant.ID), Revision: rev})
				return claimed(rev), nil
			}
			held := resp.Responses[0].GetResponseRange().GetKvs()
			if len(held) > 0 && hasAnyNonce(held[0].Value, nonces) {
				// An earlier attempt whose response was lost did apply.
				return claimed(held[0].CreateRevision), nil
			}
			if len(held) > 0 && len(nonces) > 1 && recreated(held[0], grant) {
				return location.OwnerLeaseClaimResult{}, maybeOurs(ctx, m, op, grant)
			}
			return conflict(), nil
		}
		if !txn.IsAmbiguous(err) {
			m.revoke(ctx, grant.ID)
			return location.OwnerLeaseClaimResult{}, txn.Unavailable("leasemap: "+op, err)
		}
		rctx, cancel := m.resolveContext(ctx)
		got, gerr := m.kv.Get(rctx, key)
		cancel()
		if gerr != nil {
			// The claim may have been applied: keep the lease.
			return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: %w: %w", op, txn.ErrOutcomeUnknown, err)
		}
		m.seenKV(key, got)
		if len(got.Kvs) > 0 {
			if hasAnyNonce(got.Kvs[0].Value, nonces) {
				return claimed(got.Kvs[0].CreateRevision), nil
			}
			if recreated(got.Kvs[0], grant) {
				return location.OwnerLeaseClaimResult{}, maybeOurs(ctx, m, op, grant)
			}
			return conflict(), nil
		}
		// Absent: the claim was not applied; claim again (unless the caller
		// has given up).
		if cerr := ctx.Err(); cerr != nil {
			m.revoke(ctx, grant.ID)
			return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: not applied: %w", op, cerr)
		}
	}
	m.revoke(ctx, grant.ID)
	return location.OwnerLeaseClaimResult{}, fmt.Errorf("leasemap: %s: %w (%w)", op, txn.ErrContention, location.ErrUnavailable)
}

// recreated reports whether the owner key kv was created after the claim
// began (after its lease was granted): an attempt of the claim whose
// response was lost may then have created the key, which was deleted
// (released, expired) and created again by another claim since. A key
// created before cannot be the claim's: its guard required absence.
func recreated(kv *mvccpb.KeyValue, grant *clientv3.LeaseGrantResponse) bool {
	return grant.ResponseHeader == nil || kv.CreateRevision > grant.ResponseHeader.Revision
}

// maybeOurs is the error of a claim that may or may not have applied: the
// owner key holds another claim's value, but an attempt of this claim whose
// response was lost may have held it before. The claim's lease is revoked
// (if the claim applied, its key is gone already, so nothing else is
// touched).
func maybeOurs(ctx context.Context, m *Map, op string, grant *clientv3.LeaseGrantResponse) error {
	m.revoke(ctx, grant.ID)
	return fmt.Errorf("leasemap: %s: %w: the owner key was created again since an attempt whose response was lost", op, txn.ErrOutcomeUnknown)
}

// hasAnyNonce reports whether value carries one of the nonces.
func hasAnyNonce(value []byte, nonces []string) bool {
	for _, n := range nonces {
		if strings.Contains(string(value), n) {
			return true
		}
	}
	return false
}
