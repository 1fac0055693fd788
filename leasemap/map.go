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

// DefaultMaxAttempts bounds the transactions one renewal or claim may send
// when concurrent writers keep moving the owner key.
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
	// ResolveTimeout is the least time the re-reads that resolve a lost
	// response are given (txn.ResolveContext); 0 means
	// txn.DefaultResolveTimeout.
	ResolveTimeout time.Duration
	// Retry sends the map's reads (of owner keys and of etcd leases' TTLs)
	// again while etcd answers transient errors; the map wraps its KV with
	// it. nil means a Retrier of its own with default options and Logger.
	Retry *txn.Retrier
	// Watcher watches the owner keys of kept leases (Keep); nil makes Keep
	// unsupported.
	Watcher clientv3.Watcher
	// KeepAliveStreams, when set, opens the long-lived LeaseKeepAlive
	// stream each kept lease renews on (clientv3.RetryLeaseClient(client)
	// has it); nil makes kept leases renew with Lease.KeepAliveOnce.
	KeepAliveStreams KeepAliveStreams
	// Observe, when set, is told about every owner key the map reads or
	// writes, so that a transaction engine's cache stays fresh.
	Observe func(txn.Observation)
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Map is the owner-lease table of one store. Safe for concurrent use.
type Map struct {
	kv      clientv3.KV
	lease   clientv3.Lease
	watcher clientv3.Watcher
	streams KeepAliveStreams
	retry   *txn.Retrier
	layout  keys.Layout
	clock   location.Clock
	minSecs int64
	maxAtt  int
	resolve time.Duration
	observe func(txn.Observation)
	log     *slog.Logger

	mu    sync.Mutex
	known map[string]leaseInfo // by owner id: the etcd lease of a generation
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
func New(kv clientv3.KV, lease clientv3.Lease, layout keys.Layout, opts Options) *Map {
	retry := opts.Retry
	if retry == nil {
		retry = txn.NewRetrier(txn.RetryOptions{Logger: opts.Logger})
	}
	m := &Map{
		kv:      retry.KV(kv),
		lease:   lease,
		watcher: opts.Watcher,
		streams: opts.KeepAliveStreams,
		retry:   retry,
		layout:  layout,
		clock:   opts.Clock,
		minSecs: opts.MinLeaseSeconds,
		maxAtt:  opts.MaxAttempts,
		resolve: opts.ResolveTimeout,
		observe: opts.Observe,
		log:     opts.Logger,
		known:   map[string]leaseInfo{},
	}
	if m.clock == nil {
		m.clock = location.SystemClock
	}
	if m.maxAtt <= 0 {
		m.maxAtt = DefaultMaxAttempts
	}
	if m.resolve <= 0 {
		m.resolve = txn.DefaultResolveTimeout
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

// resolveContext returns a context for the re-reads after a lost response
// (txn.ResolveContext).
func (m *Map) resolveContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return txn.ResolveContext(ctx, m.resolve)
}

func (m *Map) remember(ownerID string, info leaseInfo) {
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
	m.mu.Lock()
	defer m.mu.Unlock()
	info, ok := m.known[ownerID]
	return info, ok
}

func (m *Map) lookup(ownerID string, generation int64) (leaseInfo, bool) {
	info, ok := m.lookupOwner(ownerID)
	return info, ok && info.generation == generation
}

// seen reports an observation of an owner key to the Observe hook.
func (m *Map) seen(o txn.Observation) {
	if m.observe != nil {
		m.observe(o)
	}
}

// seenKV reports a read owner key (kv nil: absent) at revision rev.
func (m *Map) seenKV(key string, kv *clientv3.GetResponse) {
	if m.observe == nil {
		return
	}
	o := txn.Observation{Key: key, Revision: kv.Header.Revision}
	if len(kv.Kvs) > 0 {
		k := kv.Kvs[0]
		o = txn.Observation{Key: key, Present: true, Value: k.Value, ModRevision: k.ModRevision,
			CreateRevision: k.CreateRevision, Version: k.Version, Lease: k.Lease, Revision: kv.Header.Revision}
	}
	m.observe(o)
}

// revoke ends an etcd lease that no key needs, logging (not returning) a
// failure: the lease then expires on its own.
func (m *Map) revoke(ctx context.Context, id clientv3.LeaseID) {
	if id == clientv3.NoLease {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.resolve)
	defer cancel()
	if _, err := m.lease.Revoke(rctx, id); err != nil && !txn.IsLeaseNotFound(err) {
		m.log.Debug("leasemap: revoke failed; the lease will expire on its own", "lease", leaseIDText(id), "error", err)
	}
}

// infoOf derives the lease info from a stored owner key.
func infoOf(k *mvccKV) (leaseInfo, Record, error) {
	rec, err := decodeRecord(k.Value)
	if err != nil {
		return leaseInfo{}, Record{}, err
	}
	return leaseInfo{generation: k.CreateRevision, leaseID: clientv3.LeaseID(k.Lease), seconds: rec.LeaseSeconds,
		keepAlive: rec.KeepAlive}, rec, nil
}

// ctxError wraps the error of a context that ended before the call started.
func ctxError(op string, ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("leasemap: %s: %w", op, err)
	}
	return nil
}
