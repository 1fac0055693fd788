package etcdstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// BenchmarkClientCPU measures the client side alone of the single-
// transaction writes: each side (the store, and its raw twin) is set up on
// the shared member as in the benchmarks beside raw etcd, then its
// transactions go to a KV that applies nothing and answers every one as
// committed at the next revision. ns/op and allocs/op are then what one
// call costs the client's CPU (up to handing the request to gRPC), without
// etcd's server and without the machine's noise; the difference between
// the store and its twin is the store's overhead that the benchmarks beside
// raw etcd see as their ratio. cpu-ns/op is the process's CPU time per
// call (the garbage collector's included), which the machine's other load
// disturbs less than ns/op. Run it with -benchmem, for example
//
//	go test -run '^$' -bench ClientCPU -benchmem ./etcdstore/
func BenchmarkClientCPU(b *testing.B) { clientCPU(b, 1) }

// BenchmarkClientCPUConcurrent is BenchmarkClientCPU with 64 callers at
// once (b.N calls in all, shared out evenly), so that what the callers
// share (the engine's cache, the pools) shows its contention: with more
// goroutines than processors, a caller that waits for a lock parks and
// must be woken. cpu-ns/op is the process's CPU time per call, as in
// BenchmarkClientCPU.
func BenchmarkClientCPUConcurrent(b *testing.B) { clientCPU(b, 64) }

// clientCPU runs BenchmarkClientCPU's operations with callers concurrent
// callers, each its own rows.
func clientCPU(b *testing.B, callers int) {
	ops := []struct {
		name  string
		build func(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide)
	}{
		{"UpdateMeshNodeRevision", updateMeshNodeRevisionPair},
		{"UpdatePeerRenew", updatePeerRenewPair},
		{"UpdateSpotRenew", updateSpotRenewPair},
		{"UpdateActorRenew", updateActorRenewPair},
		{"CompareExchangeAuthorityPreserve", casPreservePair},
		{"RenewOwnerLease", renewOwnerLeasePair},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			w := newBenchWorld(b, etcdtest.Connect(b))
			store, raw := op.build(b, w, callers)
			sides := []struct {
				name string
				side benchSide
			}{{"store", store}, {"raw", raw}}
			// One fake for both sides and every run of them: its revisions
			// only grow, as the store's cache expects of etcd's.
			fake := &committingKV{}
			realLease := w.lease.Lease
			w.lease.Lease = keepingLease{kv: fake}
			defer func() { w.lease.Lease = realLease }()
			for _, sd := range sides {
				b.Run(sd.name, func(b *testing.B) {
					real := sd.side.rec.KV
					sd.side.rec.KV = fake
					defer func() { sd.side.rec.KV = real }()
					ctx := context.Background()
					b.ReportAllocs()
					b.ResetTimer()
					before := processCPU()
					calls := splitCalls(b.N, callers)
					var wg sync.WaitGroup
					errs := make([]error, callers)
					for c, n := range calls {
						wg.Go(func() {
							for range n {
								if errs[c] = sd.side.call(ctx, c); errs[c] != nil {
									return
								}
							}
						})
					}
					wg.Wait()
					if err := errors.Join(errs...); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(processCPU()-before)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// committingKV is a KV whose transactions all succeed at once, each at a
// new revision, without being sent anywhere (BenchmarkClientCPU). Its other
// requests fail.
type committingKV struct {
	clientv3.KV
	rev atomic.Int64
}

func (k *committingKV) Txn(context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		// Build the request as the client would, so that both sides pay for it.
		req := &pb.TxnRequest{}
		for _, c := range ops.Cmps {
			req.Compare = append(req.Compare, c.GetCompare())
		}
		for _, o := range ops.Then {
			req.Success = append(req.Success, toRequestOp(o))
		}
		for _, o := range ops.Else {
			req.Failure = append(req.Failure, toRequestOp(o))
		}
		if _, err := proto.Marshal(req); err != nil {
			return nil, err
		}
		return &clientv3.TxnResponse{Header: &pb.ResponseHeader{Revision: k.rev.Add(1) + 1_000_000_000}, Succeeded: true}, nil
	})
}

// keepingLease is a Lease whose keep-alives all succeed at once, with a
// minute to live, without being sent anywhere (BenchmarkClientCPU). Its
// other requests fail.
type keepingLease struct {
	clientv3.Lease
	kv *committingKV
}

func (l keepingLease) KeepAliveOnce(_ context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	// Build the request as the client would, so that both sides pay for it.
	if _, err := proto.Marshal(&pb.LeaseKeepAliveRequest{ID: int64(id)}); err != nil {
		return nil, err
	}
	return &clientv3.LeaseKeepAliveResponse{ResponseHeader: &pb.ResponseHeader{Revision: l.kv.rev.Load() + 1_000_000_000}, ID: id, TTL: 60}, nil
}

// toRequestOp is the protobuf form of a Get, Put or Delete.
func toRequestOp(o clientv3.Op) *pb.RequestOp {
	switch {
	case o.IsGet():
		return &pb.RequestOp{Request: &pb.RequestOp_RequestRange{RequestRange: &pb.RangeRequest{Key: o.KeyBytes()}}}
	case o.IsPut():
		return &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: o.KeyBytes(), Value: o.ValueBytes()}}}
	default:
		return &pb.RequestOp{Request: &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: &pb.DeleteRangeRequest{Key: o.KeyBytes()}}}
	}
}
