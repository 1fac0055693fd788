package memstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestChangeStamps(t *testing.T) {
	newClaim, renew := location.IntentNewClaim, location.IntentRenew
	kinds := []location.LocationKind{location.LocationPeer, location.LocationSpot, location.LocationActor, location.LocationRoute, location.LocationClientServer}
	t.Run("LS-190 fresh store", func(t *testing.T) {
		f := newLSFix(t)
		for _, k := range kinds {
			require.Zero(t, f.stamp(k, ""))
			require.Zero(t, f.stamp(k, "play"))
		}
		for _, k := range []location.ScopeKind{location.ScopeMeshNode, location.ScopeFanoutPublisher} {
			v, err := f.s.GetChangeStamp(f.ctx, location.ChangeStampScope{Kind: k})
			require.NoError(t, err)
			require.Zero(t, v)
		}
	})
	t.Run("LS-191 per-mesh and global counters", func(t *testing.T) {
		f := newLSFix(t)
		p2 := lsPeer("a", 0)
		p2.NodeRID = lsPtr(location.RoutingID("node-2"))
		p3 := lsPeer("a", 0)
		p3.MeshName = "other"
		for _, p := range []location.PeerLocation{lsPeer("a", 0), p2, p3} {
			f.updatePeer(p, newClaim)
		}
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "play"))
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, "other"))
		require.Equal(t, int64(3), f.stamp(location.LocationPeer, ""))
	})
	t.Run("LS-192 A-05 mesh nodes use the Peer scope", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, "game"))
		v, err := f.s.GetChangeStamp(f.ctx, location.ChangeStampScope{Kind: location.ScopeMeshNode, MeshName: lsPtr("game")})
		require.NoError(t, err)
		require.Zero(t, v)
	})
	t.Run("LS-193 no bump without a change", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.claim("b")
		f.updateMN(f.mn("a"), newClaim)
		f.updateSpot(f.spot("a"), newClaim)
		f.updatePeer(lsPeer("a", 0), newClaim)
		before := f.state().stamps
		mesh := f.state().meshStamps
		f.updateMN(f.mn("a"), renew)           // replay
		f.updateSpot(f.spot("b"), newClaim)    // RejectedConflict
		f.updateSpot(lsSpotRow("a", 9), renew) // IgnoredStale
		f.updatePeer(lsPeer("b", 0), newClaim) // RejectedConflict
		bad := f.mn("a")
		bad.MeshName = ""
		_, err := f.s.UpdateMeshNode(f.ctx, bad, newClaim) // validation error
		require.Error(t, err)
		_, err = f.s.RemoveSpot(f.ctx, lsSpotKey(), location.OwnerToken{OwnerID: "b", LeaseGeneration: 2})
		require.NoError(t, err)
		f.meshNodes("game")
		f.peers(location.PeerFilter{})
		f.resolveSpot(lsSpotKey())
		_, err = f.s.RenewOwnerLease(f.ctx, a, 0)
		require.Error(t, err)
		f.readLease("a")
		_, err = f.s.PrepareActorTransfer(f.ctx, lsXfer(lsXferID))
		require.NoError(t, err)
		_, err = f.s.CommitActorTransfer(f.ctx, lsRef(lsXferID), "recovery-a")
		require.NoError(t, err)
		require.Equal(t, before, f.state().stamps)
		require.Equal(t, mesh, f.state().meshStamps)
	})
	t.Run("LS-194 routes are global only", func(t *testing.T) {
		f := newLSFix(t)
		f.updateRoute(lsRoute("a", 0), newClaim)
		require.Equal(t, int64(1), f.stamp(location.LocationRoute, ""))
		require.Zero(t, f.stamp(location.LocationRoute, "play"))
	})
	t.Run("LS-195 A-06 client-server scopes", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateCS(f.cs("a"), newClaim)
		billing := f.cs("a")
		billing.ChannelName = "billing"
		f.updateCS(billing, newClaim)
		require.Equal(t, int64(1), f.stamp(location.LocationClientServer, "orders"))
		require.Equal(t, int64(1), f.stamp(location.LocationClientServer, "billing"))
		require.Equal(t, int64(2), f.stamp(location.LocationClientServer, ""))
		v, err := f.s.GetChangeStamp(f.ctx, location.ChangeStampScope{Kind: location.LocationClientServer.Scope(), ChannelName: lsPtr("orders")})
		require.NoError(t, err)
		require.Equal(t, int64(2), v, "the channel field is ignored")
	})
	t.Run("LS-196 mesh-node change stamp", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		read := func(mesh string) int64 {
			v, ok, err := f.s.GetMeshNodeChangeStamp(f.ctx, mesh)
			require.NoError(t, err)
			require.True(t, ok)
			return v
		}
		var _ location.MeshNodeChangeStamper = f.s
		require.Zero(t, read("game"))
		f.updateMN(f.mn("a"), newClaim)
		require.Equal(t, int64(1), read("game"))
		f.updateMN(f.mn("a"), renew)
		require.Equal(t, int64(1), read("game"), "a replay does not move it")
		d := f.mn("a")
		d.DescriptorRevision = 4
		f.updateMN(d, renew)
		require.Equal(t, int64(2), read("game"))
		_, err := f.s.RemoveMeshNode(f.ctx, lsKA(), f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, int64(3), read("game"))
		other := f.mn("a")
		other.MeshName, other.RID = "test", "node-z"
		f.updateMN(other, newClaim)
		require.Equal(t, int64(3), read("game"))
		require.Equal(t, int64(1), read("test"))
		peer := lsPeer("a", 0)
		peer.MeshName = "game"
		f.updatePeer(peer, newClaim)
		require.Equal(t, int64(3), read("game"), "peer writes do not move it")
		f.updateMN(f.mn("a"), newClaim)
		_, err = f.s.RemoveAllByOwner(f.ctx, f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, int64(5), read("game"), "RemoveAllByOwner moves it")
	})
	t.Run("LS-197 A-39 fixed: empty mesh name", func(t *testing.T) {
		f := newLSFix(t)
		s := lsSpotRow("a", 1)
		s.MeshName = ""
		f.updateSpot(s, newClaim)
		require.Equal(t, int64(1), f.stamp(location.LocationSpot, ""))
		v, err := f.s.GetChangeStamp(f.ctx, location.ChangeStampScope{Kind: location.LocationSpot.Scope(), MeshName: lsPtr("")})
		require.NoError(t, err)
		require.Equal(t, int64(1), v, "an empty mesh name selects the global counter")
	})
	t.Run("LS-198 renew and revision updates bump, replays do not", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.updateSpot(f.spot("a"), newClaim)
		f.updateActor(f.actor("a"), newClaim)
		f.updateMN(f.mn("a"), newClaim)
		f.updatePeer(lsPeer("a", 1), renew)
		f.updateSpot(f.spot("a"), renew)
		f.updateActor(f.actor("a"), renew)
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "play"))
		require.Equal(t, int64(2), f.stamp(location.LocationSpot, "play"))
		require.Equal(t, int64(2), f.stamp(location.LocationActor, "play"))
		d := f.mn("a")
		d.DescriptorRevision = 4
		f.updateMN(d, renew)
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "game"))
		f.updateMN(d, renew)
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "game"))
	})
}
