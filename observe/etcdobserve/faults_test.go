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
	mu          sync.Mutex
	failRead    bool
	beforeWrite func()
}

func (f *faultKV) armReadFailure() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failRead = true
}

func (f *faultKV) armBeforeWrite(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beforeWrite = fn
}

// takeRead reports whether the read about to be sent must fail.
func (f *faultKV) takeRead() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := f.failRead
	f.failRead = false
	return fail
}

func (f *faultKV) takeWrite() func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn := f.beforeWrite
	f.beforeWrite = nil
	return fn
}

// errLeaderChanged is what etcd answers while it elects a leader.
func errLeaderChanged() error { return status.Error(codes.Unavailable, "etcdserver: leader changed") }

func (f *faultKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if f.takeRead() {
		return nil, errLeaderChanged()
	}
	return f.KV.Get(ctx, key, opts...)
}

// Txn implements clientv3.KV.
func (f *faultKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		switch {
		case ops.OnlyReads():
			if f.takeRead() {
				return nil, errLeaderChanged()
			}
		default:
			if fn := f.takeWrite(); fn != nil {
				fn()
			}
		}
		return ops.Send(ctx, f.KV)
	})
}
