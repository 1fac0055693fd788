// Package kvfake holds fake etcd KVs for tests: wrappers of a
// clientv3.KV that inject the faults a real cluster shows.
//
// It imports no package of this module, so that the internal tests of any
// package (txn's and etcdstore's included) can use it without an import
// cycle.
package kvfake

import (
	"context"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ReadFaults plays a cluster that is electing a leader, under a client's
// KV: while down, or for the next failReads reads (see Set), every read (a
// Get, or a Txn that only reads) fails with Err; writes pass. The zero
// value with KV set passes everything.
type ReadFaults struct {
	clientv3.KV
	// Err is what a failing read answers; nil means
	// rpctypes.ErrGRPCLeaderChanged.
	Err error

	mu        sync.Mutex
	down      bool
	failReads int

	reads, failed, writes atomic.Int64
}

// Set makes every read fail while down, and the next failReads reads fail
// (each failure takes one).
func (f *ReadFaults) Set(down bool, failReads int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down, f.failReads = down, failReads
}

// Pending returns how many of the failReads failures are still to come.
func (f *ReadFaults) Pending() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(f.failReads)
}

// Reads returns how many reads were sent to the wrapper (failed or not).
func (f *ReadFaults) Reads() int64 { return f.reads.Load() }

// Failed returns how many reads failed.
func (f *ReadFaults) Failed() int64 { return f.failed.Load() }

// Writes returns how many write transactions were committed through the
// wrapper.
func (f *ReadFaults) Writes() int64 { return f.writes.Load() }

// fail counts a read and returns the error it gets, if any.
func (f *ReadFaults) fail() error {
	f.reads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down && f.failReads == 0 {
		return nil
	}
	if f.failReads > 0 {
		f.failReads--
	}
	f.failed.Add(1)
	if f.Err != nil {
		return f.Err
	}
	return rpctypes.ErrGRPCLeaderChanged
}

// Get fails as a read does, or passes.
func (f *ReadFaults) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.KV.Get(ctx, key, opts...)
}

// Txn returns a transaction of the wrapped KV that, on Commit, fails as a
// read does when neither branch writes.
func (f *ReadFaults) Txn(ctx context.Context) clientv3.Txn {
	return newHookedTxn(f.KV.Txn(ctx), func(ops Ops, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error) {
		if ops.Writes() {
			f.writes.Add(1)
		} else if err := f.fail(); err != nil {
			return nil, err
		}
		return send()
	})
}
