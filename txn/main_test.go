package txn

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// fixture is an engine over a fresh prefix of the shared member, with a
// recorder and a fault injector between them.
type fixture struct {
	client *clientv3.Client
	flaky  *flakyKV
	rec    *Recorder
	prefix string
	e      *Engine
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	c := etcdtest.Connect(t)
	f := &fixture{client: c, prefix: etcdtest.UniquePrefix(t)}
	f.flaky = &flakyKV{KV: c.KV}
	f.rec = NewRecorder(f.flaky)
	f.e = New(f.rec, c.Watcher, opts)
	return f
}

func (f *fixture) key(name string) string { return f.prefix + name }

// put writes a key directly, behind the engine's back.
func (f *fixture) put(t *testing.T, key, value string) int64 {
	t.Helper()
	resp, err := f.client.Put(context.Background(), key, value)
	require.NoError(t, err)
	return resp.Header.Revision
}

func (f *fixture) get(t *testing.T, key string) (string, bool) {
	t.Helper()
	resp, err := f.client.Get(context.Background(), key)
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return "", false
	}
	return string(resp.Kvs[0].Value), true
}

// doc is the test decisions' value: some data and the write nonce.
type doc struct {
	Data  string `json:"data"`
	Nonce string `json:"nonce"`
}

func encodeDoc(t *testing.T, data, nonce string) []byte {
	t.Helper()
	b, err := json.Marshal(doc{Data: data, Nonce: nonce})
	require.NoError(t, err)
	return b
}

func dataOf(t *testing.T, value []byte) string {
	t.Helper()
	var d doc
	require.NoError(t, json.Unmarshal(value, &d))
	return d.Data
}

// flakyKV fails chosen Txn commits with a "request timed out" error after
// sending them (applied) or without sending them (lost); after can run
// between the apply and the error (for example a concurrent overwrite).
type flakyKV struct {
	clientv3.KV
	mu          sync.Mutex
	failApplied int
	failLost    int
	after       func()
}

func (f *flakyKV) failNext(applied, lost int, after func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failApplied, f.failLost, f.after = applied, lost, after
}

func (f *flakyKV) take() (fail, send bool, after func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.failApplied > 0:
		f.failApplied--
		return true, true, f.after
	case f.failLost > 0:
		f.failLost--
		return true, false, f.after
	}
	return false, true, nil
}

// Txn fails only transactions that write.
func (f *flakyKV) Txn(ctx context.Context) clientv3.Txn {
	return DeferredTxn(func(ops TxnOps) (*clientv3.TxnResponse, error) {
		if ops.OnlyReads() {
			return ops.Send(ctx, f.KV)
		}
		fail, send, after := f.take()
		if !fail {
			return ops.Send(ctx, f.KV)
		}
		if send {
			if _, err := ops.Send(ctx, f.KV); err != nil {
				return nil, err
			}
		}
		if after != nil {
			after()
		}
		return nil, status.Error(codes.Unavailable, "etcdserver: request timed out")
	})
}
