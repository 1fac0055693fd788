package leasemap

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// unsettledKV loses the answer of the next write once armed (applying it,
// or not with unsent) and refuses every read while refusing is set, so
// that the resolution fails and the outcome stays unknown.
type unsettledKV struct {
	clientv3.KV
	mu       sync.Mutex
	armed    bool
	unsent   bool
	refusing bool
}

var errRefused = status.Error(codes.PermissionDenied, "etcdserver: permission denied (test: reads refused)")

func (k *unsettledKV) set(armed, unsent, refusing bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.armed, k.unsent, k.refusing = armed, unsent, refusing
}

func (k *unsettledKV) refused() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.refusing
}

func (k *unsettledKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if k.refused() {
		return nil, errRefused
	}
	return k.KV.Get(ctx, key, opts...)
}

func (k *unsettledKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		k.mu.Lock()
		lose := !ops.OnlyReads() && k.armed
		refused, unsent := ops.OnlyReads() && k.refusing, k.unsent
		if lose {
			k.armed = false
		}
		k.mu.Unlock()
		switch {
		case refused:
			return nil, errRefused
		case !lose:
			return ops.Send(ctx, k.KV)
		}
		if !unsent {
			if _, err := ops.Send(ctx, k.KV); err != nil {
				return nil, err
			}
		}
		return nil, status.Error(codes.Unavailable, "etcdserver: request timed out (test: the answer was lost)")
	})
}

// A claim whose answer was lost and whose resolution failed leaves a lease
// nobody can name (issue 12): every later claim of the owner id conflicted
// with it until it expired, and the caller never learnt that it was its
// own. The map remembers such a claim, and Settle settles it by reading
// the owner key: applied (the key carries the claim's nonce), the lease is
// answered as claimed, with the generation it created, and renewed; not
// applied, its etcd lease is revoked and the caller claims anew. A
// settlement that cannot read keeps the claim for the next one. Claim
// itself answers as before (a conflict with the applied claim's lease).
func TestSettleAClaimWhoseOutcomeIsUnknown(t *testing.T) {
	tests := []struct {
		name string
		// unsent: the lost claim did not reach etcd.
		unsent bool
		// refusedOnce: the first settlement cannot read either.
		refusedOnce bool
		// taken: another map claims the owner id (absent: the lost claim
		// did not apply) before the settlement.
		taken bool
	}{
		{name: "applied: held, answered as claimed"},
		{name: "not applied: not held, its lease revoked", unsent: true},
		{name: "applied, the first settlement refused: kept for the next", refusedOnce: true},
		{name: "not applied, the owner id taken meanwhile: not held, the other untouched", unsent: true, taken: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			kv := &unsettledKV{KV: f.client.KV}
			rec := txn.NewRecorder(kv)
			m := f.newMap(rec, rec.Lease(f.client.Lease), Options{Clock: f.clock.Now})
			kv.set(true, tc.unsent, true)
			_, err := m.Claim(t.Context(), "a", ttl30s)
			require.ErrorIs(t, err, txn.ErrOutcomeUnknown)
			got := f.ownerKV(t, "a")
			var lost struct {
				generation int64
				lease      clientv3.LeaseID
			}
			if tc.unsent {
				require.Empty(t, got.Kvs, "the lost claim did not apply")
			} else {
				require.Len(t, got.Kvs, 1, "the lost claim applied")
				lost.generation, lost.lease = got.Kvs[0].CreateRevision, clientv3.LeaseID(got.Kvs[0].Lease)
			}
			if tc.refusedOnce {
				_, held, err := m.Settle(t.Context(), "a", ttl30s)
				require.ErrorIs(t, err, location.ErrUnavailable, "nothing written")
				require.ErrorContains(t, err, "settle a claim whose outcome is unknown")
				require.False(t, held)
			}
			kv.set(false, false, false)
			var other location.OwnerToken
			if tc.taken {
				o := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})
				res, err := o.Claim(t.Context(), "a", ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind)
				other = res.Token
			}
			rec.Reset()

			if !tc.unsent {
				res, err := m.Claim(t.Context(), "a", ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindConflict, res.Kind, "Claim does not settle")
				rec.Reset()
			}
			res, held, err := m.Settle(t.Context(), "a", ttl30s)
			require.NoError(t, err)
			require.Equal(t, !tc.unsent, held)
			switch {
			case tc.taken:
				require.Zero(t, res)
				require.Equal(t, 1, rec.Counts()[txn.CallRevoke], "the lost claim's lease is revoked")
				require.Equal(t, other, f.read(t, "a").Token, "the other claim is untouched")
			case tc.unsent:
				require.Zero(t, res)
				require.Equal(t, 1, rec.Counts()[txn.CallRevoke], "the lost claim's lease is revoked")
				require.Zero(t, rec.Counts()[txn.CallGrant])
				require.Equal(t, location.KindMissing, f.read(t, "a").Kind)
				res, err := m.Claim(t.Context(), "a", ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind, "claimed anew")
				require.Equal(t, res.Token, f.read(t, "a").Token)
			default:
				require.Equal(t, location.KindClaimed, res.Kind)
				require.Equal(t, location.OwnerToken{OwnerID: "a", LeaseGeneration: lost.generation}, res.Token,
					"the lost claim's lease, with the generation it created")
				require.Equal(t, f.clock.Now().Add(ttl30s), res.LeaseExpiresAt, "renewed")
				require.Equal(t, f.clock.Now(), res.StoreNow)
				require.Zero(t, rec.Counts()[txn.CallGrant], "no new lease")
				require.Zero(t, rec.Counts()[txn.CallRevoke])
				got := f.ownerKV(t, "a")
				require.Len(t, got.Kvs, 1)
				require.Equal(t, lost.lease, clientv3.LeaseID(got.Kvs[0].Lease))
				require.Greater(t, got.Kvs[0].ModRevision, lost.generation, "the renewal rewrote the key")
				renewed, err := m.Renew(t.Context(), res.Token, ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindRenewed, renewed.Kind, "the token is live")
			}
			again, held, err := m.Settle(t.Context(), "a", ttl30s)
			require.NoError(t, err)
			require.False(t, held, "settled: nothing pending")
			require.Zero(t, again)
			claim, err := m.Claim(t.Context(), "a", ttl30s)
			require.NoError(t, err)
			require.Equal(t, location.KindConflict, claim.Kind, "a later claim conflicts as usual")
		})
	}
}
