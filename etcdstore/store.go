package etcdstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/leasemap"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// Root is the key prefix of every key of the store; it must end with
	// '/' and should name the format version. "" means keys.DefaultRoot
	// ("/zlink/v1/").
	Root string
	// Clock is the store clock (storeNow, updatedAt, reported expiries,
	// transfer recovery leases); nil means location.SystemClock.
	Clock location.Clock
	// MaxTxnOps and MaxRequestBytes are the cluster's transaction limits
	// (etcd's --max-txn-ops and --max-request-bytes); 0 means etcd's defaults
	// (128, 1.5 MiB). An operation that does not fit is refused with an
	// error wrapping location.ErrTooLarge before anything is written.
	MaxTxnOps, MaxRequestBytes int
	// MaxAttempts bounds the transactions one operation sends when
	// concurrent writers keep changing what it read; 0 means
	// txn.DefaultMaxAttempts. Exhausting it is an error wrapping
	// txn.ErrContention (nothing written).
	MaxAttempts int
	// ResolveTimeout bounds the re-reads that resolve a lost response; 0
	// means txn.DefaultResolveTimeout.
	ResolveTimeout time.Duration
	// CacheSize is the number of recently seen keys kept to start
	// steady-state writes without a read; 0 means txn.DefaultCacheSize, a
	// negative value disables the cache.
	CacheSize int
	// MinLeaseSeconds raises every owner lease's etcd TTL to at least this
	// many seconds without changing the reported expiry (tests whose manual
	// clock must not race real expiry); 0 keeps ceil(ttl/1 s).
	MinLeaseSeconds int64
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
	// Retry configures how reads (and the resolution of lost responses)
	// ride out transient etcd errors such as a leader election: backoff,
	// and an OnRetry hook for metrics (Store.ReadRetries has the counts).
	// Its Logger defaults to Logger.
	Retry txn.RetryOptions
	// Observer sees every operation (storecore.Observer), CollectGarbage
	// included; nil observes nothing.
	Observer storecore.Observer
	// WrapKV, when set, wraps the KV every request of the store goes
	// through (the client's, or KV below), innermost: it sees each request
	// as it is sent to etcd, every retry of a read included, with the
	// operation's context. Instrumentation attaches here (package
	// observe/etcdobserve counts and traces the requests).
	WrapKV func(clientv3.KV) clientv3.KV
	// OnTxnAttempt, when set, is called after every transaction an
	// operation sends (txn.Options.OnAttempt): contention, lost answers and
	// how they were resolved.
	OnTxnAttempt func(ctx context.Context, a txn.Attempt)
	// WatchCache configures the watch-fed cache that answers ListMeshNodes,
	// ListPeers and ReadOwnerLiveness (docs/caching.md); on by default.
	WatchCache WatchCacheOptions

	// KV and Lease, when set, replace the client's for every request (for
	// example a txn.Recorder that counts round trips, or a fault injector).
	KV    clientv3.KV
	Lease clientv3.Lease
}

// Store is location.Store on etcd: every method of location.Store,
// location.ChangeWatcher and location.MeshNodeChangeStamper, and the
// ExpireOwnerLease hook (which revokes the owner's etcd lease), comes from
// the embedded storecore.Store over this store's backend. Safe for
// concurrent use. With the watch cache on (the default), the watches of
// the ranges a read has needed run until Close, or until the client is
// closed.
type Store struct {
	storecore.Store

	client  *clientv3.Client
	kv      clientv3.KV
	watcher clientv3.Watcher
	layout  keys.Layout
	clock   location.Clock
	engine  *txn.Engine
	retry   *txn.Retrier
	leases  *leasemap.Map
	log     *slog.Logger
	// What the commits of the store reuse: the calls of decisions, scratch
	// buffers for encoding, which value types survive JSON (decodedForm),
	// the change-stamp keys, which result types hold store versions
	// (replaceVersions).
	calls        callPool
	encoder      encoder
	exact        jsonExact
	stamps       stampKeys
	versionTypes versionTypes
	// hub shares the store's etcd watches among their consumers; cache is
	// the watch cache (nil when disabled).
	hub   *watchHub
	cache *watchCache
	// ownsClient: Close closes the client (Dial made it).
	ownsClient bool
}

