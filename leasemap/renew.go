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
		If:        []clientv3.Cmp{txn.CreateRevisionIs(r.key, r.token.LeaseGeneration), txn.LeaseIs(r.key, from)},
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

// Keep renews the token's lease with ttl, as Renew does, and marks its
// owner key as kept alive (Record.KeepAlive); when renewed, it returns a
// Kept through which later renewals cost one KeepAliveOnce: no Raft write,
// and no watch event for anyone. Read then derives the expiry from the etcd
// lease's remaining TTL, since the key no longer records it.
//
// The Kept watches the owner key (from the marking write on), so that it
// learns at once when the lease ends between renewals (the key is deleted:
// expired, revoked, released; or created again by another claim), and when
// another holder of the token rewrote the key with RenewOwnerLease (which
// drops the mark: the next Kept.Renew marks it again). Close the Kept when
// done with it; closing neither renews nor releases the lease.
//
// Keep needs the map's Watcher (Options.Watcher); without one it answers an
// error wrapping location.ErrUnsupported.
func (m *Map) Keep(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, *Kept, error) {
	const op = "keep owner lease"
	if m.watcher == nil {
		return location.OwnerLeaseRenewResult{}, nil, fmt.Errorf("leasemap: %s: %w: the map has no watcher", op, location.ErrUnsupported)
	}
	res, rn, err := m.renew(ctx, op, t, ttl, true)
	if err != nil || res.Kind != location.KindRenewed {
		return res, nil, err
	}
	ms, _ := location.WholeMillis(ttl) // validated by renew
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	k := &Kept{
		m: m, token: t, key: m.layout.OwnerKey(t.OwnerID), ttl: ttl, ms: ms,
		leaseID: rn.info.leaseID, marked: true, seenRev: rn.revision,
		lostCh: make(chan struct{}), cancel: cancel, done: make(chan struct{}),
	}
	if m.streams != nil {
		k.stream = &keepAliveStream{open: m.streams.LeaseKeepAlive, life: wctx, hedge: m.hedge, log: m.log, suspects: &m.suspects}
	}
	go k.watch(wctx, rn.revision+1)
	return res, k, nil
}

// Kept is one owner lease kept alive by keep-alives (Map.Keep). Safe for
// concurrent use.
type Kept struct {
	m     *Map
	token location.OwnerToken
	key   string
	ttl   time.Duration
	ms    int64

	mu sync.Mutex
	// leaseID is the etcd lease the key is on, and marked whether its value
	// carries the keep-alive mark, as of revision seenRev.
	leaseID clientv3.LeaseID
	marked  bool
	seenRev int64
	lost    bool

	// stream, when set, carries the keep-alives (else KeepAliveOnce).
	stream *keepAliveStream

	lostCh    chan struct{}
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// Renew extends the lease to now + the TTL given to Keep: one keep-alive
// (on the kept lease's stream when the map has KeepAliveStreams, else a
// KeepAliveOnce) when the key still carries the mark on the same etcd
// lease, else a full renewal that marks it again (as Keep). Stale once the
// lease ended. An error means the renewal was not confirmed (the lease then
// expires no earlier than before).
func (k *Kept) Renew(ctx context.Context) (location.OwnerLeaseRenewResult, error) {
	const op = "keep owner lease alive"
	if err := ctxError(op, ctx); err != nil {
		return location.OwnerLeaseRenewResult{}, err
	}
	k.mu.Lock()
	lost, marked, id := k.lost, k.marked, k.leaseID
	k.mu.Unlock()
	if lost {
		return location.OwnerLeaseRenewResult{Kind: location.KindStale}, nil
	}
	if !marked {
		return k.renewAndMark(ctx, op)
	}
	now := k.m.now()
	ttl, err := k.keepAlive(ctx, id)
	switch {
	case txn.IsLeaseNotFound(err) || err == nil && ttl <= 0:
		// The etcd lease ended, and its key with it, unless the key was
		// moved to another lease meanwhile: the full renewal tells.
		return k.renewAndMark(ctx, op)
	case err != nil:
		return location.OwnerLeaseRenewResult{}, txn.Unavailable("leasemap: "+op, err)
	}
	if k.Ended() {
		return location.OwnerLeaseRenewResult{Kind: location.KindStale}, nil
	}
	return location.OwnerLeaseRenewResult{
		Kind:           location.KindRenewed,
		LeaseExpiresAt: now.Add(time.Duration(k.ms) * time.Millisecond),
		StoreNow:       now,
	}, nil
}

// keepAlive sends one keep-alive of lease id and returns its TTL (0 or
// less, or a lease-not-found error: the lease does not exist).
func (k *Kept) keepAlive(ctx context.Context, id clientv3.LeaseID) (int64, error) {
	if k.stream != nil {
		return k.stream.keepAlive(ctx, id)
	}
	return k.m.keepAliveOnce(ctx, id)
}

// renewAndMark renews with a write that marks the key (Keep's renewal).
func (k *Kept) renewAndMark(ctx context.Context, op string) (location.OwnerLeaseRenewResult, error) {
	res, rn, err := k.m.renew(ctx, op, k.token, k.ttl, true)
	switch {
	case err != nil:
		return location.OwnerLeaseRenewResult{}, err
	case res.Kind != location.KindRenewed:
		k.end()
		return res, nil
	}
	k.mu.Lock()
	if rn.revision > k.seenRev {
		k.leaseID, k.marked, k.seenRev = rn.info.leaseID, true, rn.revision
	}
	k.mu.Unlock()
	return res, nil
}

// Lost is closed as soon as the Kept learns that the lease ended (its key
// deleted or created again), between renewals or by one.
func (k *Kept) Lost() <-chan struct{} { return k.lostCh }

// Ended reports whether Lost is closed.
func (k *Kept) Ended() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost
}

