package txn

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// fixture is an engine over a fresh prefix of the shared member, with a
// recorder and a fault injector between them.
type fixture struct {
	client *clientv3.Client
	flaky  *kvfake.LostAnswers
	rec    *Recorder
	prefix string
	e      *Engine
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	c := etcdtest.Connect(t)
	f := &fixture{client: c, prefix: etcdtest.UniquePrefix(t)}
	f.flaky = &kvfake.LostAnswers{KV: c.KV}
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
