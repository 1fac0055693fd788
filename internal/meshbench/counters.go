package meshbench

import (
	"context"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/stats"

	"github.com/zlink-systems/zlink-etcd/txn"
)

// clientCounters count what every node's client sent and received; one
// set is shared by all the nodes of a run. Safe for concurrent use.
type clientCounters struct {
	reads, writes, rows            atomic.Int64
	watchMsgs, watchBytes          atomic.Int64
	keepAliveMsgs, recvBytes, sent atomic.Int64
	// root is the store's key prefix; byRange counts the rows read per
	// part of the layout (the first key segment under root: a table,
	// "owner", "meshnode-stamp", …).
	root    string
	mu      sync.Mutex
	byRange map[string]int64
}

// newClientCounters returns zeroed counters of a store under root.
func newClientCounters(root string) *clientCounters {
	return &clientCounters{root: root, byRange: map[string]int64{}}
}

// countRows adds n rows read from key's part of the layout.
func (c *clientCounters) countRows(key string, n int) {
	if n == 0 {
		return
	}
	c.rows.Add(int64(n))
	part, _, _ := strings.Cut(strings.TrimPrefix(key, c.root), "/")
	c.mu.Lock()
	c.byRange[part] += int64(n)
	c.mu.Unlock()
}

// clientSample is a reading of clientCounters.
type clientSample struct {
	// Reads are the read requests (Gets and read-only Txns), Writes the
	// other requests of the stores' KVs.
	Reads, Writes int64
	// Rows are the key-values the read requests returned.
	Rows int64
	// WatchMsgs and WatchBytes are the watch responses the clients
	// received and their size on the wire.
	WatchMsgs, WatchBytes int64
	// KeepAliveMsgs are the lease keep-alive responses received.
	KeepAliveMsgs int64
	// RecvBytes and SentBytes are every gRPC payload's wire size.
	RecvBytes, SentBytes int64
	// RowsByRange splits Rows by the part of the layout read.
	RowsByRange map[string]int64
}

// sample reads the counters.
func (c *clientCounters) sample() clientSample {
	return clientSample{
		Reads: c.reads.Load(), Writes: c.writes.Load(), Rows: c.rows.Load(),
		WatchMsgs: c.watchMsgs.Load(), WatchBytes: c.watchBytes.Load(), KeepAliveMsgs: c.keepAliveMsgs.Load(),
		RecvBytes: c.recvBytes.Load(), SentBytes: c.sent.Load(), RowsByRange: c.rowsByRange(),
	}
}

// rowsByRange copies byRange.
func (c *clientCounters) rowsByRange() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byRange)
}

// sub returns s − o.
func (s clientSample) sub(o clientSample) clientSample {
	d := clientSample{
		Reads: s.Reads - o.Reads, Writes: s.Writes - o.Writes, Rows: s.Rows - o.Rows,
		WatchMsgs: s.WatchMsgs - o.WatchMsgs, WatchBytes: s.WatchBytes - o.WatchBytes,
		KeepAliveMsgs: s.KeepAliveMsgs - o.KeepAliveMsgs, RecvBytes: s.RecvBytes - o.RecvBytes, SentBytes: s.SentBytes - o.SentBytes,
		RowsByRange: map[string]int64{},
	}
	for k, v := range s.RowsByRange {
		if n := v - o.RowsByRange[k]; n != 0 {
			d.RowsByRange[k] = n
		}
	}
	return d
}

// wrapKV is the stores' etcdstore.Options.WrapKV: it counts requests and
// the rows reads return.
func (c *clientCounters) wrapKV(kv clientv3.KV) clientv3.KV { return &countingKV{KV: kv, c: c} }

// countingKV counts the requests of one store's KV.
type countingKV struct {
	clientv3.KV
	c *clientCounters
}

// Get implements clientv3.KV.
func (k *countingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.c.reads.Add(1)
	resp, err := k.KV.Get(ctx, key, opts...)
	if err == nil {
		k.c.countRows(key, len(resp.Kvs))
	}
	return resp, err
}

// Put implements clientv3.KV.
func (k *countingKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	k.c.writes.Add(1)
	return k.KV.Put(ctx, key, val, opts...)
}

// Delete implements clientv3.KV.
func (k *countingKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	k.c.writes.Add(1)
	return k.KV.Delete(ctx, key, opts...)
}

// Do implements clientv3.KV.
func (k *countingKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	if !op.IsGet() {
		k.c.writes.Add(1)
		return k.KV.Do(ctx, op)
	}
	k.c.reads.Add(1)
	resp, err := k.KV.Do(ctx, op)
	if err == nil && resp.Get() != nil {
		k.c.countRows(string(op.KeyBytes()), len(resp.Get().Kvs))
	}
	return resp, err
}

// Txn implements clientv3.KV: a transaction counts when it is sent, as a
// read when neither branch writes.
func (k *countingKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		if ops.OnlyReads() {
			k.c.reads.Add(1)
		} else {
			k.c.writes.Add(1)
		}
		resp, err := ops.Send(ctx, k.KV)
		if err == nil {
			branch := ops.Then
			if !resp.Succeeded {
				branch = ops.Else
			}
			k.c.countTxnRows(branch, resp.Responses)
		}
		return resp, err
	})
}

// countTxnRows counts the key-values the range responses of a
// transaction's branch returned (ops are the branch's operations, in the
// order of rs; nested transactions count by their own responses).
func (c *clientCounters) countTxnRows(ops []clientv3.Op, rs []*pb.ResponseOp) {
	for i, r := range rs {
		key := ""
		if i < len(ops) {
			key = string(ops[i].KeyBytes())
		}
		switch v := r.Response.(type) {
		case *pb.ResponseOp_ResponseRange:
			c.countRows(key, len(v.ResponseRange.Kvs))
		case *pb.ResponseOp_ResponseTxn:
			var then []clientv3.Op
			if i < len(ops) && ops[i].IsTxn() {
				_, t, e := ops[i].Txn()
				then = t
				if !v.ResponseTxn.Succeeded {
					then = e
				}
			}
			c.countTxnRows(then, v.ResponseTxn.Responses)
		}
	}
}

// statsHandler is a gRPC client stats handler that counts the payloads
// every node's client receives, by method.
type statsHandler struct{ c *clientCounters }

// methodKey carries an RPC's method from TagRPC to HandleRPC.
type methodKey struct{}

// TagRPC implements stats.Handler.
func (h statsHandler) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, info.FullMethodName)
}

// HandleRPC implements stats.Handler.
func (h statsHandler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch p := s.(type) {
	case *stats.InPayload:
		h.c.recvBytes.Add(int64(p.WireLength))
		method, _ := ctx.Value(methodKey{}).(string)
		switch {
		case strings.HasSuffix(method, "/Watch"):
			h.c.watchMsgs.Add(1)
			h.c.watchBytes.Add(int64(p.WireLength))
		case strings.HasSuffix(method, "/LeaseKeepAlive"):
			h.c.keepAliveMsgs.Add(1)
		}
	case *stats.OutPayload:
		h.c.sent.Add(int64(p.WireLength))
	}
}

// TagConn implements stats.Handler.
func (h statsHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

// HandleConn implements stats.Handler.
func (h statsHandler) HandleConn(context.Context, stats.ConnStats) {}
