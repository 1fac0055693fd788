package txn

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// KV returns kv with its reads sent through the Retrier: Get, a Do of a
// Get, and a Txn whose branches only read (its compares are re-evaluated
// on every attempt, which is what a fresh read must do) are retried while
// etcd answers transient errors; everything that writes (Put, Delete,
// Compact, a Txn with a put or delete in either branch) is sent once, as
// is. Wrapping a KV of the same Retrier again returns it unchanged.
func (r *Retrier) KV(kv clientv3.KV) clientv3.KV {
	if rk, ok := kv.(*retryingKV); ok && rk.r == r {
		return kv
	}
	return &retryingKV{KV: kv, r: r}
}

// unwrapRetrying returns the KV a Retrier's wrapper wraps (kv itself when it
// is not one): what a transaction that writes is sent on, since the wrapper
// sends those once, as they are.
func unwrapRetrying(kv clientv3.KV) clientv3.KV {
	if rk, ok := kv.(*retryingKV); ok {
		return rk.KV
	}
	return kv
}

// retryingKV is Retrier.KV's wrapper.
type retryingKV struct {
	clientv3.KV
	r *Retrier
}

// Get implements clientv3.KV.
func (k *retryingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	var resp *clientv3.GetResponse
	err := k.r.Do(ctx, "get "+key, func(ctx context.Context) error {
		var err error
		resp, err = k.KV.Get(ctx, key, opts...)
		return err
	})
	return resp, err
}

// Do implements clientv3.KV.
func (k *retryingKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	if !readOnly(op) {
		return k.KV.Do(ctx, op)
	}
	var resp clientv3.OpResponse
	err := k.r.Do(ctx, "do", func(ctx context.Context) error {
		var err error
		resp, err = k.KV.Do(ctx, op)
		return err
	})
	return resp, err
}

// Txn implements clientv3.KV. The transaction is built on the wrapped KV
// when committed (once per attempt): once when it may write, else until it
// succeeds, fails for a reason that is not transient, or the context ends.
func (k *retryingKV) Txn(ctx context.Context) clientv3.Txn {
	return DeferredTxn(func(ops TxnOps) (*clientv3.TxnResponse, error) {
		if !ops.OnlyReads() {
			return ops.Send(ctx, k.KV)
		}
		var resp *clientv3.TxnResponse
		err := k.r.Do(ctx, "read txn", func(ctx context.Context) error {
			var err error
			resp, err = ops.Send(ctx, k.KV)
			return err
		})
		return resp, err
	})
}

// readOnly reports whether op only reads (a Get, or a Txn of reads).
func readOnly(op clientv3.Op) bool {
	switch {
	case op.IsGet():
		return true
	case op.IsTxn():
		_, then, other := op.Txn()
		return allReadOnly(then) && allReadOnly(other)
	}
	return false
}

func allReadOnly(ops []clientv3.Op) bool {
	for _, op := range ops {
		if !readOnly(op) {
			return false
		}
	}
	return true
}
