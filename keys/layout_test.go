package keys

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewLayout(t *testing.T) {
	accepted := []struct{ name, root, wantRoot string }{
		{"default", "", DefaultRoot},
		{"custom", "/prod/zlink/v1/", "/prod/zlink/v1/"},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLayout(tc.root)
			require.NoError(t, err)
			require.Equal(t, tc.wantRoot, l.Root())
		})
	}
	t.Run("no trailing slash", func(t *testing.T) {
		_, err := NewLayout("/zlink/v1")
		requireCodecError(t, err, ProblemShape, CodeLayoutRoot)
	})
}

func TestValidTable(t *testing.T) {
	for _, ok := range []string{"meshNodes", "entryClaims", "ledger", "t1"} {
		require.NoError(t, ValidTable(ok), ok)
	}
	for _, bad := range []string{"", "mesh/nodes", "a-b", "owner", "stamp", "marker", "fence", "é"} {
		requireCodecError(t, ValidTable(bad), ProblemShape, CodeLayoutTable)
	}
}

func TestLayoutKeys(t *testing.T) {
	l, err := NewLayout("")
	require.NoError(t, err)
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"table prefix", l.TablePrefix("spots"), "/zlink/v1/spots/"},
		{"table key", l.TableKey("spots", Segments("play", "spot-1")), "/zlink/v1/spots/4:play6:spot-1"},
		{"owner", l.OwnerKey("owner/a"), "/zlink/v1/owner/7:owner/a"},
		{"owner prefix", l.OwnerPrefix(), "/zlink/v1/owner/"},
		{"stamp per mesh", l.StampKey("2", "play"), "/zlink/v1/stamp/1:24:play"},
		{"stamp global", l.StampKey("2", ""), "/zlink/v1/stamp/1:20:"},
		{"mesh-node stamp", l.MeshNodeStampKey("game"), "/zlink/v1/meshnode-stamp/4:game"},
		{"owner index", l.OwnerIndexKey("a", "spots", "4:play6:spot-1"), "/zlink/v1/by-owner/1:a5:spots4:play6:spot-1"},
		{"owner index prefix", l.OwnerIndexPrefix("a"), "/zlink/v1/by-owner/1:a"},
		{"marker", l.MarkerKey("fanoutPublishers"), "/zlink/v1/marker/fanoutPublishers"},
		{"delete fence of a row", l.DeleteFenceKey(l.TableKey("spots", Segments("play", "spot-1"))), "/zlink/v1/fence/spots/12"},
		{"delete fence of another row", l.DeleteFenceKey(l.TableKey("spots", Segments("play", "spot-2"))), "/zlink/v1/fence/spots/14"},
		{"delete fence of an authority record", l.DeleteFenceKey(l.TableKey("authority", "zla1:a:1:x")), "/zlink/v1/fence/authority/12"},
		{"no delete fence for an owner index entry", l.DeleteFenceKey(l.OwnerIndexKey("a", "spots", "4:play6:spot-1")), ""},
		{"no delete fence for an owner key", l.DeleteFenceKey(l.OwnerKey("a")), ""},
		{"no delete fence for a fence", l.DeleteFenceKey("/zlink/v1/fence/spots/11"), ""},
		{"root end", l.RootEnd(), "/zlink/v10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, tc.got) })
	}
}

func TestLayoutSplit(t *testing.T) {
	l, err := NewLayout("/r/v2/")
	require.NoError(t, err)

	table, key, ok := l.SplitTableKey(l.TableKey("actors", "4:play7:actor-1"))
	require.True(t, ok)
	require.Equal(t, "actors", table)
	require.Equal(t, "4:play7:actor-1", key)
	for _, bad := range []string{"/other/actors/x", "/r/v2/noslash", "/r/v2/by-owner/1:a"} {
		_, _, ok := l.SplitTableKey(bad)
		require.False(t, ok, bad)
	}

	id, ok := l.OwnerIDOfKey(l.OwnerKey("owner:1"))
	require.True(t, ok)
	require.Equal(t, "owner:1", id)
	for _, bad := range []string{l.OwnerKey("a") + "x", "/r/v2/owner/", "/r/v2/owner/2:a"} {
		_, ok := l.OwnerIDOfKey(bad)
		require.False(t, ok, bad)
	}

	owner, table, key, ok := l.SplitOwnerIndexKey(l.OwnerIndexKey("o:1", "authority", "zla1:a:1:x"))
	require.True(t, ok)
	require.Equal(t, []string{"o:1", "authority", "zla1:a:1:x"}, []string{owner, table, key})
	for _, bad := range []string{"/r/v2/by-owner/", "/r/v2/by-owner/1:a", "/r/v2/by-owner/1:a3:a-b", "/r/v2/by-owner/01:a1:t", "/r/v2/by-owner/9:a"} {
		_, _, _, ok := l.SplitOwnerIndexKey(bad)
		require.False(t, ok, bad)
	}
}

// Owner-index prefixes of different owners never contain each other, so a
// prefix range lists exactly one owner's entries.
func TestOwnerIndexPrefixesAreDisjoint(t *testing.T) {
	l, err := NewLayout("")
	require.NoError(t, err)
	owners := []string{"a", "ab", "a1", "1:a", "", "b"}
	for _, x := range owners {
		for _, y := range owners {
			if x == y {
				continue
			}
			k := l.OwnerIndexKey(y, "spots", "k")
			require.NotEqual(t, l.OwnerIndexPrefix(x), k[:min(len(k), len(l.OwnerIndexPrefix(x)))], "%q vs %q", x, y)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/zlink/v1/", "/zlink/v10"},
		{"a\xff", "b"},
		{"\xff\xff", "\x00"},
		{"", "\x00"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, PrefixEnd(tc.in), "%q", tc.in)
	}
	// Every key with the prefix sorts below the end.
	keys := []string{"/zlink/v1/", "/zlink/v1/\xff\xff", "/zlink/v10"}
	require.True(t, sort.StringsAreSorted(keys))
}

// Rows whose keys differ only in their last digits spread over every delete
// fence of their table, about evenly.
func TestDeleteFencesSpreadRows(t *testing.T) {
	l, err := NewLayout("")
	require.NoError(t, err)
	const rows = 1600
	perFence := map[string]int{}
	for i := range rows {
		perFence[l.DeleteFenceKey(l.TableKey("spots", Segments("play", fmt.Sprintf("s%d", i))))]++
	}
	require.Len(t, perFence, FenceBuckets)
	for fence, n := range perFence {
		require.InDelta(t, rows/FenceBuckets, n, rows/FenceBuckets/2, fence)
	}
}
