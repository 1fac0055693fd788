package etcdstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The store's steady-state writes against raw etcd in the same run: a
// guarded one-put transaction is the physical floor (see
// /work/shared/etcd-on-this-machine.md); a renewal should cost about the
// same, being one such transaction.

// BenchmarkRawGuardedPut is one Txn comparing a ModRevision and putting a
// 300-byte value.
func BenchmarkRawGuardedPut(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	key := f.s.layout.Root() + "raw"
	value := strings.Repeat("x", 300)
	resp, err := f.s.client.Put(ctx, key, value)
	require.NoError(b, err)
	rev := resp.Header.Revision
	b.ResetTimer()
	for b.Loop() {
		r, err := f.s.client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(clientv3.OpPut(key, value)).Commit()
		if err != nil || !r.Succeeded {
			b.Fatalf("raw txn: %v", err)
		}
		rev = r.Header.Revision
	}
}

// BenchmarkUpdateSpotRenew renews one spot row.
func BenchmarkUpdateSpotRenew(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	res, err := f.s.ClaimOwnerLease(ctx, "a", time.Minute)
	require.NoError(b, err)
	row := spot("s1", res.Token)
	_, err = f.s.UpdateSpot(ctx, row, location.IntentNewClaim)
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		if w, err := f.s.UpdateSpot(ctx, row, location.IntentRenew); err != nil || w.Status != location.Stored {
			b.Fatalf("renew: %v %v", w, err)
		}
	}
}

// BenchmarkUpdateMeshNodeRevision publishes a new descriptor revision.
func BenchmarkUpdateMeshNodeRevision(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	res, err := f.s.ClaimOwnerLease(ctx, "a", time.Minute)
	require.NoError(b, err)
	d := meshNode("game", "node-a", res.Token)
	_, err = f.s.UpdateMeshNode(ctx, d, location.IntentNewClaim)
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		d.DescriptorRevision++
		if w, err := f.s.UpdateMeshNode(ctx, d, location.IntentRenew); err != nil || w.Status != location.Stored {
			b.Fatalf("update: %v %v", w, err)
		}
	}
}
