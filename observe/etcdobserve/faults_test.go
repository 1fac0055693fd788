package etcdobserve_test

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/txn"
)

// faultKV is the store's KV (etcdstore.Options.KV) with faults the test
// arms: the next read fails with a transient error before it is sent (as
// during a leader election), and a function runs once just before the next
// write transaction is sent (a concurrent writer).
type faultKV struct {
	clientv3.KV
	failRead    oneShot[bool]
	beforeWrite oneShot[func()]
}

// oneShot is a value armed for its next take only.
type oneShot[T any] struct {
	mu sync.Mutex
	v  T
}

// arm sets the value the next take returns.
func (o *oneShot[T]) arm(v T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.v = v
}

// take returns the armed value (the zero value when none is) and disarms.
func (o *oneShot[T]) take() T {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := o.v
	var zero T
	o.v = zero
	return v
}

func (f *faultKV) armReadFailure() { f.failRead.arm(true) }

func (f *faultKV) armBeforeWrite(fn func()) { f.beforeWrite.arm(fn) }

// errLeaderChanged is what etcd answers while it elects a leader.
func errLeaderChanged() error { return status.Error(codes.Unavailable, "etcdserver: leader changed") }

func (f *faultKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if f.failRead.take() {
		return nil, errLeaderChanged()
	}
	return f.KV.Get(ctx, key, opts...)
}

// Txn implements clientv3.KV.
func (f *faultKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		switch {
		case ops.OnlyReads():
			if f.failRead.take() {
				return nil, errLeaderChanged()
			}
		default:
			if fn := f.beforeWrite.take(); fn != nil {
				fn()
			}
		}
		return ops.Send(ctx, f.KV)
	})
}
