package leasemap

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// MaxLeaseSeconds is the longest TTL etcd grants (its MaxLeaseTTL).
const MaxLeaseSeconds int64 = 9_000_000_000

// DefaultMaxAttempts bounds the transactions one renewal, claim or release
// may send when concurrent writers keep moving the owner key (or lost
// responses keep being settled "not applied").
const DefaultMaxAttempts = 8

// Options configure a Map. The zero value is usable.
type Options struct {
	// Clock is the store clock; nil means location.SystemClock.
	Clock location.Clock
	// MinLeaseSeconds raises every etcd lease to at least this many seconds
	// (the reported expiry is unaffected). For tests whose manual clock must
	// not race real expiry; 0 leaves the server's minimum alone.
	MinLeaseSeconds int64
	// MaxAttempts bounds retries under contention; 0 means
	// DefaultMaxAttempts.
	MaxAttempts int
	// Watcher watches the owner keys of kept leases (Keep); nil makes Keep
	// unsupported.
	Watcher clientv3.Watcher
	// KeepAliveStreams, when set, opens the LeaseKeepAlive streams
	// keep-alives go on (clientv3.RetryLeaseClient(client) has it): the
	// long-lived one each kept lease renews on, and one per full renewal;
	// nil makes keep-alives use Lease.KeepAliveOnce.
	KeepAliveStreams KeepAliveStreams
	// KeepAliveHedge is how long a keep-alive on a stream may go
	// unanswered before it is sent again on a new stream (at most twice
	// per renewal; the first answer wins), so that a renewal does not wait
	// for a member that was lost; 0 means DefaultKeepAliveHedge.
	KeepAliveHedge time.Duration
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Map is the owner-lease table of one store. Safe for concurrent use.
type Map struct {
	engine  *txn.Engine
	kv      clientv3.KV
	lease   clientv3.Lease
	watcher clientv3.Watcher
	streams KeepAliveStreams
	hedge   time.Duration
	layout  keys.Layout
	clock   location.Clock
	minSecs int64
	maxAtt  int
	log     *slog.Logger

	// mu guards known and pending. Every renewal reads known and offers
	// what it learnt back, which is nearly always what known already says:
	// such a renewal takes only the read lock, so concurrent renewals do
	// not queue.
	mu    sync.RWMutex
	known map[string]leaseInfo // by owner id: the etcd lease of a generation
	// pending holds, by owner id, the last claim whose outcome is unknown,
	// until Settle settles it (claim.go).
	pending map[string]pendingClaim
	// suspects are the members keep-alives failed on, shared by every
	// keep-alive stream of the map (keepalive_stream.go).
	suspects memberSuspects
}

// leaseInfo is what the map remembers of an owner key: which etcd lease the
// generation is attached to and with how many seconds.
type leaseInfo struct {
	generation int64
	leaseID    clientv3.LeaseID
	seconds    int64
	// keepAlive: the value carries the keep-alive mark (Record.KeepAlive).
	keepAlive bool
}

// New returns the owner-lease map of the store whose keys layout describes.
// Every request of the map goes through engine: its writes are Guarded
// transactions (txn.Engine.Send, which settles their lost responses), its
// reads ride out elections with the engine's Retrier, and every owner key
// it reads or writes is offered to the engine's cache, so that the store's
// decisions that consult owner keys start from what the map saw. lease
// grants, renews and revokes the etcd leases.
func New(engine *txn.Engine, lease clientv3.Lease, layout keys.Layout, opts Options) *Map {
	m := &Map{
		engine:  engine,
		kv:      engine.KV(),
		lease:   lease,
		watcher: opts.Watcher,
		streams: opts.KeepAliveStreams,
		hedge:   opts.KeepAliveHedge,
		layout:  layout,
		clock:   opts.Clock,
		minSecs: opts.MinLeaseSeconds,
		maxAtt:  opts.MaxAttempts,
		log:     opts.Logger,
		known:   map[string]leaseInfo{},
	}
	if m.clock == nil {
		m.clock = location.SystemClock
	}
	if m.hedge <= 0 {
		m.hedge = DefaultKeepAliveHedge
	}
	if m.maxAtt <= 0 {
		m.maxAtt = DefaultMaxAttempts
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	return m
}

// now reads the clock once, at millisecond precision.
func (m *Map) now() time.Time { return location.Millis(m.clock()) }

// leaseSeconds is the etcd TTL of an owner lease of ms milliseconds.
func (m *Map) leaseSeconds(ms int64) int64 {
	s := ms / 1000
	if ms%1000 != 0 {
		s++
	}
	return min(max(s, m.minSecs, 1), MaxLeaseSeconds)
}

func (m *Map) remember(ownerID string, info leaseInfo) {
	if old, ok := m.lookupOwner(ownerID); ok && old == info {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.known[ownerID] = info
}

func (m *Map) forget(ownerID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.known, ownerID)
}

// lookupOwner returns what the map last learnt of ownerID's lease.
func (m *Map) lookupOwner(ownerID string) (leaseInfo, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	info, ok := m.known[ownerID]
	return info, ok
}

func (m *Map) lookup(ownerID string, generation int64) (leaseInfo, bool) {
	info, ok := m.lookupOwner(ownerID)
	return info, ok && info.generation == generation
}

// seen offers an observation of an owner key (one the map wrote) to the
// engine's cache.
func (m *Map) seen(o txn.Observation) { m.engine.Remember(o) }

// readOwner reads an owner key (offered to the engine's cache).
func (m *Map) readOwner(ctx context.Context, key string) (txn.Observation, error) {
	got, err := m.engine.ReadKeys(ctx, []string{key}, 0)
	if err != nil {
		return txn.Observation{}, err
	}
	return got.Keys[key], nil
}

// revoke ends an etcd lease that no key needs, logging (not returning) a
// failure: the lease then expires on its own.
func (m *Map) revoke(ctx context.Context, id clientv3.LeaseID) {
	if id == clientv3.NoLease {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.engine.ResolveTimeout())
	defer cancel()
	if _, err := m.lease.Revoke(rctx, id); err != nil && !txn.IsLeaseNotFound(err) {
		m.log.Debug("leasemap: revoke failed; the lease will expire on its own", "lease", leaseIDText(id), "error", err)
	}
}

// infoOf derives the lease info from a stored owner key.
func infoOf(o txn.Observation) (leaseInfo, Record, error) {
	rec, err := DecodeRecord(o.Value)
	if err != nil {
		return leaseInfo{}, Record{}, err
	}
	return leaseInfo{generation: o.CreateRevision, leaseID: clientv3.LeaseID(o.Lease), seconds: rec.LeaseSeconds,
		keepAlive: rec.KeepAlive}, rec, nil
}

// written is the observation of an owner key the map wrote at rev, created
// at generation, on lease id.
func written(key, value string, generation int64, id clientv3.LeaseID, rev int64) txn.Observation {
	return txn.Observation{Key: key, Present: true, Value: []byte(value), ModRevision: rev, CreateRevision: generation,
		Lease: int64(id), Revision: rev}
}

// validate checks a context, an owner id and a TTL before anything is
// sent, and returns the TTL in whole milliseconds.
func validate(ctx context.Context, op, ownerID string, ttl time.Duration) (int64, error) {
	if err := ctxError(op, ctx); err != nil {
		return 0, err
	}
	if err := location.ValidateOwnerID(ownerID); err != nil {
		return 0, fmt.Errorf("leasemap: %s: %w", op, err)
	}
	ms, err := location.ValidateLeaseTTL(ttl)
	if err != nil {
		return 0, fmt.Errorf("leasemap: %s: %w", op, err)
	}
	return ms, nil
}

// revisionBefore returns a revision committed before a transaction sent
// after grant: the grant's, or a later one the engine has seen.
func (m *Map) revisionBefore(grant *clientv3.LeaseGrantResponse) int64 {
	rev := m.engine.LastRevision()
	if grant.ResponseHeader != nil {
		rev = max(rev, grant.ResponseHeader.Revision)
	}
	return rev
}

// contention is the error of a call that ran out of attempts (nothing
// applied).
func contention(op string) error {
	return fmt.Errorf("leasemap: %s: %w (%w)", op, txn.ErrContention, location.ErrUnavailable)
}

// ctxError wraps the error of a context that ended before the call started.
func ctxError(op string, ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("leasemap: %s: %w", op, err)
	}
	return nil
}

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