// New returns a store over client. The client stays the caller's: Close
// does not close it.
func New(client *clientv3.Client, opts Options) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("etcdstore: %w: nil client", location.ErrInvalidArgument)
	}
	layout, err := keys.NewLayout(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("etcdstore: root prefix: %w", err)
	}
	for _, spec := range rules.Tables() {
		if err := keys.ValidTable(string(spec.Name())); err != nil {
			return nil, fmt.Errorf("etcdstore: %w: table %q: %w", location.ErrInternal, spec.Name(), err)
		}
	}
	s := &Store{client: client, kv: client.KV, watcher: client.Watcher, layout: layout, clock: opts.Clock, log: opts.Logger,
		exact: newJSONExact()}
	lease := client.Lease
	// Kept owner leases renew on keep-alive streams of the client, unless
	// the caller's Lease must see every lease request.
	var streams leasemap.KeepAliveStreams = clientv3.RetryLeaseClient(client)
	if opts.KV != nil {
		s.kv = opts.KV
	}
	if opts.Lease != nil {
		lease, streams = opts.Lease, nil
	}
	if opts.WrapKV != nil {
		s.kv = opts.WrapKV(s.kv)
	}
	if s.clock == nil {
		s.clock = location.SystemClock
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.Retry.Logger == nil {
		opts.Retry.Logger = s.log
	}
	s.retry = txn.NewRetrier(opts.Retry)
	s.kv = s.retry.KV(s.kv)
	s.engine = txn.New(s.kv, s.watcher, txn.Options{
		Limits:         txn.Limits{MaxTxnOps: opts.MaxTxnOps, MaxRequestBytes: opts.MaxRequestBytes},
		MaxAttempts:    opts.MaxAttempts,
		ResolveTimeout: opts.ResolveTimeout,
		CacheSize:      opts.CacheSize,
		MarkerKey:      layout.MarkerKey("deletes"),
		DeleteFence:    layout.DeleteFenceKey,
		Logger:         s.log,
		Retry:          s.retry,
		OnAttempt:      opts.OnTxnAttempt,
	})
	s.leases = leasemap.New(s.engine, lease, layout, leasemap.Options{
		Clock:            s.clock,
		MinLeaseSeconds:  opts.MinLeaseSeconds,
		MaxAttempts:      opts.MaxAttempts,
		Logger:           s.log,
		Watcher:          s.watcher,
		KeepAliveStreams: streams,
	})
	deletesOnly := layout.OwnerPrefix()
	if !opts.WatchCache.Disabled {
		deletesOnly = "" // the cache reads owner claims too
	}
	s.hub = newWatchHub(s, deletesOnly)
	if !opts.WatchCache.Disabled {
		s.cache = newWatchCache(s, opts.WatchCache)
	}
	s.Store = storecore.New(backend{s}, storecore.Options{Observer: opts.Observer})
	return s, nil
}

// Close stops the store's watches and cache (they also stop when the
// client is closed) and releases what the store owns: the client, when
// Dial made it. Change watches (WatchChanges) close their channels.
func (s *Store) Close() error {
	s.hub.close()
	if s.cache != nil {
		s.cache.close()
	}
	if s.ownsClient {
		if err := s.client.Close(); err != nil {
			return fmt.Errorf("etcdstore: close client: %w", err)
		}
	}
	return nil
}

// Client returns the etcd client the store was made with (Dial's own
// client for a dialed store; Close closes it then). Requests sent on it
// directly bypass the store's KV and Options.WrapKV: health checks use it.
func (s *Store) Client() *clientv3.Client { return s.client }

// Layout returns the store's key layout.
func (s *Store) Layout() keys.Layout { return s.layout }

// Leases returns the store's owner-lease map (for tests and tools).
func (s *Store) Leases() *leasemap.Map { return s.leases }

// now reads the clock once, at millisecond precision.
func (s *Store) now() time.Time { return location.Millis(s.clock()) }
