package leasemap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Renew extends the token's lease to now + ttl (03 §1.4; 03b E-04): stale
// when the owner key is gone or belongs to another generation. With the
// same TTL in whole seconds the etcd lease is kept alive (one keep-alive) and
// the value rewritten in one guarded transaction, both sent in parallel;
// with a different TTL the key moves to a new etcd lease in one guarded
// transaction and the old lease is revoked. The generation never changes.
// A shorter TTL is allowed and may move the reported expiry earlier.
func (m *Map) Renew(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	res, _, err := m.renew(ctx, "renew owner lease", t, ttl, false)
	return res, err
}

// renew is Renew; with keepAlive, the rewritten value carries the
// keep-alive mark (Record.KeepAlive, see Keep). It also returns the
// renewed lease and a revision at which the key held the written value.
func (m *Map) renew(ctx context.Context, op string, t location.OwnerToken, ttl time.Duration, keepAlive bool) (location.OwnerLeaseRenewResult, renewed, error) {
	ms, err := validate(ctx, op, t.OwnerID, ttl)
	if err != nil {
		return location.OwnerLeaseRenewResult{}, renewed{}, err
	}
	stale := location.OwnerLeaseRenewResult{Kind: location.KindStale}
	if t.LeaseGeneration <= 0 {
		return stale, renewed{}, nil
	}
	now := m.now()
	r := renewal{m: m, key: m.layout.OwnerKey(t.OwnerID), token: t, ms: ms, secs: m.leaseSeconds(ms), now: now, keepAlive: keepAlive}
	info, ok := m.lookup(t.OwnerID, t.LeaseGeneration)
	if !ok {
		got, err := m.readOwner(ctx, r.key)
		if err != nil {
			return location.OwnerLeaseRenewResult{}, renewed{}, txn.Unavailable("leasemap: "+op, err)
		}
		if info, ok, err = r.current(got); err != nil {
			return location.OwnerLeaseRenewResult{}, renewed{}, fmt.Errorf("leasemap: %s: %w", op, err)
		} else if !ok {
			return stale, renewed{}, nil
		}
	}
	for range m.maxAtt {
		if cerr := ctx.Err(); cerr != nil {
			return location.OwnerLeaseRenewResult{}, renewed{}, fmt.Errorf("leasemap: %s: %w", op, cerr)
		}
		var done bool
		if info.seconds == r.secs {
			info, done, err = r.keepAliveAndWrite(ctx, info)
		} else {
			info, done, err = r.move(ctx, info)
		}
		if err != nil {
			return location.OwnerLeaseRenewResult{}, renewed{}, fmt.Errorf("leasemap: %s: %w", op, err)
		}
		if done {
			if info.generation == 0 {
				return stale, renewed{}, nil
			}
			info.keepAlive = keepAlive
			m.remember(t.OwnerID, info)
			return location.OwnerLeaseRenewResult{
				Kind:           location.KindRenewed,
				LeaseExpiresAt: now.Add(time.Duration(ms) * time.Millisecond),
				StoreNow:       now,
			}, renewed{info: info, revision: r.revision}, nil
		}
	}
	return location.OwnerLeaseRenewResult{}, renewed{}, contention(op)
}

// renewed is what renew learnt of a renewed lease: its etcd lease, and a
// revision at which the owner key held the renewal's value.
type renewed struct {
	info     leaseInfo
	revision int64
}

// renewal is one Renew call.
type renewal struct {
	m     *Map
	key   string
	token location.OwnerToken
	ms    int64
	secs  int64
	now   time.Time
	// keepAlive marks the written value as kept alive (Record.KeepAlive).
	keepAlive bool
	// revision is set by an applied write: a revision at which the key
	// held its value.
	revision int64
}

// current interprets the owner key as read: ok is false (stale) when it is
// absent or of another generation.
func (r *renewal) current(o txn.Observation) (leaseInfo, bool, error) {
	if !o.Present || o.CreateRevision != r.token.LeaseGeneration {
		r.m.forget(r.token.OwnerID)
		return leaseInfo{}, false, nil
	}
	info, _, err := infoOf(o)
	if err != nil {
		return leaseInfo{}, false, err
	}
	return info, true, nil
}

// value encodes the renewed value on lease id.
func (r *renewal) value(id clientv3.LeaseID, nonce string) (string, error) {
	return encodeRecord(Record{OwnerID: r.token.OwnerID, TTLMs: r.ms, ExpiresAtMs: r.now.UnixMilli() + r.ms,
		LeaseID: leaseIDText(id), LeaseSeconds: r.secs, KeepAlive: r.keepAlive, Nonce: nonce})
}

