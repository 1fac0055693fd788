package conformance_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
)

func TestRenamerBindNumber(t *testing.T) {
	never := conformance.NeverIssued
	tests := []struct {
		name    string
		exact   bool
		ordered bool
		pairs   [][2]int64
		// wantRule is the rule the last pair breaks ("" = none).
		wantRule string
	}{
		{name: "consistent renaming", ordered: true, pairs: [][2]int64{{1, 10}, {2, 20}, {1, 10}, {3, 35}}},
		{name: "model number renamed twice", pairs: [][2]int64{{1, 10}, {1, 11}}, wantRule: conformance.RenameRuleBijection},
		{name: "store number stands for two", pairs: [][2]int64{{1, 10}, {2, 10}}, wantRule: conformance.RenameRuleBijection},
		{name: "order kept when inserted between", ordered: true, pairs: [][2]int64{{1, 10}, {5, 50}, {3, 30}}},
		{name: "order kept when bound out of order", ordered: true, pairs: [][2]int64{{3, 90}, {1, 40}, {2, 57}}},
		{name: "order broken below", ordered: true, pairs: [][2]int64{{2, 20}, {3, 15}}, wantRule: conformance.RenameRuleOrder},
		{name: "order broken above", ordered: true, pairs: [][2]int64{{5, 50}, {3, 60}}, wantRule: conformance.RenameRuleOrder},
		{name: "unordered namespace ignores order", pairs: [][2]int64{{5, 50}, {3, 60}}},
		{name: "special numbers exact", pairs: [][2]int64{{0, 0}, {-1, -1}}},
		{name: "zero compared exactly", pairs: [][2]int64{{0, 7}}, wantRule: conformance.RenameRuleNumber},
		{name: "never-issued values compared exactly", pairs: [][2]int64{{never + 1, never + 1}, {never + 2, 9}}, wantRule: conformance.RenameRuleNumber},
		{name: "exact renamer", exact: true, pairs: [][2]int64{{1, 1}, {2, 3}}, wantRule: conformance.RenameRuleNumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := conformance.NewRenamer(tt.exact)
			for i, p := range tt.pairs {
				err := r.BindNumber(conformance.NSLease, tt.ordered, p[0], p[1])
				if i < len(tt.pairs)-1 || tt.wantRule == "" {
					require.NoError(t, err, "pair %d", i)
					continue
				}
				var m *conformance.RenameMismatch
				require.ErrorAs(t, err, &m)
				require.Equal(t, tt.wantRule, m.Rule, m.Detail)
				require.Equal(t, conformance.NSLease, m.Namespace)
			}
		})
	}
}

func TestRenamerTranslates(t *testing.T) {
	r := conformance.NewRenamer(false)
	require.NoError(t, r.BindNumber(conformance.NSLease, true, 3, 1003))
	require.Equal(t, int64(1003), r.ToStoreNumber(conformance.NSLease, 3))
	require.Equal(t, int64(3), r.ToModelNumber(conformance.NSLease, 1003))
	require.Equal(t, int64(0), r.ToStoreNumber(conformance.NSLease, 0))
	require.Equal(t, conformance.NeverIssued+1, r.ToStoreNumber(conformance.NSLease, conformance.NeverIssued+1))
	require.True(t, conformance.SpecialNumber(r.ToModelNumber(conformance.NSLease, 77)), "an unbound store number maps to one the model never issued")
	require.Equal(t, "owner-lease generations 3→1003", r.String())

	require.NoError(t, r.BindText(conformance.NSReservation, "model-id", "store-id"))
	require.Equal(t, "store-id", r.ToStoreText(conformance.NSReservation, "model-id"))
	require.Equal(t, "model-id", r.ToModelText(conformance.NSReservation, "store-id"))
	require.Equal(t, "unknown", r.ToStoreText(conformance.NSReservation, "unknown"))
	require.Equal(t, "unbound:other", r.ToModelText(conformance.NSReservation, "other"))
	var m *conformance.RenameMismatch
	require.ErrorAs(t, r.BindText(conformance.NSReservation, "other", "store-id"), &m)
	require.Equal(t, conformance.RenameRuleBijection, m.Rule)

	exact := conformance.NewRenamer(true)
	require.ErrorAs(t, exact.BindText(conformance.NSVersion("k"), "4", "5"), &m)
	require.Equal(t, conformance.RenameRuleNumber, m.Rule, "versions are exact on an exact renamer")
	require.NoError(t, exact.BindText(conformance.NSReservation, "a", "b"), "reservation ids are renamed even by an exact renamer")
	require.Equal(t, "b", exact.ToStoreText(conformance.NSReservation, "a"))
}

// A clone and its original change independently; concurrent clones of one
// renamer are safe.
func TestRenamerClone(t *testing.T) {
	r := conformance.NewRenamer(false)
	require.NoError(t, r.BindText(conformance.NSReservation, "m1", "s1"))
	require.NoError(t, r.BindNumber(conformance.NSLease, true, 1, 10))
	key := r.Key()

	c := r.Clone()
	require.Equal(t, key, c.Key())
	require.NoError(t, c.BindText(conformance.NSReservation, "m2", "s2"))
	require.NoError(t, c.BindNumber(conformance.NSLease, true, 2, 20))
	require.Equal(t, "m2", c.ToModelText(conformance.NSReservation, "s2"))
	require.Equal(t, "unbound:s2", r.ToModelText(conformance.NSReservation, "s2"))
	require.Equal(t, key, r.Key(), "the original does not see the clone's bindings")

	require.NoError(t, r.BindNumber(conformance.NSLease, true, 5, 50))
	require.True(t, conformance.SpecialNumber(c.ToModelNumber(conformance.NSLease, 50)), "the clone does not see the original's later bindings")
	require.True(t, conformance.SpecialNumber(r.ToModelNumber(conformance.NSLease, 20)))

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			cc := c.Clone()
			assert.NoError(t, cc.BindNumber(conformance.NSLease, true, int64(100+i), int64(1000+i)))
			assert.Equal(t, int64(100+i), cc.ToModelNumber(conformance.NSLease, int64(1000+i)))
		})
	}
	wg.Wait()
	require.True(t, conformance.SpecialNumber(c.ToModelNumber(conformance.NSLease, 1000)))
}
