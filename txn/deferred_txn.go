package txn

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TxnOps are the parts of a transaction: its comparisons and the
// operations of its two branches.
type TxnOps struct {
	Cmps       []clientv3.Cmp
	Then, Else []clientv3.Op
}

// OnlyReads reports whether neither branch writes (every operation is a
// Get, or a nested Txn of Gets).
func (o TxnOps) OnlyReads() bool { return allReadOnly(o.Then) && allReadOnly(o.Else) }

// Send builds the transaction on kv with ctx and commits it.
func (o TxnOps) Send(ctx context.Context, kv clientv3.KV) (*clientv3.TxnResponse, error) {
	return kv.Txn(ctx).If(o.Cmps...).Then(o.Then...).Else(o.Else...).Commit()
}

// DeferredTxn returns a clientv3.Txn that records what it is given and, on
// Commit, calls commit with it: for KV wrappers that send a transaction
// with a context of their own, or several times (a retry, a deadline, a
// tracing span), through TxnOps.Send.
func DeferredTxn(commit func(TxnOps) (*clientv3.TxnResponse, error)) clientv3.Txn {
	return &deferredTxn{commit: commit}
}

// deferredTxn is DeferredTxn's transaction.
type deferredTxn struct {
	ops    TxnOps
	commit func(TxnOps) (*clientv3.TxnResponse, error)
}

func (t *deferredTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.ops.Cmps = append(t.ops.Cmps, cs...)
	return t
}

func (t *deferredTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.ops.Then = append(t.ops.Then, ops...)
	return t
}

func (t *deferredTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.ops.Else = append(t.ops.Else, ops...)
	return t
}

func (t *deferredTxn) Commit() (*clientv3.TxnResponse, error) { return t.commit(t.ops) }
