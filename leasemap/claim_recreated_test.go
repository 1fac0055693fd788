package leasemap

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// afterLossKV applies the first write transaction (or, with unsent, loses
// it on its way), runs after, and then loses the response: the owner's key
// changes hands before the caller can look. With refused set, every read
// from then on fails with it (a resolution that cannot ride it out).
type afterLossKV struct {
	clientv3.KV
	unsent  bool
	refused error
	mu      sync.Mutex
	after   func()
	lost    bool
}

// refusing returns the error reads fail with now (nil: none).
func (k *afterLossKV) refusing() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lost {
		return k.refused
	}
	return nil
}

func (k *afterLossKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if err := k.refusing(); err != nil {
		return nil, err
	}
	return k.KV.Get(ctx, key, opts...)
}

func (k *afterLossKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		if err := k.refusing(); err != nil {
			return nil, err
		}
		k.mu.Lock()
		lose := !ops.OnlyReads() && !k.lost
		k.lost = k.lost || lose
		after := k.after
		k.mu.Unlock()
		if !lose {
			return ops.Send(ctx, k.KV)
		}
		return loseAnswer(ctx, ops, k.KV, k.unsent, after)
	})
}

// A claim whose response was lost applied, but before it could look, its
// lease was released and another claim took the owner id: the key it finds
// holds someone else's value. That is no proof of a conflict (the claim did
// take effect): the key's history since the claim's lease was granted
// shows its put, and the claim answers with the generation it created
// (released since); when that history is gone, the outcome is unknown.
// Never "conflict".
func TestClaimLostThenClaimedAgain(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "found in the history", true: "history compacted"}[compact], func(t *testing.T) {
			f := newFixture(t)
			kv := &afterLossKV{KV: f.client.KV}
			m := f.newMap(kv, f.client.Lease, Options{Clock: f.clock.Now})
			other := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})
			var lostGeneration int64
			kv.after = func() {
				got := f.ownerKV(t, "a")
				require.Len(t, got.Kvs, 1, "the lost claim applied")
				lostGeneration = got.Kvs[0].CreateRevision
				kind, err := other.Release(context.Background(), location.OwnerToken{OwnerID: "a", LeaseGeneration: lostGeneration})
				require.NoError(t, err)
				require.Equal(t, location.KindReleased, kind)
				res, err := other.Claim(context.Background(), "a", time.Minute)
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind)
				if compact {
					_, err := f.client.Compact(context.Background(), res.Token.LeaseGeneration)
					require.NoError(t, err)
				}
			}
			res, err := m.Claim(t.Context(), "a", time.Minute)
			if compact {
				require.ErrorIs(t, err, txn.ErrOutcomeUnknown, "got %+v", res)
				require.NotErrorIs(t, err, location.ErrUnavailable)
			} else {
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind)
				require.Equal(t, lostGeneration, res.Token.LeaseGeneration)
			}
			require.Len(t, f.ownerKV(t, "a").Kvs, 1, "the other claim's key is untouched")
		})
	}
}
