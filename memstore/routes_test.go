package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestRoutes(t *testing.T) {
	t0 := lsT0()
	newClaim, renew, takeover := location.IntentNewClaim, location.IntentRenew, location.IntentTakeover
	removeRoute := func(f *lsFix, k location.RouteKey, owner string, g int64) location.WriteResult {
		f.t.Helper()
		res, err := f.s.RemoveRoute(f.ctx, k, location.OwnerToken{OwnerID: owner, LeaseGeneration: g})
		require.NoError(f.t, err)
		return res
	}
	t.Run("LS-150 create", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateRoute(lsRoute("a", 0), newClaim))
		want := lsRoute("a", 1)
		want.UpdatedAt = t0
		require.Equal(t, &want, f.resolveRoute(lsRouteKey()))
		require.Equal(t, int64(1), f.stamp(location.LocationRoute, ""))
		require.Equal(t, int64(0), f.stamp(location.LocationRoute, "play"))
		require.Equal(t, int64(0), f.stamp(location.LocationPeer, ""))
	})
	t.Run("LS-151 session-route claim pattern", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateRoute(lsRoute("a", 0), newClaim)
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updateRoute(lsRoute("b", 0), newClaim)) })
		require.Equal(t, lsStored(2, t0), f.updateRoute(lsRoute("b", 0), takeover))
		require.Equal(t, "b", f.resolveRoute(lsRouteKey()).OwnerID)
	})
	t.Run("LS-152 renew rules", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateRoute(lsRoute("a", 0), newClaim)
		f.clk.Advance(time.Second)
		require.Equal(t, lsStored(1, t0.Add(time.Second)), f.updateRoute(lsRoute("a", 1), renew))
		f.noEffect(func() {
			require.Equal(t, lsStale(), f.updateRoute(lsRoute("a", 5), renew))
			require.Equal(t, lsStale(), f.updateRoute(lsRoute("b", 1), renew))
		})
	})
	t.Run("LS-153 remove", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateRoute(lsRoute("a", 0), newClaim)
		f.noEffect(func() {
			require.Equal(t, lsStale(), removeRoute(f, lsRouteKey(), "a", 2))
			require.Equal(t, lsStale(), removeRoute(f, location.RouteKey{RouteKind: location.RouteActorSession, RouteKey: "route-9"}, "a", 1))
		})
		require.Equal(t, lsStored(1, t0), removeRoute(f, lsRouteKey(), "a", 1))
		require.Equal(t, int64(2), f.stamp(location.LocationRoute, ""))
	})
	t.Run("LS-154 re-claim after remove", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		require.Equal(t, lsStored(1, t0), f.updateRoute(lsRoute("a", 0), newClaim))
		require.Equal(t, lsStored(1, t0), removeRoute(f, lsRouteKey(), "a", 1))
		require.Equal(t, lsStored(2, t0), f.updateRoute(lsRoute("b", 0), newClaim))
	})
	t.Run("LS-155 kind is part of route identity", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		other := lsRoute("a", 0)
		other.RouteKind = location.RouteSpotName
		require.Equal(t, lsStored(1, t0), f.updateRoute(lsRoute("a", 0), newClaim))
		require.Equal(t, lsStored(1, t0), f.updateRoute(other, newClaim))
	})
	t.Run("LS-156 filters", func(t *testing.T) {
		f := newLSFix(t)
		mk := func(kind location.RouteKind, key string, node location.RoutingID, owner string) location.RouteLocation {
			r := lsRoute(owner, 0)
			r.RouteKind, r.RouteKey, r.OwnerNodeRID = kind, key, node
			return r
		}
		all := map[string]location.RouteLocation{
			"R1": mk(location.RouteActorSession, "r1", "node-1", "a"),
			"R2": mk(location.RouteSpotName, "r2", "node-2", "a"),
			"R3": mk(location.RouteActorSession, "r3", "node-2", "b"),
		}
		for _, r := range all {
			f.updateRoute(r, newClaim)
		}
		for _, c := range []struct {
			filter location.RouteFilter
			want   []string
		}{
			{location.RouteFilter{RouteKind: lsPtr(location.RouteActorSession)}, []string{"R1", "R3"}},
			{location.RouteFilter{OwnerNodeRID: lsPtr(location.RoutingID("node-2"))}, []string{"R3", "R2"}},
			{location.RouteFilter{OwnerID: lsPtr("a")}, []string{"R1", "R2"}},
			{location.RouteFilter{}, []string{"R1", "R3", "R2"}},
		} {
			want := []location.RouteLocation{}
			for _, name := range c.want {
				r := all[name]
				r.Generation, r.UpdatedAt = 1, t0
				want = append(want, r)
			}
			p, err := f.s.ListRoutes(f.ctx, c.filter, location.PageRequest{})
			require.NoError(t, err)
			require.Equal(t, location.Page[location.RouteLocation]{Items: want}, p)
		}
	})
	t.Run("LS-157 value bytes are copied", func(t *testing.T) {
		f := newLSFix(t)
		r := lsRoute("a", 0)
		f.updateRoute(r, newClaim)
		r.Value[0] = 9
		got := f.resolveRoute(lsRouteKey())
		got.Value[1] = 9
		require.Equal(t, []byte{1, 2, 3, 4}, f.resolveRoute(lsRouteKey()).Value)
		p, err := f.s.ListRoutes(f.ctx, location.RouteFilter{}, location.PageRequest{})
		require.NoError(t, err)
		p.Items[0].Value[2] = 9
		require.Equal(t, []byte{1, 2, 3, 4}, f.resolveRoute(lsRouteKey()).Value)
	})
	t.Run("LS-158 dead owners' routes resolve", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateRoute(lsRoute("a", 0), newClaim)
		f.expire("a")
		require.NotNil(t, f.resolveRoute(lsRouteKey()))
	})
}
