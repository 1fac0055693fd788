package leasemap

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/clock"
	catalogue "github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/txn"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// t0 is the catalogue's start time.
func t0() time.Time { return catalogue.T0() }

// fixture is one map over a fresh prefix of the shared member.
type fixture struct {
	client *clientv3.Client
	rec    *txn.Recorder
	flaky  *kvfake.LostAnswers
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
	f.flaky = &kvfake.LostAnswers{KV: c.KV}
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

// loseNextResponse makes the fixture's next write lose its answer, after
// it was applied (applied) or without sending it.
func (f *fixture) loseNextResponse(applied bool) { f.flaky.LoseOne(applied, nil) }

// refusingKV loses the answers of chosen writes (its LostAnswers) and,
// while reads.Set says so, refuses every read with the error it was made
// with: a resolution that cannot ride it out.
type refusingKV struct {
	*kvfake.LostAnswers
	reads *kvfake.ReadFaults
}

func newRefusingKV(kv clientv3.KV, refused error) *refusingKV {
	reads := &kvfake.ReadFaults{KV: kv, Err: refused}
	return &refusingKV{LostAnswers: &kvfake.LostAnswers{KV: reads}, reads: reads}
}

// contextCanceled returns a context that has already ended.
func contextCanceled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}