// guarded sends the transaction that rewrites the owner key on lease id
// when the key still has the token's generation and is on lease from. It
// returns whether it was applied and, when it was not, the key as it is.
//
// A lost response is settled by the engine (txn.Engine.Send). A rewrite on
// the same lease is settled by the key's state alone: no nonce means not
// applied, and the caller sends it again, which is harmless either way. A
// move to a new lease searches the history too (sentAfter: a revision
// before the new lease was granted), because the caller revokes the new
// lease when the move did not apply: were that a guess, a move that did
// apply (and whose value another holder's renewal has replaced since, on
// the same new lease) would lose the key with the lease.
func (r *renewal) guarded(ctx context.Context, from, id clientv3.LeaseID, sentAfter int64) (applied bool, now txn.Observation, err error) {
	nonce := txn.NewNonce()
	val, err := r.value(id, nonce)
	if err != nil {
		return false, txn.Observation{}, err
	}
	before, _ := r.m.engine.Cached(r.key)
	sent, err := r.m.engine.Send(ctx, "write", txn.Guarded{
		If: []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(r.key), "=", r.token.LeaseGeneration),
			clientv3.Compare(clientv3.LeaseValue(r.key), "=", from)},
		Then:      []clientv3.Op{clientv3.OpPut(r.key, val, clientv3.WithLease(id))},
		Read:      []string{r.key},
		Nonce:     nonce,
		Puts:      []string{r.key},
		Before:    map[string]txn.Observation{r.key: before},
		SentAfter: sentAfter,
		StateOnly: from == id,
	})
	switch {
	case err != nil:
		return false, txn.Observation{}, err
	case sent.Applied:
		r.m.seen(written(r.key, val, r.token.LeaseGeneration, id, sent.Revision))
		r.revision = sent.Revision
		return true, txn.Observation{}, nil
	}
	return false, sent.Now.Keys[r.key], nil
}

// keepAliveAndWrite renews on the same etcd lease: a keep-alive
// (keepAliveOnce) and the guarded value rewrite in parallel. done with a zero generation means
// stale.
func (r *renewal) keepAliveAndWrite(ctx context.Context, info leaseInfo) (leaseInfo, bool, error) {
	var (
		wg    sync.WaitGroup
		ttl   int64
		kaErr error
	)
	wg.Go(func() { ttl, kaErr = r.m.keepAliveOnce(ctx, info.leaseID) })
	applied, now, err := r.guarded(ctx, info.leaseID, info.leaseID, 0)
	wg.Wait()
	if err != nil {
		return info, false, err
	}
	if !applied {
		next, ok, err := r.current(now)
		if err != nil || !ok {
			return leaseInfo{}, true, err
		}
		return next, false, nil // moved to another lease meanwhile: again
	}
	if kaErr != nil && !txn.IsLeaseNotFound(kaErr) {
		// The value is renewed; the etcd lease must be too.
		ttl, kaErr = r.m.keepAliveOnce(ctx, info.leaseID)
	}
	switch {
	case txn.IsLeaseNotFound(kaErr) || kaErr == nil && ttl <= 0:
		r.m.forget(r.token.OwnerID)
		return leaseInfo{}, true, nil // the lease ended: its key is gone
	case kaErr != nil:
		return info, false, txn.Unavailable("keep alive", kaErr)
	}
	return info, true, nil
}

// move renews on a new etcd lease of the new TTL.
func (r *renewal) move(ctx context.Context, info leaseInfo) (leaseInfo, bool, error) {
	grant, err := r.m.lease.Grant(ctx, r.secs)
	if err != nil {
		return info, false, txn.Unavailable("grant", err)
	}
	applied, now, err := r.guarded(ctx, info.leaseID, grant.ID, r.m.revisionBefore(grant))
	if err != nil {
		if !errors.Is(err, txn.ErrOutcomeUnknown) {
			r.m.revoke(ctx, grant.ID)
		}
		return info, false, err
	}
	if !applied {
		r.m.revoke(ctx, grant.ID)
		next, ok, err := r.current(now)
		if err != nil || !ok {
			return leaseInfo{}, true, err
		}
		return next, false, nil
	}
	r.m.revoke(ctx, info.leaseID)
	return leaseInfo{generation: info.generation, leaseID: grant.ID, seconds: r.secs}, true, nil
}
