package meshbench

import (
	"context"
	"strings"
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
}

// sample reads the counters.
func (c *clientCounters) sample() clientSample {
	return clientSample{
		Reads: c.reads.Load(), Writes: c.writes.Load(), Rows: c.rows.Load(),
		WatchMsgs: c.watchMsgs.Load(), WatchBytes: c.watchBytes.Load(), KeepAliveMsgs: c.keepAliveMsgs.Load(),
		RecvBytes: c.recvBytes.Load(), SentBytes: c.sent.Load(),
	}
}

// sub returns s − o.
func (s clientSample) sub(o clientSample) clientSample {
	return clientSample{
		Reads: s.Reads - o.Reads, Writes: s.Writes - o.Writes, Rows: s.Rows - o.Rows,
		WatchMsgs: s.WatchMsgs - o.WatchMsgs, WatchBytes: s.WatchBytes - o.WatchBytes,
		KeepAliveMsgs: s.KeepAliveMsgs - o.KeepAliveMsgs, RecvBytes: s.RecvBytes - o.RecvBytes, SentBytes: s.SentBytes - o.SentBytes,
	}
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
		k.c.rows.Add(int64(len(resp.Kvs)))
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
		k.c.rows.Add(int64(len(resp.Get().Kvs)))
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
			k.c.rows.Add(rowsOf(resp.Responses))
		}
		return resp, err
	})
}

// rowsOf counts the key-values the range responses of a transaction
// (nested ones included) returned.
func rowsOf(rs []*pb.ResponseOp) int64 {
	var n int64
	for _, r := range rs {
		switch v := r.Response.(type) {
		case *pb.ResponseOp_ResponseRange:
			n += int64(len(v.ResponseRange.Kvs))
		case *pb.ResponseOp_ResponseTxn:
			n += rowsOf(v.ResponseTxn.Responses)
		}
	}
	return n
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
