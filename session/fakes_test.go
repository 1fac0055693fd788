package session_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/session"
)

// t0 is the manual clocks' start.
var t0 = time.Date(2026, 7, 3, 12, 0, 0, 0, time.UTC)

// fault is how a faultyStore answers a call: nil passes it to the store.
type fault func(ctx context.Context) error

// unreachable blocks until the call's context ends, as a store that cannot
// be reached does.
func unreachable(ctx context.Context) error {
	<-ctx.Done()
	return fmt.Errorf("test store unreachable: %w: %w", location.ErrUnavailable, context.Cause(ctx))
}

// failing fails at once with an error by which nothing was written.
func failing(context.Context) error {
	return fmt.Errorf("test store: %w: etcdserver: leader changed", location.ErrUnavailable)
}

// answerLost fails at once with an error by which the outcome is unknown.
func answerLost(context.Context) error {
	return fmt.Errorf("test store: %w: the answer was lost", location.ErrOutcomeUnknown)
}

// faultyStore is an OwnerLeaseStore whose calls can be made to fail.
type faultyStore struct {
	location.OwnerLeaseStore
	mu                     sync.Mutex
	claimFault, renewFault fault
	claimFaults            int // claims that fail with claimFault before one passes
	// claimApplies: a failing claim is applied first, then answered
	// claimFault's error (its answer lost).
	claimApplies             bool
	claims, renews, releases atomic.Int64
}

func (f *faultyStore) setRenewFault(fl fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewFault = fl
}

func (f *faultyStore) ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	f.claims.Add(1)
	f.mu.Lock()
	fl := f.claimFault
	if f.claimFaults > 0 {
		f.claimFaults--
	} else {
		fl = nil
	}
	applies := f.claimApplies
	f.mu.Unlock()
	if fl != nil && applies {
		if _, err := f.OwnerLeaseStore.ClaimOwnerLease(ctx, ownerID, ttl); err != nil {
			return location.OwnerLeaseClaimResult{}, err
		}
	}
	if fl != nil {
		if err := fl(ctx); err != nil {
			return location.OwnerLeaseClaimResult{}, err
		}
	}
	return f.OwnerLeaseStore.ClaimOwnerLease(ctx, ownerID, ttl)
}

func (f *faultyStore) RenewOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	f.renews.Add(1)
	f.mu.Lock()
	fl := f.renewFault
	f.mu.Unlock()
	if fl != nil {
		if err := fl(ctx); err != nil {
			return location.OwnerLeaseRenewResult{}, err
		}
	}
	return f.OwnerLeaseStore.RenewOwnerLease(ctx, t, ttl)
}

func (f *faultyStore) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	f.releases.Add(1)
	return f.OwnerLeaseStore.ReleaseOwnerLease(ctx, t)
}

// keeperStore adds a location.OwnerLeaseKeeper to a faultyStore: its kept
// lease renews with RenewOwnerLease and is lost when the test says so.
type keeperStore struct {
	*faultyStore
	lost        chan struct{}
	keeps       atomic.Int64
	unsupported bool
}

func (k *keeperStore) KeepOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, location.KeptOwnerLease, error) {
	k.keeps.Add(1)
	if k.unsupported {
		return location.OwnerLeaseRenewResult{}, nil, fmt.Errorf("test: %w", location.ErrUnsupported)
	}
	res, err := k.RenewOwnerLease(ctx, t, ttl)
	if err != nil || res.Kind != location.KindRenewed {
		return res, nil, err
	}
	return res, &fakeKept{s: k, token: t, ttl: ttl}, nil
}

type fakeKept struct {
	s      *keeperStore
	token  location.OwnerToken
	ttl    time.Duration
	closed atomic.Int64
}

func (k *fakeKept) Renew(ctx context.Context) (location.OwnerLeaseRenewResult, error) {
	return k.s.RenewOwnerLease(ctx, k.token, k.ttl)
}
func (k *fakeKept) Lost() <-chan struct{} { return k.s.lost }
func (k *fakeKept) Close()                { k.closed.Add(1) }

// memWorld is a memstore and a session clock, both manual.
type memWorld struct {
	clk   *clock.Manual
	mem   *memstore.Store
	store *faultyStore
	logs  *logRecorder
}

func newMemWorld() *memWorld {
	clk := clock.NewManual(t0)
	mem := memstore.New(memstore.Options{Clock: clk.Now})
	return &memWorld{clk: clk, mem: mem, store: &faultyStore{OwnerLeaseStore: mem}, logs: &logRecorder{}}
}

// options are the framework's defaults on the world's clock and logger.
func (w *memWorld) options() session.Options {
	return session.Options{Clock: w.clk, Logger: slog.New(w.logs)}
}

// read reads an owner's lease from the memstore.
func (w *memWorld) read(t *testing.T, ownerID string) location.OwnerLeaseReadResult {
	t.Helper()
	res, err := w.mem.ReadOwnerLease(context.Background(), ownerID)
	require.NoError(t, err)
	return res
}

// waitDone waits for the session to end.
func waitDone(t *testing.T, s *session.Session) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("the session did not end; status %+v", s.Status())
	}
}

// eventually waits until cond holds.
func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	require.Eventuallyf(t, cond, 10*time.Second, time.Millisecond, msg, args...)
}

// logRecorder is a slog.Handler that keeps the records.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// messages returns the messages logged at level.
func (l *logRecorder) messages(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r.Level == level {
			out = append(out, r.Message)
		}
	}
	return out
}

// has reports whether msg was logged at level.
func (l *logRecorder) has(level slog.Level, msg string) bool {
	return slices.Contains(l.messages(level), msg)
}
