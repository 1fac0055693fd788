package memstore

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestSpots(t *testing.T) {
	t0 := lsT0()
	newClaim, renew, takeover := location.IntentNewClaim, location.IntentRenew, location.IntentTakeover
	spotAt := func(s location.SpotLocation, ts time.Time) *location.SpotLocation {
		s.UpdatedAt = ts
		return &s
	}
	removeSpot := func(f *lsFix, k location.SpotKey, owner string, lg int64) location.WriteStatus {
		f.t.Helper()
		st, err := f.s.RemoveSpot(f.ctx, k, location.OwnerToken{OwnerID: owner, LeaseGeneration: lg})
		require.NoError(f.t, err)
		return st
	}
	t.Run("LS-120 create", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateSpot(f.spot("a"), newClaim))
		require.Equal(t, spotAt(f.spot("a"), t0), f.resolveSpot(lsSpotKey()))
		require.Equal(t, int64(1), f.stamp(location.LocationSpot, "play"))
		require.Equal(t, int64(1), f.stamp(location.LocationSpot, ""))
	})
	t.Run("LS-121 spot id validation", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		for _, id := range []string{"", strings.Repeat("s", 256)} {
			s := f.spot("a")
			s.SpotID = id
			k := location.SpotKey{MeshName: "play", SpotID: id}
			f.noEffect(func() {
				_, err := f.s.UpdateSpot(f.ctx, s, newClaim)
				requireInputError(t, err, location.ClassType)
				_, err = f.s.RemoveSpot(f.ctx, k, f.tok["a"])
				requireInputError(t, err, location.ClassType)
				_, err = f.s.ResolveSpot(f.ctx, k)
				requireInputError(t, err, location.ClassType)
			})
		}
		s := f.spot("a")
		s.SpotID = strings.Repeat("s", 255)
		require.Equal(t, lsStored(1, t0), f.updateSpot(s, newClaim))
	})
	t.Run("LS-122 live other owner", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateSpot(f.spot("a"), newClaim)
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updateSpot(f.spot("b"), newClaim)) })
	})
	t.Run("LS-123 A-13 own live row", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updateSpot(f.spot("a"), newClaim)) })
	})
	t.Run("LS-124 dead owner, writer without lease", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.expire("a")
		require.Equal(t, lsStored(2, t0), f.updateSpot(lsSpotRow("ghost", 5), newClaim))
	})
	t.Run("LS-125 A-12 restarted owner", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.expire("a")
		f.claim("a")
		require.Equal(t, lsConflict(), f.updateSpot(f.spot("a"), newClaim))
		require.Equal(t, lsStored(2, t0), f.updateSpot(f.spot("a"), takeover))
	})
	t.Run("LS-126 renew replaces the row", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.clk.Advance(5 * time.Second)
		s := f.spot("a")
		s.SpotGeneration, s.OwnerNodeRID = 2, "node-2"
		require.Equal(t, lsStored(1, t0.Add(5*time.Second)), f.updateSpot(s, renew))
		require.Equal(t, spotAt(s, t0.Add(5*time.Second)), f.resolveSpot(lsSpotKey()))
		require.Equal(t, int64(2), f.stamp(location.LocationSpot, "play"))
	})
	t.Run("LS-127 renew rejections", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateSpot(f.spot("a"), newClaim)
		absent := f.spot("a")
		absent.SpotID = "spot-9"
		f.noEffect(func() {
			require.Equal(t, lsStale(), f.updateSpot(lsSpotRow("a", f.gen("a")+1), renew))
			require.Equal(t, lsStale(), f.updateSpot(f.spot("b"), renew))
			require.Equal(t, lsStale(), f.updateSpot(absent, renew))
		})
	})
	t.Run("LS-128 A-30 renew by an expired owner", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.expire("a")
		s := f.spot("a")
		s.SpotGeneration = 2
		require.Equal(t, lsStored(1, t0), f.updateSpot(s, renew))
	})
	t.Run("LS-129 takeover while the owner is live", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateSpot(f.spot("a"), newClaim)
		require.Equal(t, lsStored(2, t0), f.updateSpot(f.spot("b"), takeover))
		require.Equal(t, "b", f.resolveSpot(lsSpotKey()).OwnerID)
	})
	t.Run("LS-130 remove is fenced by the row's leaseGeneration", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		require.Equal(t, lsStored(1, t0), f.updateSpot(f.spot("a"), newClaim))
		require.Equal(t, lsStored(2, t0), f.updateSpot(f.spot("a"), takeover))
		f.noEffect(func() {
			require.Equal(t, location.IgnoredStale, removeSpot(f, lsSpotKey(), "a", 2))
			require.Equal(t, location.IgnoredStale, removeSpot(f, lsSpotKey(), "b", f.gen("a")))
			require.Equal(t, location.IgnoredStale, removeSpot(f, location.SpotKey{MeshName: "play", SpotID: "spot-9"}, "a", f.gen("a")))
		})
		before := f.stamp(location.LocationSpot, "play")
		require.Equal(t, location.Stored, removeSpot(f, lsSpotKey(), "a", f.gen("a")))
		require.Nil(t, f.resolveSpot(lsSpotKey()))
		require.Equal(t, before+1, f.stamp(location.LocationSpot, "play"))
	})
	t.Run("LS-131 re-create continues", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		removeSpot(f, lsSpotKey(), "a", f.gen("a"))
		require.Equal(t, lsStored(2, t0), f.updateSpot(f.spot("a"), newClaim))
	})
	t.Run("LS-132 resolve", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.expire("a")
		require.Equal(t, spotAt(f.spot("a"), t0), f.resolveSpot(lsSpotKey()))
		require.Nil(t, f.resolveSpot(location.SpotKey{MeshName: "play", SpotID: "spot-9"}))
		require.Nil(t, f.resolveSpot(location.SpotKey{MeshName: "other", SpotID: "spot-1"}))
	})
	t.Run("LS-133 filters", func(t *testing.T) {
		f := newLSFix(t)
		mk := func(mesh, id, typ string, node location.RoutingID, kind location.SpotKind) location.SpotLocation {
			s := lsSpotRow("a", 1)
			s.MeshName, s.SpotID, s.SpotType, s.OwnerNodeRID, s.SpotKind = mesh, id, typ, node, kind
			return s
		}
		all := map[string]location.SpotLocation{
			"S1": mk("play", "spot-1", "game", "node-1", location.SpotUser),
			"S2": mk("play", "spot-2", "lobby", "node-2", location.SpotInstance),
			"S3": mk("other", "spot-3", "game", "node-1", location.SpotEntry),
		}
		for _, s := range all {
			f.updateSpot(s, newClaim)
		}
		for _, c := range []struct {
			filter location.SpotFilter
			want   []string
		}{
			{location.SpotFilter{}, []string{"S1", "S2", "S3"}},
			{location.SpotFilter{MeshName: lsPtr("play")}, []string{"S1", "S2"}},
			{location.SpotFilter{SpotType: lsPtr("game")}, []string{"S1", "S3"}},
			{location.SpotFilter{NodeRID: lsPtr(location.RoutingID("node-1"))}, []string{"S1", "S3"}},
			{location.SpotFilter{SpotKind: lsPtr(location.SpotInstance)}, []string{"S2"}},
			{location.SpotFilter{MeshName: lsPtr("other"), SpotType: lsPtr("lobby")}, nil},
		} {
			want := []location.SpotLocation{}
			for _, name := range c.want {
				want = append(want, *spotAt(all[name], t0))
			}
			p, err := f.s.ListSpots(f.ctx, c.filter, location.PageRequest{})
			require.NoError(t, err)
			require.Equal(t, location.Page[location.SpotLocation]{Items: want}, p, "in canonical key order: the 4-byte mesh play before the 5-byte mesh other")
		}
	})
	t.Run("LS-203 resolved rows are copies", func(t *testing.T) {
		f := newLSFix(t)
		f.updateSpot(lsSpotRow("a", 1), newClaim)
		got := f.resolveSpot(lsSpotKey())
		got.SpotType = "x"
		require.Equal(t, "game", f.resolveSpot(lsSpotKey()).SpotType)
	})
}
