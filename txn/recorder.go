package txn

import (
	"context"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Request kinds a Recorder counts.
const (
	CallGet           = "get"
	CallTxn           = "txn"
	CallPut           = "put"
	CallDelete        = "delete"
	CallCompact       = "compact"
	CallDo            = "do"
	CallGetStream     = "getStream"
	CallGrant         = "grant"
	CallRevoke        = "revoke"
	CallKeepAliveOnce = "keepAliveOnce"
	CallTimeToLive    = "timeToLive"
)

// callKinds are the kinds a Recorder counts, in the order of its counters.
var callKinds = [...]string{CallGet, CallTxn, CallPut, CallDelete, CallCompact, CallDo,
	CallGetStream, CallGrant, CallRevoke, CallKeepAliveOnce, CallTimeToLive}

// Recorder wraps a KV (and a Lease, through Lease) and counts the requests
// that pass through it, so that tests can prove how many round trips an
// operation costs. Safe for concurrent use; counting takes no lock (a
// benchmark's callers would otherwise queue on it), so Counts, Total and
// Reset are not atomic with respect to requests counted meanwhile.
type Recorder struct {
	clientv3.KV
	counts [len(callKinds)]atomic.Int64
}

// NewRecorder wraps kv.
func NewRecorder(kv clientv3.KV) *Recorder {
	return &Recorder{KV: kv}
}

func (r *Recorder) count(kind string) {
	for i, k := range callKinds {
		if k == kind {
			r.counts[i].Add(1)
			return
		}
	}
}

// Counts returns the non-zero counts since the last Reset, by kind.
func (r *Recorder) Counts() map[string]int {
	out := map[string]int{}
	for i := range r.counts {
		if n := r.counts[i].Load(); n != 0 {
			out[callKinds[i]] = int(n)
		}
	}
	return out
}

// Total returns the number of requests since the last Reset.
func (r *Recorder) Total() int {
	n := int64(0)
	for i := range r.counts {
		n += r.counts[i].Load()
	}
	return int(n)
}

// Reset sets every count to zero.
func (r *Recorder) Reset() {
	for i := range r.counts {
		r.counts[i].Store(0)
	}
}

func (r *Recorder) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	r.count(CallGet)
	return r.KV.Get(ctx, key, opts...)
}

// GetStream implements clientv3.KV.
func (r *Recorder) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	r.count(CallGetStream)
	return r.KV.GetStream(ctx, key, opts...)
}

// Put implements clientv3.KV.
func (r *Recorder) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	r.count(CallPut)
	return r.KV.Put(ctx, key, val, opts...)
}

// Delete implements clientv3.KV.
func (r *Recorder) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	r.count(CallDelete)
	return r.KV.Delete(ctx, key, opts...)
}

// Compact implements clientv3.KV.
func (r *Recorder) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	r.count(CallCompact)
	return r.KV.Compact(ctx, rev, opts...)
}

// Do implements clientv3.KV.
func (r *Recorder) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	r.count(CallDo)
	return r.KV.Do(ctx, op)
}

// Txn implements clientv3.KV; the transaction counts when committed.
func (r *Recorder) Txn(ctx context.Context) clientv3.Txn {
	return DeferredTxn(func(ops TxnOps) (*clientv3.TxnResponse, error) {
		r.count(CallTxn)
		return ops.Send(ctx, r.KV)
	})
}

// Lease wraps a Lease so that its requests count in r too.
func (r *Recorder) Lease(l clientv3.Lease) clientv3.Lease { return &recordingLease{Lease: l, r: r} }

type recordingLease struct {
	clientv3.Lease
	r *Recorder
}

func (l *recordingLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	l.r.count(CallGrant)
	return l.Lease.Grant(ctx, ttl)
}

func (l *recordingLease) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	l.r.count(CallRevoke)
	return l.Lease.Revoke(ctx, id)
}

func (l *recordingLease) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	l.r.count(CallKeepAliveOnce)
	return l.Lease.KeepAliveOnce(ctx, id)
}

func (l *recordingLease) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	l.r.count(CallTimeToLive)
	return l.Lease.TimeToLive(ctx, id, opts...)
}
