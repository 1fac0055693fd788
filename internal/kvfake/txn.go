package kvfake

import (
	clientv3 "go.etcd.io/etcd/client/v3"
)

// commitFunc decides whether, when and how to send a transaction (send
// commits it as built); writes tells whether a branch of it writes.
type commitFunc func(writes bool, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error)

// hookedTxn is a transaction of a wrapped KV that notes whether a branch
// writes and, on Commit, lets commit decide.
type hookedTxn struct {
	clientv3.Txn
	writes bool
	commit commitFunc
}

func newHookedTxn(txn clientv3.Txn, commit commitFunc) *hookedTxn {
	return &hookedTxn{Txn: txn, commit: commit}
}

func (t *hookedTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.Txn = t.Txn.If(cs...)
	return t
}

func (t *hookedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.writes = t.writes || !OnlyReads(ops)
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *hookedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.writes = t.writes || !OnlyReads(ops)
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *hookedTxn) Commit() (*clientv3.TxnResponse, error) { return t.commit(t.writes, t.Txn.Commit) }

// OnlyReads reports whether every op only reads: a Get, or a nested Txn
// whose branches only read.
func OnlyReads(ops []clientv3.Op) bool {
	for _, op := range ops {
		switch {
		case op.IsGet():
		case op.IsTxn():
			_, then, other := op.Txn()
			if !OnlyReads(then) || !OnlyReads(other) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
