package etcdstore

import (
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

// loseResponses makes kv lose the responses of the next write transactions:
// the first applied ones after they were applied, then the lost ones before
// they were sent.
func loseResponses(kv *hookedKV, applied, lost int) {
	var mu sync.Mutex
	kv.commit = func(then []clientv3.Op, send func() (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error) {
		mu.Lock()
		apply, lose := writes(then) && applied > 0, writes(then) && applied == 0 && lost > 0
		if apply {
			applied--
		} else if lose {
			lost--
		}
		mu.Unlock()
		if !apply && !lose {
			return send()
		}
		if apply {
			if _, err := send(); err != nil {
				return nil, err
			}
		}
		return nil, status.Error(codes.Unavailable, "etcdserver: request timed out, possibly due to connection lost")
	}
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
			f, lossy := newHookedFixture(t)
			a := f.claim(t, "a")
			loseResponses(lossy, tc.applied, tc.lost)
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
