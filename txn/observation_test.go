package txn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A derived value is shared by the copies of one observation (the cache's
// and every view's), and not by another read of the same key.
func TestDerivedValues(t *testing.T) {
	f := newFixture(t, Options{})
	k := f.key("k")
	f.put(t, k, "v")
	obs, err := f.e.ReadKeys(t.Context(), []string{k}, 0)
	require.NoError(t, err)
	o := obs.Keys[k]
	_, ok := o.Derived()
	require.False(t, ok)
	require.True(t, o.SetDerived("decoded"))
	cached, _ := f.e.Cached(k)
	d, ok := cached.Derived()
	require.True(t, ok)
	require.Equal(t, "decoded", d)

	again, err := f.e.ReadKeys(t.Context(), []string{k}, 0)
	require.NoError(t, err)
	_, ok = again.Keys[k].Derived()
	require.False(t, ok, "a new read is a new observation")

	lit := Observation{Key: k, Present: true}
	require.False(t, lit.SetDerived("ignored"))
	_, ok = lit.Derived()
	require.False(t, ok)
}
