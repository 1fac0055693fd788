package memstore

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// TestParseOffset checks the reference's parseInt rules for tokens (02 §1.5).
func TestParseOffset(t *testing.T) {
	for _, c := range []struct {
		token string
		want  int
	}{
		{"", 0}, {"0", 0}, {"2", 2}, {"2x", 2}, {" 3", 3}, {"\t\n\u00a0\ufeff\u20284", 4}, {"+1", 1},
		{"-1", 0}, {"-0", 0}, {"abc", 0}, {"1e3", 1}, {"0x10", 0}, {"007", 7}, {"+", 0}, {"- 1", 0},
		{"1 2", 1}, {"\u00855", 0}, {"99999999999999999999999", math.MaxInt}, {"١", 0},
	} {
		t.Run(fmt.Sprintf("%q", c.token), func(t *testing.T) {
			require.Equal(t, c.want, parseOffset(c.token))
		})
	}
}

func TestPaging(t *testing.T) {
	newClaim := location.IntentNewClaim
	spots := func(f *lsFix, mesh string, ids ...string) {
		for _, id := range ids {
			s := lsSpotRow("a", 1)
			s.MeshName, s.SpotID = mesh, id
			f.updateSpot(s, newClaim)
		}
	}
	list := func(f *lsFix, filter location.SpotFilter, p location.PageRequest) ([]string, string) {
		f.t.Helper()
		page, err := f.s.ListSpots(f.ctx, filter, p)
		require.NoError(f.t, err)
		var ids []string
		for _, s := range page.Items {
			ids = append(ids, s.MeshName+"/"+s.SpotID)
		}
		return ids, page.ContinuationToken
	}
	play := location.SpotFilter{MeshName: lsPtr("play")}
	t.Run("LS-134 paging", func(t *testing.T) {
		f := newLSFix(t)
		spots(f, "play", "spot-2", "spot-1")
		ids, tok := list(f, play, location.PageRequest{PageSize: 1})
		require.Equal(t, []string{"play/spot-1"}, ids)
		require.Equal(t, "1", tok)
		ids, tok = list(f, play, location.PageRequest{PageSize: 1, ContinuationToken: tok})
		require.Equal(t, []string{"play/spot-2"}, ids)
		require.Empty(t, tok)
	})
	t.Run("LS-135 token and size edge cases", func(t *testing.T) {
		f := newLSFix(t)
		spots(f, "play", "spot-1", "spot-2")
		both := []string{"play/spot-1", "play/spot-2"}
		ids, tok := list(f, play, location.PageRequest{PageSize: 1, ContinuationToken: "abc"})
		require.Equal(t, []string{"play/spot-1"}, ids)
		require.Equal(t, "1", tok)
		for _, size := range []int{0, -1} {
			ids, tok = list(f, play, location.PageRequest{PageSize: size})
			require.Equal(t, both, ids)
			require.Empty(t, tok)
		}
		ids, tok = list(f, play, location.PageRequest{})
		require.Equal(t, both, ids)
		require.Empty(t, tok)
		page, err := f.s.ListSpots(f.ctx, play, location.PageRequest{ContinuationToken: "99"})
		require.NoError(t, err)
		require.Equal(t, location.Page[location.SpotLocation]{Items: []location.SpotLocation{}}, page)
		ids, tok = list(f, play, location.PageRequest{PageSize: 5, ContinuationToken: "2x"})
		require.Nil(t, ids)
		require.Empty(t, tok)
		ids, tok = list(f, play, location.PageRequest{PageSize: 1, ContinuationToken: "-1"})
		require.Equal(t, []string{"play/spot-1"}, ids)
		require.Equal(t, "1", tok)
		ids, _ = list(f, play, location.PageRequest{ContinuationToken: "1"})
		require.Equal(t, []string{"play/spot-2"}, ids)
	})
	t.Run("LS-201 order", func(t *testing.T) {
		f := newLSFix(t)
		spots(f, "m2", "spot-b", "spot-c", "spot-a")
		spots(f, "m1", "spot-z")
		ids, _ := list(f, location.SpotFilter{MeshName: lsPtr("m2")}, location.PageRequest{})
		require.Equal(t, []string{"m2/spot-a", "m2/spot-b", "m2/spot-c"}, ids)
		ids, _ = list(f, location.SpotFilter{}, location.PageRequest{})
		require.Equal(t, []string{"m1/spot-z", "m2/spot-a", "m2/spot-b", "m2/spot-c"}, ids)
	})
	t.Run("LS-202 full traversal", func(t *testing.T) {
		f := newLSFix(t)
		spots(f, "play", "spot-1", "spot-2", "spot-3", "spot-4", "spot-5")
		var all []string
		var sizes []int
		var tokens []string
		tok := ""
		for {
			ids, next := list(f, play, location.PageRequest{PageSize: 2, ContinuationToken: tok})
			all = append(all, ids...)
			sizes = append(sizes, len(ids))
			tokens = append(tokens, next)
			if next == "" {
				break
			}
			tok = next
		}
		require.Equal(t, []int{2, 2, 1}, sizes)
		require.Equal(t, []string{"2", "4", ""}, tokens)
		unpaged, _ := list(f, play, location.PageRequest{})
		require.Equal(t, unpaged, all)
	})
}
