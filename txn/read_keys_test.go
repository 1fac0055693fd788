package txn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// More keys than one request holds are read in pinned chunks, in parallel.
func TestReadKeysParallelChunks(t *testing.T) {
	f := newFixture(t, Options{Limits: Limits{MaxTxnOps: 3}})
	var keys []string
	for i := range 20 {
		keys = append(keys, f.key(string(rune('a'+i))))
	}
	rev := f.put(t, keys[7], "x")
	f.rec.Reset()
	obs, err := f.e.ReadKeys(t.Context(), keys, 0)
	require.NoError(t, err)
	require.Equal(t, map[string]int{CallTxn: 7}, f.rec.Counts())
	require.Len(t, obs.Keys, 20)
	require.GreaterOrEqual(t, obs.Revision, rev)
	for _, k := range keys {
		o := obs.Keys[k]
		require.Equal(t, obs.Revision, o.Revision)
		require.Equal(t, k == keys[7], o.Present)
	}
	f.put(t, keys[7], "y")
	again, err := f.e.ReadKeys(t.Context(), keys, obs.Revision)
	require.NoError(t, err)
	require.Equal(t, "x", string(again.Keys[keys[7]].Value), "pinned to the revision asked for")
}
