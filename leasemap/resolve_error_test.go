package leasemap

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// refusedAfterLossKV applies the first write transaction and loses its
// response; from then on every read is refused with refused (not a
// transient error: the resolution cannot ride it out).
type refusedAfterLossKV struct {
	clientv3.KV
	refused error
	mu      sync.Mutex
	lost    bool
}

func (k *refusedAfterLossKV) hasLost() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost
}

func (k *refusedAfterLossKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if k.hasLost() {
		return nil, k.refused
	}
	return k.KV.Get(ctx, key, opts...)
}

func (k *refusedAfterLossKV) Txn(ctx context.Context) clientv3.Txn {
	return &refusedAfterLossTxn{Txn: k.KV.Txn(ctx), k: k}
}

type refusedAfterLossTxn struct {
	clientv3.Txn
	k      *refusedAfterLossKV
	writes bool
}

func (t *refusedAfterLossTxn) If(cs ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(cs...); return t }
func (t *refusedAfterLossTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Else(ops...)
	return t
}
func (t *refusedAfterLossTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	for _, op := range ops {
		t.writes = t.writes || op.IsPut() || op.IsDelete()
	}
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *refusedAfterLossTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.k.hasLost() {
		return nil, t.k.refused
	}
	if !t.writes {
		return t.Txn.Commit()
	}
	if _, err := t.Txn.Commit(); err != nil {
		return nil, err
	}
	t.k.mu.Lock()
	t.k.lost = true
	t.k.mu.Unlock()
	return nil, status.Error(codes.Unavailable, "etcdserver: request timed out")
}

// A write whose response was lost and whose resolution failed answers
// "outcome unknown" naming both causes: the lost response and the error
// that stopped the resolution (not the lost response twice).
func TestResolutionErrorIsReported(t *testing.T) {
	refused := status.Error(codes.PermissionDenied, "etcdserver: permission denied (resolution refused)")
	tests := []struct {
		name string
		call func(t *testing.T, f *fixture, m *Map) error
	}{
		{"claim", func(t *testing.T, _ *fixture, m *Map) error {
			_, err := m.Claim(t.Context(), "a", time.Minute)
			return err
		}},
		{"release", func(t *testing.T, f *fixture, m *Map) error {
			a := f.claim(t, "a")
			_, err := m.Release(t.Context(), a)
			return err
		}},
		{"renew", func(t *testing.T, f *fixture, m *Map) error {
			a := f.claim(t, "a")
			_, err := m.Renew(t.Context(), a, ttl30s)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			kv := &refusedAfterLossKV{KV: f.client.KV, refused: refused}
			m := f.newMap(kv, f.client.Lease, Options{Clock: f.clock.Now})
			err := tc.call(t, f, m)
			require.ErrorIs(t, err, txn.ErrOutcomeUnknown)
			require.NotErrorIs(t, err, location.ErrUnavailable, "the write may have applied")
			require.ErrorIs(t, err, refused, "the resolution's own error is reported: %v", err)
			require.ErrorContains(t, err, "request timed out", "and the lost response")
		})
	}
}
