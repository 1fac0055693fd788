package memstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestActors(t *testing.T) {
	t0 := lsT0()
	newClaim, renew, takeover := location.IntentNewClaim, location.IntentRenew, location.IntentTakeover
	t.Run("LS-140 create", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateActor(f.actor("a"), newClaim))
		want := f.actor("a")
		want.UpdatedAt = t0
		require.Equal(t, &want, f.resolveActor(lsActorKey()))
		require.Equal(t, int64(1), f.stamp(location.LocationActor, "play"))
		require.Equal(t, int64(1), f.stamp(location.LocationActor, ""))
	})
	t.Run("LS-141 claim rules", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		require.Equal(t, lsStored(1, t0), f.updateActor(f.actor("a"), newClaim))
		f.noEffect(func() {
			require.Equal(t, lsConflict(), f.updateActor(f.actor("b"), newClaim))
			require.Equal(t, lsConflict(), f.updateActor(f.actor("a"), newClaim))
			require.Equal(t, lsStale(), f.updateActor(lsActorRow("a", f.gen("a")+1), renew))
		})
		require.Equal(t, lsStored(1, t0), f.updateActor(f.actor("a"), renew))
		require.Equal(t, lsStored(2, t0), f.updateActor(f.actor("b"), takeover))

		g := newLSFix(t)
		g.claim("a")
		g.claim("b")
		g.updateActor(g.actor("a"), newClaim)
		g.expire("a")
		require.Equal(t, lsStored(2, t0), g.updateActor(g.actor("b"), newClaim), "after expiry")
	})
	t.Run("LS-142 remove fencing", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.updateActor(f.actor("a"), newClaim)
		require.Equal(t, lsStored(2, t0), f.updateActor(f.actor("a"), takeover))
		require.NotEqual(t, a.LeaseGeneration, int64(2))
		st, err := f.s.RemoveActor(f.ctx, lsActorKey(), location.OwnerToken{OwnerID: "a", LeaseGeneration: 2})
		require.NoError(t, err)
		require.Equal(t, location.IgnoredStale, st)
		st, err = f.s.RemoveActor(f.ctx, lsActorKey(), a)
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
		require.Nil(t, f.resolveActor(lsActorKey()))
	})
	t.Run("LS-143 mesh is part of actor identity", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		other := f.actor("a")
		other.MeshName = "other"
		require.Equal(t, lsStored(1, t0), f.updateActor(f.actor("a"), newClaim))
		require.Equal(t, lsStored(1, t0), f.updateActor(other, newClaim))
		require.Equal(t, "other", f.resolveActor(location.ActorKey{MeshName: "other", ActorID: "actor-1"}).MeshName)
		_, err := f.s.RemoveActor(f.ctx, lsActorKey(), a)
		require.NoError(t, err)
		require.NotNil(t, f.resolveActor(location.ActorKey{MeshName: "other", ActorID: "actor-1"}))
	})
	t.Run("LS-144 filters (no mesh field)", func(t *testing.T) {
		f := newLSFix(t)
		mk := func(mesh, id, typ string, node location.RoutingID, spot string, kind location.SpotKind) location.ActorLocation {
			a := lsActorRow("a", 1)
			a.MeshName, a.ActorID, a.ActorType, a.OwnerNodeRID, a.SpotID, a.SpotKind = mesh, id, typ, node, spot, kind
			return a
		}
		all := map[string]location.ActorLocation{
			"A1": mk("play", "actor-1", "player", "node-1", "node-1", location.SpotEntry),
			"A2": mk("other", "actor-2", "npc", "node-2", "room-1", location.SpotUser),
			"A3": mk("play", "actor-3", "player", "node-2", "room-1", location.SpotUser),
		}
		for _, a := range all {
			f.updateActor(a, newClaim)
		}
		for _, c := range []struct {
			filter location.ActorFilter
			want   []string
		}{
			{location.ActorFilter{}, []string{"A1", "A3", "A2"}},
			{location.ActorFilter{ActorType: lsPtr("player")}, []string{"A1", "A3"}},
			{location.ActorFilter{NodeRID: lsPtr(location.RoutingID("node-2"))}, []string{"A3", "A2"}},
			{location.ActorFilter{SpotID: lsPtr("room-1")}, []string{"A3", "A2"}},
			{location.ActorFilter{LocationKind: lsPtr(location.SpotEntry)}, []string{"A1"}},
		} {
			want := []location.ActorLocation{}
			for _, name := range c.want {
				a := all[name]
				a.UpdatedAt = t0
				want = append(want, a)
			}
			p, err := f.s.ListActors(f.ctx, c.filter, location.PageRequest{})
			require.NoError(t, err)
			require.Equal(t, location.Page[location.ActorLocation]{Items: want}, p)
		}
	})
	t.Run("LS-145 no writer lease needed", func(t *testing.T) {
		f := newLSFix(t)
		require.Equal(t, lsStored(1, t0), f.updateActor(lsActorRow("ghost", 1), newClaim))
	})
}
