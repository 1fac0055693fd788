package etcdstore

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
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
	return &hookedTxn{Txn: h.KV.Txn(ctx), kv: h}
}

type hookedTxn struct {
	clientv3.Txn
	kv   *hookedKV
	then []clientv3.Op
}

func (t *hookedTxn) If(cs ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(cs...); return t }
func (t *hookedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Else(ops...)
	return t
}
func (t *hookedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.then = append(t.then, ops...)
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *hookedTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.kv.commit == nil {
		return t.Txn.Commit()
	}
	return t.kv.commit(t.then, t.Txn.Commit)
}

// writes reports whether ops put or delete anything.
func writes(ops []clientv3.Op) bool {
	for _, op := range ops {
		if op.IsPut() || op.IsDelete() {
			return true
		}
	}
	return false
}