// Close stops watching the key and waits for the watch to end. It neither
// renews nor releases the lease. Idempotent.
func (k *Kept) Close() {
	k.closeOnce.Do(k.cancel)
	<-k.done
	if k.stream != nil {
		k.stream.close()
	}
}

// end records that the lease ended.
func (k *Kept) end() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.lost {
		k.lost = true
		close(k.lostCh)
	}
}

// watch follows the owner key from revision from until ctx ends or the
// lease ends. A broken watch is opened again from the next revision; a
// compacted one after a fresh read of the key.
func (k *Kept) watch(ctx context.Context, from int64) {
	defer close(k.done)
	pause := txn.DefaultRetryInitialBackoff
	for ctx.Err() == nil && !k.Ended() {
		next, resync := k.follow(ctx, from)
		if next > from {
			from, pause = next, txn.DefaultRetryInitialBackoff
		}
		if resync {
			rev, err := k.read(ctx)
			if err != nil {
				k.m.log.Debug("leasemap: reading a kept owner key failed; retrying", "owner", k.token.OwnerID, "error", err)
			} else {
				from = rev + 1
				continue
			}
		}
		if ctx.Err() != nil || k.Ended() {
			return
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, txn.DefaultRetryMaxBackoff)
	}
}

// follow runs one watch from revision from until it closes, and returns the
// next revision to watch from; resync is set when the history from there
// was compacted.
func (k *Kept) follow(ctx context.Context, from int64) (next int64, resync bool) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next = from
	for resp := range k.m.watcher.Watch(wctx, k.key, clientv3.WithRev(from)) {
		if resp.CompactRevision != 0 {
			return next, true
		}
		if err := resp.Err(); err != nil {
			k.m.log.Debug("leasemap: the watch of a kept owner key broke; opening it again", "owner", k.token.OwnerID, "error", err)
			return next, false
		}
		for _, ev := range resp.Events {
			next = ev.Kv.ModRevision + 1
			k.observe(ev.Kv, ev.Type == clientv3.EventTypeDelete, ev.Kv.ModRevision)
		}
		if k.Ended() {
			return next, false
		}
	}
	return next, false
}

// read reads the key (after a compaction) and returns the read's revision.
func (k *Kept) read(ctx context.Context) (int64, error) {
	got, err := k.m.kv.Get(ctx, k.key)
	if err != nil {
		return 0, err
	}
	var kv *mvccKV
	if len(got.Kvs) > 0 {
		kv = got.Kvs[0]
	}
	k.observe(kv, kv == nil, got.Header.Revision)
	return got.Header.Revision, nil
}

// observe applies the key's state as of revision rev (kv nil or deleted:
// gone).
func (k *Kept) observe(kv *mvccKV, deleted bool, rev int64) {
	if deleted || kv == nil || kv.CreateRevision != k.token.LeaseGeneration {
		k.end()
		return
	}
	rec, err := DecodeRecord(kv.Value)
	k.mu.Lock()
	defer k.mu.Unlock()
	if rev <= k.seenRev {
		return
	}
	// An undecodable value is rewritten by the next renewal.
	k.leaseID, k.marked, k.seenRev = clientv3.LeaseID(kv.Lease), err == nil && rec.KeepAlive, rev
}
