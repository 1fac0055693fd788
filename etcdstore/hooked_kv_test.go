package etcdstore

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/txn"
)

// newHookedFixture returns a fixture whose store sends its transactions
// through a hookedKV (with no hook yet).
func newHookedFixture(t *testing.T) (*fixture, *hookedKV) {
	t.Helper()
	hooked := &hookedKV{}
	f := newFixture(t, func(o *Options) {
		hooked.KV = o.KV
		o.KV = hooked
	})
	return f, hooked
}

// hookedKV passes every transaction through commit, which sees the
// transaction's Then operations and decides whether, when and how to send it
// (send commits it as built). A nil commit sends every transaction.
type hookedKV struct {
	clientv3.KV
	commit func(then []clientv3.Op, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error)
}

func (h *hookedKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		send := func() (*clientv3.TxnResponse, error) { return ops.Send(ctx, h.KV) }
		if h.commit == nil {
			return send()
		}
		return h.commit(ops.Then, send)
	})
}
