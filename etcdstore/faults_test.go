package etcdstore

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// An operation that cannot fit one transaction is refused before anything
// is written (E-8).
func TestTooLarge(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t, func(o *Options) { o.MaxRequestBytes = 4096 })
	a := f.claim(t, "a")
	d := meshNode("game", "node-a", a)
	d.ChannelWeights = map[string]int64{}
	for i := range 400 {
		d.ChannelWeights[strings.Repeat("c", 10)+string(rune('a'+i%26))+strings.Repeat("x", i%7)+string(rune(i))] = 1
	}
	_, err := f.s.UpdateMeshNode(ctx, d, location.IntentNewClaim)
	require.ErrorIs(t, err, location.ErrTooLarge)
	require.Empty(t, f.keysUnder(t, "meshNodes/"))
	require.Empty(t, f.keysUnder(t, "stamp/"))
}

// lossyKV loses the response of the next write transaction after it was
// applied (or before it was sent).
type lossyKV struct {
	clientv3.KV
	mu      sync.Mutex
	applied int
	lost    int
}

func (l *lossyKV) Txn(ctx context.Context) clientv3.Txn { return &lossyTxn{Txn: l.KV.Txn(ctx), l: l} }

type lossyTxn struct {
	clientv3.Txn
	l      *lossyKV
	writes bool
}

func (t *lossyTxn) If(cs ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(cs...); return t }
func (t *lossyTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Else(ops...)
	return t
}
func (t *lossyTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	for _, op := range ops {
		t.writes = t.writes || op.IsPut() || op.IsDelete()
	}
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *lossyTxn) Commit() (*clientv3.TxnResponse, error) {
	t.l.mu.Lock()
	applied, lost := t.writes && t.l.applied > 0, t.writes && t.l.applied == 0 && t.l.lost > 0
	if applied {
		t.l.applied--
	} else if lost {
		t.l.lost--
	}
	t.l.mu.Unlock()
	if applied {
		if _, err := t.Txn.Commit(); err != nil {
			return nil, err
		}
	}
	if applied || lost {
		return nil, status.Error(codes.Unavailable, "etcdserver: request timed out, possibly due to connection lost")
	}
	return t.Txn.Commit()
}

// A write whose response is lost is resolved by re-reading for its nonce
// (E-9): applied → the original answer, exactly once; not applied → decided
// again.
func TestLostResponses(t *testing.T) {
	for _, tc := range []struct {
		name          string
		applied, lost int
	}{{"applied", 1, 0}, {"not applied", 0, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			lossy := &lossyKV{}
			f := newFixture(t, func(o *Options) {
				lossy.KV = o.KV
				o.KV = lossy
			})
			a := f.claim(t, "a")
			lossy.mu.Lock()
			lossy.applied, lossy.lost = tc.applied, tc.lost
			lossy.mu.Unlock()
			g := storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
			resp, err := f.s.client.Get(ctx, f.s.layout.TableKey("spots", rules.SpotKey(location.SpotKey{MeshName: "play", SpotID: "s1"})))
			require.NoError(t, err)
			require.Equal(t, int64(1), resp.Kvs[0].Version, "written once")
			got, err := f.s.ResolveSpot(ctx, location.SpotKey{MeshName: "play", SpotID: "s1"})
			require.NoError(t, err)
			require.Equal(t, "a", got.OwnerID)
			stamp, err := f.s.GetChangeStamp(ctx, location.ChangeStampScope{Kind: location.LocationSpot.Scope()})
			require.NoError(t, err)
			require.Equal(t, int64(1), stamp)
			require.Positive(t, g)
		})
	}
}
