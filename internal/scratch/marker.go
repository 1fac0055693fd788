package scratch

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/txn"
)

// MarkerName is the last segment of a scratch prefix's marker key. It
// holds a dash, like the prefixes themselves, so no store table under the
// prefix can collide with it.
const MarkerName = "zlinketcd-run"

// DefaultMarkerTTL is the TTL of a marker's etcd lease: a prefix whose run
// died is abandoned at most this long after its last renewal.
const DefaultMarkerTTL = 15 * time.Second

// MarkerFormat is the format of a marker's value.
const MarkerFormat = "zlinketcd.scratch/v1"

// MarkerKey is the key of prefix's marker.
func MarkerKey(prefix string) string { return prefix + MarkerName }

// MarkerValue is what a marker says about the run that holds it.
type MarkerValue struct {
	Format string `json:"format"`
	// Command is the subcommand (demo, check, bench).
	Command string `json:"command"`
	// Holder says who runs it (host and process id).
	Holder    string    `json:"holder,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// Kept is set when the run ended and left its keys for a while on
	// purpose (demo --keep): the marker's lease is no longer renewed.
	Kept bool `json:"kept,omitempty"`
}

// MarkerOptions configure Claim.
type MarkerOptions struct {
	// TTL is the marker lease's TTL; 0 means DefaultMarkerTTL. etcd
	// rounds it up to whole seconds.
	TTL time.Duration
	// Value describes the run; Format and StartedAt are filled in.
	Value MarkerValue
	// Logger receives the keeper's diagnostics; nil discards them.
	Logger *slog.Logger
}

// Marker is a run's claim on its scratch prefix: the marker key on an etcd
// lease that a goroutine renews until Release or KeepFor.
type Marker struct {
	c      Etcd
	prefix string
	ttl    time.Duration
	value  MarkerValue
	log    *slog.Logger

	mu    sync.Mutex
	lease clientv3.LeaseID

	stop    context.CancelFunc
	stopped chan struct{}
	once    sync.Once
}

// Claim puts prefix's marker on a fresh lease and keeps the lease alive
// until Release or KeepFor. Should the lease be lost anyway (renewals
// failed for a whole TTL), the keeper claims the marker again.
func Claim(ctx context.Context, c Etcd, prefix string, opts MarkerOptions) (*Marker, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultMarkerTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	v := opts.Value
	v.Format = MarkerFormat
	if v.StartedAt.IsZero() {
		v.StartedAt = time.Now().UTC()
	}
	m := &Marker{c: c, prefix: prefix, ttl: opts.TTL, value: v, log: opts.Logger, stopped: make(chan struct{})}
	id, err := m.put(ctx, opts.TTL, v)
	if err != nil {
		return nil, err
	}
	m.lease = id
	kctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	m.stop = stop
	go m.keep(kctx)
	return m, nil
}

// Prefix is the claimed prefix.
func (m *Marker) Prefix() string { return m.prefix }

// put grants a lease of ttl and writes the marker on it.
func (m *Marker) put(ctx context.Context, ttl time.Duration, v MarkerValue) (clientv3.LeaseID, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("scratch: marker of %s: %w", m.prefix, err)
	}
	g, err := m.c.Grant(ctx, ttlSeconds(ttl))
	if err != nil {
		return 0, fmt.Errorf("scratch: grant the marker lease of %s: %w", m.prefix, err)
	}
	if _, err := m.c.Put(ctx, MarkerKey(m.prefix), string(b), clientv3.WithLease(g.ID)); err != nil {
		_, _ = m.c.Revoke(context.WithoutCancel(ctx), g.ID)
		return 0, fmt.Errorf("scratch: write the marker of %s: %w", m.prefix, err)
	}
	return g.ID, nil
}

// ttlSeconds rounds a TTL up to whole seconds, at least one.
func ttlSeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// keep renews the marker's lease a few times per TTL until ctx ends.
func (m *Marker) keep(ctx context.Context) {
	defer close(m.stopped)
	every := max(m.ttl/4, 10*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m.mu.Lock()
		id := m.lease
		m.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, every)
		_, err := m.c.KeepAliveOnce(rctx, id)
		if txn.IsLeaseNotFound(err) {
			var fresh clientv3.LeaseID
			if fresh, err = m.put(rctx, m.ttl, m.value); err == nil {
				m.mu.Lock()
				m.lease = fresh
				m.mu.Unlock()
			}
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			m.log.Debug("scratch: marker renewal failed; retrying", "prefix", m.prefix, "error", err)
		}
	}
}

// halt stops the keeper and waits for it.
func (m *Marker) halt() clientv3.LeaseID {
	m.once.Do(func() {
		m.stop()
		<-m.stopped
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease
}

// Stop stops renewing the marker: unless removed, it runs out within the
// TTL and the prefix is abandoned. Safe to call more than once.
func (m *Marker) Stop() { m.halt() }

// TTL is the marker lease's TTL.
func (m *Marker) TTL() time.Duration { return time.Duration(ttlSeconds(m.ttl)) * time.Second }

// Release stops renewing the marker and revokes its lease, which removes
// the marker: the prefix is abandoned unless removed. Safe to call more
// than once.
func (m *Marker) Release(ctx context.Context) error {
	id := m.halt()
	if id == 0 {
		return nil
	}
	if _, err := m.c.Revoke(ctx, id); err != nil && !txn.IsLeaseNotFound(err) {
		return fmt.Errorf("scratch: revoke the marker lease of %s: %w", m.prefix, err)
	}
	m.mu.Lock()
	m.lease = 0
	m.mu.Unlock()
	return nil
}

// KeepFor ends the run's claim but keeps the prefix in use for about d
// more: the marker moves to a lease of d that nobody renews (demo --keep:
// the keys stay for inspect, and gc leaves them alone until the lease ran
// out).
func (m *Marker) KeepFor(ctx context.Context, d time.Duration) error {
	old := m.halt()
	v := m.value
	v.Kept = true
	if _, err := m.put(ctx, d, v); err != nil {
		return err
	}
	m.mu.Lock()
	m.lease = 0
	m.mu.Unlock()
	if old != 0 {
		// The marker moved to the fresh lease: the old one holds no key and
		// would run out by itself; revoking it only tidies up.
		_, _ = m.c.Revoke(ctx, old)
	}
	return nil
}
