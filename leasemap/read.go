package leasemap

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Read returns ownerID's lease (03 §1.3): found while the owner key exists,
// with the generation (its CreateRevision) and the expiry; missing (with no
// other field, as the reference) otherwise. Liveness is the key's existence
// (decision E-2): etcd deletes it when the lease ends, so there is no
// "expired but present" state to clean up (03b E-19).
//
// The expiry is the one recorded by the last claim or renewal, unless the
// lease is kept alive by keep-alives alone (Record.KeepAlive, see Keep),
// which do not rewrite the key: the expiry is then derived from the etcd
// lease's remaining TTL, as now (read after etcd answered) + the remaining
// whole seconds + 1 s (etcd truncates the remaining time to whole
// seconds). So it is never earlier than the etcd lease's expiry as the
// leader knew it when answering, and never in the past while the key
// exists.
func (m *Map) Read(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	const op = "read owner lease"
	if err := ctxError(op, ctx); err != nil {
		return location.OwnerLeaseReadResult{}, err
	}
	if err := location.ValidateOwnerID(ownerID); err != nil {
		return location.OwnerLeaseReadResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
	}
	key := m.layout.OwnerKey(ownerID)
	for range m.maxAtt {
		now := m.now()
		// A lease known to be kept alive has its TTL asked for beside the
		// read of its key.
		guess, _ := m.lookupOwner(ownerID)
		got, ttl, err := m.readWithTTL(ctx, key, guess)
		if err != nil {
			return location.OwnerLeaseReadResult{}, txn.Unavailable("leasemap: "+op, err)
		}
		if !got.Present {
			m.forget(ownerID)
			return location.OwnerLeaseReadResult{Kind: location.KindMissing}, nil
		}
		info, rec, err := infoOf(got)
		if err != nil {
			return location.OwnerLeaseReadResult{}, fmt.Errorf("leasemap: %s: %w", op, err)
		}
		m.remember(ownerID, info)
		found := location.OwnerLeaseReadResult{
			Kind:           location.KindFound,
			Token:          location.OwnerToken{OwnerID: ownerID, LeaseGeneration: info.generation},
			LeaseExpiresAt: time.UnixMilli(rec.ExpiresAtMs).UTC(),
			StoreNow:       now,
		}
		if !info.keepAlive {
			return found, nil
		}
		if ttl == nil || ttl.ID != info.leaseID {
			if ttl, err = m.timeToLive(ctx, info.leaseID); err != nil {
				return location.OwnerLeaseReadResult{}, txn.Unavailable("leasemap: "+op, err)
			}
		}
		if leaseExists(ttl) {
			// An expired lease that etcd has not revoked yet reports no
			// time left: its key goes within moments.
			found.StoreNow = m.now()
			found.LeaseExpiresAt = KeptExpiry(found.StoreNow, ttl.TTL)
			return found, nil
		}
		// The lease was revoked after the key was read: its key is deleted
		// with it (or was moved to another lease meanwhile). Read again.
		m.forget(ownerID)
	}
	return location.OwnerLeaseReadResult{}, contention(op)
}

// KeptExpiry is the expiry of a kept-alive owner lease (Record.KeepAlive)
// whose etcd lease had remaining seconds left when etcd answered, now being
// read after that answer: now + the remaining whole seconds + 1 s, since
// etcd truncates the remaining time to whole seconds. It is never earlier
// than the etcd lease's expiry as the leader knew it, and never in the past
// while the lease exists (an expired lease that etcd has not revoked yet
// reports 0 s or less left).
func KeptExpiry(now time.Time, remaining int64) time.Time {
	return now.Add(time.Duration(max(remaining, 0)+1) * time.Second)
}

// readWithTTL reads an owner key and, when guess names a kept-alive lease,
// that lease's remaining TTL in parallel (nil otherwise).
func (m *Map) readWithTTL(ctx context.Context, key string, guess leaseInfo) (txn.Observation, *clientv3.LeaseTimeToLiveResponse, error) {
	if !guess.keepAlive {
		got, err := m.readOwner(ctx, key)
		return got, nil, err
	}
	var (
		wg     sync.WaitGroup
		ttl    *clientv3.LeaseTimeToLiveResponse
		ttlErr error
	)
	wg.Go(func() { ttl, ttlErr = m.timeToLive(ctx, guess.leaseID) })
	got, err := m.readOwner(ctx, key)
	wg.Wait()
	if err != nil {
		return txn.Observation{}, nil, err
	}
	if ttlErr != nil {
		// Asked again once the key names its lease.
		ttl = nil
	}
	return got, ttl, nil
}

// timeToLive asks etcd for a lease's remaining TTL, retrying transient
// errors (see leaseExists).
func (m *Map) timeToLive(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseTimeToLiveResponse, error) {
	var resp *clientv3.LeaseTimeToLiveResponse
	err := m.engine.Retrier().Do(ctx, "lease time-to-live "+leaseIDText(id), func(ctx context.Context) error {
		var err error
		resp, err = m.lease.TimeToLive(ctx, id)
		if txn.IsLeaseNotFound(err) {
			resp, err = &clientv3.LeaseTimeToLiveResponse{ID: id, TTL: -1}, nil
		}
		return err
	})
	return resp, err
}

// leaseExists interprets a TimeToLive answer: etcd answers a lease it does
// not have with TTL -1 and no granted TTL; a lease it has (even expired and
// not revoked yet, whose TTL may be 0 or negative) has its granted TTL.
func leaseExists(r *clientv3.LeaseTimeToLiveResponse) bool { return r.GrantedTTL > 0 || r.TTL >= 0 }
