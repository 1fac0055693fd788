package kvfake

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Ops are the operations of a transaction being committed, as a hook sees
// them.
type Ops struct{ Then, Else []clientv3.Op }

// Writes reports whether a branch writes (an operation that is neither a
// Get nor a Txn of reads).
func (o Ops) Writes() bool { return !onlyReads(o.Then) || !onlyReads(o.Else) }

// CommitHook decides whether, when and how to send a transaction with ops
// (send commits it as built).
type CommitHook func(ops Ops, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error)

// Hooked passes every transaction through Commit. A nil Commit sends every
// transaction. Commit is read at each commit: change it only while no
// transaction is being sent.
type Hooked struct {
	clientv3.KV
	Commit CommitHook
}

// Txn returns a transaction of the wrapped KV that Commit sends.
func (h *Hooked) Txn(ctx context.Context) clientv3.Txn {
	return newHookedTxn(h.KV.Txn(ctx), func(ops Ops, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error) {
		if h.Commit == nil {
			return send()
		}
		return h.Commit(ops, send)
	})
}

// hookedTxn is a transaction of a wrapped KV that notes its operations and,
// on Commit, lets commit decide.
type hookedTxn struct {
	clientv3.Txn
	ops    Ops
	commit CommitHook
}

func newHookedTxn(txn clientv3.Txn, commit CommitHook) *hookedTxn {
	return &hookedTxn{Txn: txn, commit: commit}
}

func (t *hookedTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.Txn = t.Txn.If(cs...)
	return t
}

func (t *hookedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.ops.Then = append(t.ops.Then, ops...)
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *hookedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.ops.Else = append(t.ops.Else, ops...)
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *hookedTxn) Commit() (*clientv3.TxnResponse, error) { return t.commit(t.ops, t.Txn.Commit) }

// onlyReads reports whether every op only reads: a Get, or a nested Txn
// whose branches only read.
func onlyReads(ops []clientv3.Op) bool {
	for _, op := range ops {
		switch {
		case op.IsGet():
		case op.IsTxn():
			_, then, other := op.Txn()
			if !onlyReads(then) || !onlyReads(other) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
