package txn

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// committingKV answers every transaction as committed at the next
// revision, without sending it anywhere (BenchmarkRunCachedWrite).
type committingKV struct {
	clientv3.KV
	rev atomic.Int64
}

func (k *committingKV) Txn(context.Context) clientv3.Txn {
	return DeferredTxn(func(TxnOps) (*clientv3.TxnResponse, error) {
		return &clientv3.TxnResponse{Header: &pb.ResponseHeader{Revision: k.rev.Add(1) + 1_000}, Succeeded: true}, nil
	})
}

// BenchmarkRunCachedWrite measures the engine's own work for the shape of
// the store's hot single-transaction writes, its keys all in the cache:
// an owner key guarded by its CreateRevision, a row read and rewritten,
// and three change stamps touched (UpdateMeshNode's transaction). The KV
// answers at once, so ns/op and allocs/op are the engine's (and the
// decision's, which builds one value).
func BenchmarkRunCachedWrite(b *testing.B) {
	const root = "/bench/TestRunCachedWrite-0123456789ab/"
	owner, row := root+"owner/8:owner-00", root+"meshNodes/4:game7:node-00"
	stamps := []string{root + "stamp/1:14:game", root + "stamp/1:10:", root + "meshnode-stamp/4:game"}
	e := New(&committingKV{}, nil, Options{})
	e.Remember(Observation{Key: owner, Present: true, Value: []byte("owner"), ModRevision: 5, CreateRevision: 5, Version: 1, Revision: 10})
	e.Remember(Observation{Key: row, Present: true, Value: []byte("row"), ModRevision: 7, CreateRevision: 6, Version: 2, Revision: 10})
	body := bytes.Repeat([]byte("x"), 836)
	decide := func(v *View) (struct{}, Commit, error) {
		v.Owner(owner)
		v.Get(row)
		value := append(body[:len(body):len(body)], v.Nonce()...)
		return struct{}{}, Commit{Writes: []Write{Put(row, value)}, Touch: stamps}, nil
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, out, err := RunWith(ctx, e, "bench", Prefetch{Keys: []string{owner, row}}, decide); err != nil || !out.Written {
			b.Fatal(out, err)
		}
	}
}
