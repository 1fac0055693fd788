package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestPeers(t *testing.T) {
	t0 := lsT0()
	newClaim, renew, takeover := location.IntentNewClaim, location.IntentRenew, location.IntentTakeover
	peerAt := func(p location.PeerLocation, g int64, ts time.Time) location.PeerLocation {
		p.Generation, p.UpdatedAt = g, ts
		return p
	}
	remove := func(f *lsFix, k location.PeerKey, owner string, g int64) location.WriteResult {
		f.t.Helper()
		res, err := f.s.RemovePeer(f.ctx, k, location.OwnerToken{OwnerID: owner, LeaseGeneration: g})
		require.NoError(f.t, err)
		return res
	}
	t.Run("LS-100 create", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updatePeer(lsPeer("a", 0), newClaim))
		require.Equal(t, []location.PeerLocation{peerAt(lsPeer("a", 0), 1, t0)}, f.peers(location.PeerFilter{MeshName: lsPtr("play")}))
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, "play"))
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, ""))
	})
	t.Run("LS-101 no writer lease needed", func(t *testing.T) {
		f := newLSFix(t)
		require.Equal(t, lsStored(1, t0), f.updatePeer(lsPeer("ghost", 0), newClaim))
	})
	t.Run("LS-102 live other owner", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updatePeer(lsPeer("b", 0), newClaim)) })
	})
	t.Run("LS-103 A-13 own live row", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updatePeer(lsPeer("a", 0), newClaim)) })
	})
	t.Run("LS-104 dead owner", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.expire("a")
		require.Equal(t, lsStored(2, t0), f.updatePeer(lsPeer("b", 0), newClaim))
		require.Equal(t, []location.PeerLocation{peerAt(lsPeer("b", 0), 2, t0)}, f.peers(location.PeerFilter{}))
	})
	t.Run("LS-105 owner that never had a lease", func(t *testing.T) {
		f := newLSFix(t)
		f.updatePeer(lsPeer("ghost", 0), newClaim)
		f.claim("b")
		require.Equal(t, lsStored(2, t0), f.updatePeer(lsPeer("b", 0), newClaim))
	})
	t.Run("LS-106 takeover is unconditional", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updatePeer(lsPeer("a", 0), newClaim)
		require.Equal(t, lsStored(2, t0), f.updatePeer(lsPeer("b", 0), takeover))
		require.Equal(t, lsStored(3, t0), f.updatePeer(lsPeer("ghost", 0), takeover))
	})
	t.Run("LS-107 renew with the row generation", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.clk.Advance(5 * time.Second)
		p := lsPeer("a", 1)
		p.Draining = true
		require.Equal(t, lsStored(1, t0.Add(5*time.Second)), f.updatePeer(p, renew))
		require.Equal(t, []location.PeerLocation{peerAt(p, 1, t0.Add(5*time.Second))}, f.peers(location.PeerFilter{}))
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "play"))
	})
	t.Run("LS-108 renew rejections", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updatePeer(lsPeer("a", 0), newClaim)
		absent := lsPeer("a", 1)
		absent.NodeRID = lsPtr(location.RoutingID("node-9"))
		f.noEffect(func() {
			require.Equal(t, lsStale(), f.updatePeer(lsPeer("a", 2), renew))
			require.Equal(t, lsStale(), f.updatePeer(lsPeer("b", 1), renew))
			require.Equal(t, lsStale(), f.updatePeer(absent, renew))
		})
	})
	t.Run("LS-109 A-01 fixed: renew with the wildcard generation 0", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		require.Equal(t, lsStored(1, t0), f.updatePeer(lsPeer("a", 0), renew))
		require.Equal(t, int64(1), f.peers(location.PeerFilter{})[0].Generation)
		require.Equal(t, lsStored(1, t0), remove(f, lsPK(), "a", 1))
	})
	t.Run("LS-110 identity with nodeRid ignores the endpoint", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updatePeer(lsPeer("a", 0), newClaim)
		moved := lsPeer("a", 1)
		moved.Endpoint = "tcp://127.0.0.1:5999"
		require.Equal(t, lsStored(1, t0), f.updatePeer(moved, renew))
		listed := f.peers(location.PeerFilter{})
		require.Len(t, listed, 1)
		require.Equal(t, "tcp://127.0.0.1:5999", listed[0].Endpoint)
		other := lsPeer("b", 0)
		other.Endpoint = "tcp://127.0.0.1:5999"
		require.Equal(t, lsConflict(), f.updatePeer(other, newClaim))
		k := lsPK()
		k.Endpoint = lsPtr("tcp://other")
		require.Equal(t, lsStored(1, t0), remove(f, k, "a", 1))
	})
	t.Run("LS-111 identity without nodeRid uses the endpoint", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		e1, e2 := lsPeer("a", 0), lsPeer("a", 0)
		e1.NodeRID, e2.NodeRID = nil, nil
		e2.Endpoint = "tcp://127.0.0.1:5002"
		require.Equal(t, lsStored(1, t0), f.updatePeer(e1, newClaim))
		require.Equal(t, lsStored(1, t0), f.updatePeer(e2, newClaim))
		require.Len(t, f.peers(location.PeerFilter{}), 2)
		k := location.PeerKey{AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", Role: location.PeerRoleRouter, Endpoint: lsPtr(e1.Endpoint)}
		require.Equal(t, lsStored(1, t0), remove(f, k, "a", 1))
		require.Equal(t, []location.PeerLocation{peerAt(e2, 1, t0)}, f.peers(location.PeerFilter{}))
	})
	t.Run("LS-112 key validation", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		for _, mutate := range []func(*location.PeerLocation){
			func(p *location.PeerLocation) { p.AutoConnectType = 0 },
			func(p *location.PeerLocation) { p.Role = 0 },
			func(p *location.PeerLocation) { p.Role = 1 },
			func(p *location.PeerLocation) { p.Role = 7 },
		} {
			p := lsPeer("a", 0)
			mutate(&p)
			f.noEffect(func() {
				_, err := f.s.UpdatePeer(f.ctx, p, newClaim)
				requireInputError(t, err, location.ClassRange)
			})
		}
		k := lsPK()
		k.Role = 0
		_, err := f.s.RemovePeer(f.ctx, k, f.tok["a"])
		requireInputError(t, err, location.ClassRange)
	})
	t.Run("LS-113 remove", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.clk.Advance(time.Second)
		require.Equal(t, lsStored(1, t0.Add(time.Second)), remove(f, lsPK(), "a", 1))
		require.Empty(t, f.peers(location.PeerFilter{}))
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "play"))
	})
	t.Run("LS-114 remove is fenced by the row generation", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updatePeer(lsPeer("a", 0), newClaim))
		require.Equal(t, lsStored(2, t0), f.updatePeer(lsPeer("a", 0), takeover))
		f.noEffect(func() {
			require.Equal(t, lsStale(), remove(f, lsPK(), "a", 1))
			require.Equal(t, lsStale(), remove(f, lsPK(), "b", 2))
		})
		require.Equal(t, lsStored(2, t0), remove(f, lsPK(), "a", 2))
	})
	t.Run("LS-115 remove needs no live lease", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.expire("a")
		require.Equal(t, lsStored(1, t0), remove(f, lsPK(), "a", 1))
	})
	t.Run("LS-116 re-create continues", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		remove(f, lsPK(), "a", 1)
		require.Equal(t, lsStored(2, t0), f.updatePeer(lsPeer("a", 0), newClaim))
	})
	t.Run("LS-117 filters", func(t *testing.T) {
		f := newLSFix(t)
		p1 := lsPeer("a", 0)
		p2 := lsPeer("a", 0)
		p2.Role, p2.NodeRID = location.PeerRoleDealer, lsPtr(location.RoutingID("node-2"))
		p3 := lsPeer("a", 0)
		p3.AutoConnectType, p3.Role, p3.NodeRID, p3.Endpoint = location.AutoConnectFanout, location.PeerRolePub, nil, "e3"
		p4 := lsPeer("a", 0)
		p4.MeshName = "other"
		all := map[string]location.PeerLocation{"P1": p1, "P2": p2, "P3": p3, "P4": p4}
		for _, p := range all {
			f.updatePeer(p, newClaim)
		}
		for _, c := range []struct {
			filter location.PeerFilter
			want   []string
		}{
			{location.PeerFilter{}, []string{"P1", "P2", "P3", "P4"}},
			{location.PeerFilter{MeshName: lsPtr("play")}, []string{"P1", "P2", "P3"}},
			{location.PeerFilter{Role: lsPtr(location.PeerRoleRouter)}, []string{"P1", "P4"}},
			{location.PeerFilter{AutoConnectType: lsPtr(location.AutoConnectFanout)}, []string{"P3"}},
			{location.PeerFilter{NodeRID: lsPtr(location.RoutingID("node-1"))}, []string{"P1", "P4"}},
			{location.PeerFilter{Endpoint: lsPtr("e3")}, []string{"P3"}},
			{location.PeerFilter{MeshName: lsPtr("play"), Role: lsPtr(location.PeerRoleRouter)}, []string{"P1"}},
			{location.PeerFilter{NodeRID: lsPtr(location.RoutingID("node-9"))}, nil},
		} {
			var want []location.PeerLocation
			for _, name := range c.want {
				want = append(want, peerAt(all[name], 1, t0))
			}
			require.ElementsMatch(t, want, f.peers(c.filter))
		}
	})
	t.Run("LS-118 dead owners' peers are listed", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.expire("a")
		require.Len(t, f.peers(location.PeerFilter{}), 1)
	})
	t.Run("LS-203 listed peers are copies", func(t *testing.T) {
		f := newLSFix(t)
		p := lsPeer("a", 0)
		f.updatePeer(p, newClaim)
		p.Metadata["route-endpoint"] = "x" // the caller's map
		got := f.peers(location.PeerFilter{})
		got[0].Metadata["route-endpoint"] = "y"
		got[0].Capabilities[0] = "y"
		*got[0].NodeRID = "y"
		require.Equal(t, []location.PeerLocation{peerAt(lsPeer("a", 0), 1, t0)}, f.peers(location.PeerFilter{}))
	})
}
