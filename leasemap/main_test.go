package leasemap

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/txn"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// t0 is the catalogue's start time.
func t0() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }

// fixture is one map over a fresh prefix of the shared member.
type fixture struct {
	client *clientv3.Client
	rec    *txn.Recorder
	flaky  *flakyKV
	clock  *clock.Manual
	layout keys.Layout
	m      *Map
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := etcdtest.Connect(t)
	layout, err := keys.NewLayout(etcdtest.UniquePrefix(t))
	require.NoError(t, err)
	f := &fixture{client: c, clock: clock.NewManual(t0()), layout: layout}
	f.flaky = &flakyKV{KV: c.KV}
	f.rec = txn.NewRecorder(f.flaky)
	f.m = f.newMap(f.rec, f.rec.Lease(c.Lease), Options{Clock: f.clock.Now})
	return f
}

// newMap returns a map of the fixture's layout whose requests go through kv
// and lease, on an engine of its own (which searches the history with the
// shared member's watcher).
func (f *fixture) newMap(kv clientv3.KV, lease clientv3.Lease, opts Options) *Map {
	return New(txn.New(kv, f.client.Watcher, txn.Options{}), lease, f.layout, opts)
}

// ownerKV reads the owner key directly.
func (f *fixture) ownerKV(t *testing.T, ownerID string) *clientv3.GetResponse {
	t.Helper()
	got, err := f.client.Get(t.Context(), f.layout.OwnerKey(ownerID))
	require.NoError(t, err)
	return got
}

// leaseTTL asks etcd for the lease's time to live.
func (f *fixture) leaseTTL(t *testing.T, lease int64) *clientv3.LeaseTimeToLiveResponse {
	t.Helper()
	ttl, err := f.client.TimeToLive(t.Context(), clientv3.LeaseID(lease))
	require.NoError(t, err)
	return ttl
}

// flakyKV fails the next Txn commits with a "request timed out" error, after
// sending them (applied) or without sending them (not applied).
type flakyKV struct {
	clientv3.KV
	mu          sync.Mutex
	failApplied int
	failLost    int
}

func (f *flakyKV) failNext(applied, lost int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failApplied, f.failLost = applied, lost
}

// loseNextResponse makes the next commit fail with a timeout, after it was
// applied (applied) or without sending it.
func (f *fixture) loseNextResponse(applied bool) {
	if applied {
		f.flaky.failNext(1, 0)
	} else {
		f.flaky.failNext(0, 1)
	}
}

// take returns what to do with the next commit.
func (f *flakyKV) take() (fail, send bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.failApplied > 0:
		f.failApplied--
		return true, true
	case f.failLost > 0:
		f.failLost--
		return true, false
	}
	return false, true
}

func (f *flakyKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		fail, send := f.take()
		if !fail {
			return ops.Send(ctx, f.KV)
		}
		return loseAnswer(ctx, ops, f.KV, !send, nil)
	})
}

// loseAnswer answers a write as if its response was lost: ops is sent to kv
// first unless unsent, meanwhile (when set) runs, and the caller gets the
// timeout etcd answers, which does not say whether the write applied.
func loseAnswer(ctx context.Context, ops txn.TxnOps, kv clientv3.KV, unsent bool, meanwhile func()) (*clientv3.TxnResponse, error) {
	if !unsent {
		if _, err := ops.Send(ctx, kv); err != nil {
			return nil, err
		}
	}
	if meanwhile != nil {
		meanwhile()
	}
	return nil, status.Error(codes.Unavailable, "etcdserver: request timed out (test: the answer was lost)")
}

// contextCanceled returns a context that has already ended.
func contextCanceled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}
