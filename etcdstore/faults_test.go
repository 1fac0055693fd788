package etcdstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
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
			lossy := &kvfake.LostAnswers{}
			f := newFixture(t, func(o *Options) { lossy.KV = o.KV; o.KV = lossy })
			a := f.claim(t, "a")
			lossy.LoseNext(tc.applied, tc.lost, nil)
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
