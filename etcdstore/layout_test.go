package etcdstore

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Values are JSON envelopes an operator can read with etcdctl; only the
// owner key is lease-attached (E-1).
func TestValuesAreReadableEnvelopes(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a := f.claim(t, "a")
	g := storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))

	resp, err := f.s.client.Get(ctx, f.s.layout.TableKey("spots", rules.SpotKey(location.SpotKey{MeshName: "play", SpotID: "s1"})))
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	kv := resp.Kvs[0]
	require.Zero(t, kv.Lease, "rows are durable")
	var env struct {
		Format      string          `json:"format"`
		Generation  int64           `json:"generation"`
		WrittenAtMs int64           `json:"writtenAtMs"`
		Nonce       string          `json:"nonce"`
		Value       json.RawMessage `json:"value"`
	}
	require.NoError(t, json.Unmarshal(kv.Value, &env))
	require.Equal(t, "zlink.spots/v1", env.Format)
	require.Equal(t, g, env.Generation)
	require.Equal(t, t0().UnixMilli(), env.WrittenAtMs)
	require.Len(t, env.Nonce, txn.NonceLength)
	var row location.SpotLocation
	require.NoError(t, json.Unmarshal(env.Value, &row))
	want := spot("s1", a)
	want.UpdatedAt = t0()
	require.Equal(t, want, row)

	owner, err := f.s.client.Get(ctx, f.s.layout.OwnerKey("a"))
	require.NoError(t, err)
	require.NotZero(t, owner.Kvs[0].Lease, "the owner key is on its etcd lease")
	require.Equal(t, a.LeaseGeneration, owner.Kvs[0].CreateRevision)

	require.Equal(t, []string{
		"by-owner/1:a5:spots4:play2:s1",
		"owner/1:a",
		"spots/4:play2:s1",
		"stamp/1:20:",
		"stamp/1:24:play",
	}, f.keysUnder(t, ""))
}

// The owner index follows rows through create, takeover and delete (Q12).
func TestOwnerIndex(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a, b := f.claim(t, "a"), f.claim(t, "b")
	key := location.SpotKey{MeshName: "play", SpotID: "s1"}

	storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
	require.Equal(t, []string{"by-owner/1:a5:spots4:play2:s1"}, f.keysUnder(t, "by-owner/"))

	storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentRenew))
	require.Equal(t, []string{"by-owner/1:a5:spots4:play2:s1"}, f.keysUnder(t, "by-owner/"), "a renewal keeps the entry")

	storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", b), location.IntentTakeover))
	require.Equal(t, []string{"by-owner/1:b5:spots4:play2:s1"}, f.keysUnder(t, "by-owner/"), "a takeover moves it")

	status, err := f.s.RemoveSpot(ctx, key, b)
	require.NoError(t, err)
	require.Equal(t, location.Stored, status)
	require.Empty(t, f.keysUnder(t, "by-owner/"), "a delete removes it")
}

func TestNewRejectsBadOptions(t *testing.T) {
	_, err := New(nil, Options{})
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	f := newFixture(t)
	_, err = New(f.s.client, Options{Root: "/no/slash"})
	require.Error(t, err)
}
