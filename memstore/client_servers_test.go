package memstore

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestClientServers(t *testing.T) {
	t0 := lsT0()
	newClaim, renew := location.IntentNewClaim, location.IntentRenew
	csAt := func(d location.ClientServerDescriptor, ts time.Time) location.ClientServerDescriptor {
		d.UpdatedAt = ts
		return d
	}
	key := location.ClientServerKey{ChannelName: "orders", ServerRID: "srv-a"}
	t.Run("LS-080 create", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateCS(f.cs("a"), newClaim))
		require.Equal(t, []location.ClientServerDescriptor{csAt(f.cs("a"), t0)}, f.clientServers("orders"))
		require.Equal(t, int64(1), f.stamp(location.LocationClientServer, "orders"))
		require.Equal(t, int64(1), f.stamp(location.LocationClientServer, ""))
		require.Equal(t, int64(0), f.stamp(location.LocationPeer, ""))
	})
	t.Run("LS-081 validation", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			mutate func(*location.ClientServerDescriptor)
			class  location.ErrorClass
		}{
			{"channel empty", func(d *location.ClientServerDescriptor) { d.ChannelName = "" }, location.ClassType},
			{"server rid empty", func(d *location.ClientServerDescriptor) { d.ServerRID = "" }, location.ClassType},
			{"endpoint empty", func(d *location.ClientServerDescriptor) { d.Endpoint = "" }, location.ClassType},
			{"security identity empty", func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "" }, location.ClassType},
			{"channel with NUL", func(d *location.ClientServerDescriptor) { d.ChannelName = "or\x00ders" }, location.ClassType},
			{"channel too long", func(d *location.ClientServerDescriptor) { d.ChannelName = strings.Repeat("c", 256) }, location.ClassType},
			{"lifecycle 0", func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
			{"revision 0", func(d *location.ClientServerDescriptor) { d.DescriptorRevision = 0 }, location.ClassRange},
			{"lease generation 0", func(d *location.ClientServerDescriptor) { d.LeaseGeneration = 0 }, location.ClassRange},
			{"weight -1", func(d *location.ClientServerDescriptor) { d.Weight = -1 }, location.ClassRange},
			{"weight 10001", func(d *location.ClientServerDescriptor) { d.Weight = 10001 }, location.ClassRange},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := newLSFix(t)
				f.claim("a")
				d := f.cs("a")
				c.mutate(&d)
				f.noEffect(func() {
					_, err := f.s.UpdateClientServer(f.ctx, d, newClaim)
					requireInputError(t, err, c.class)
				})
			})
		}
		f := newLSFix(t)
		f.claim("a")
		for i, w := range []int64{0, 10000} {
			d := f.cs("a")
			d.Weight, d.ServerRID = w, location.RoutingID([]string{"w0", "w1"}[i])
			require.Equal(t, lsStored(1, t0), f.updateCS(d, newClaim))
		}
	})
	t.Run("LS-082 lease checks", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		wrongGen := f.cs("a")
		wrongGen.LeaseGeneration++
		f.noEffect(func() {
			require.Equal(t, lsConflict(), f.updateCS(f.cs("ghost"), newClaim))
			require.Equal(t, lsConflict(), f.updateCS(wrongGen, newClaim))
		})
		f.expire("a")
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updateCS(f.cs("a"), newClaim)) })
	})
	t.Run("LS-083 replay", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateCS(f.cs("a"), newClaim)
		f.clk.Advance(5 * time.Second)
		f.noEffect(func() { require.Equal(t, lsStored(1, t0), f.updateCS(f.cs("a"), renew)) })
	})
	t.Run("LS-084 revision update", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateCS(f.cs("a"), newClaim)
		f.clk.Advance(time.Second)
		d := f.cs("a")
		d.DescriptorRevision, d.Weight, d.State = 2, 50, location.StateDraining
		require.Equal(t, lsStored(1, t0.Add(time.Second)), f.updateCS(d, renew))
		require.Equal(t, int64(2), f.stamp(location.LocationClientServer, "orders"))
		d.Weight, d.State = 60, location.StateServing
		f.noEffect(func() { require.Equal(t, lsStale(), f.updateCS(d, renew)) })
	})
	t.Run("LS-085 immutable change", func(t *testing.T) {
		for _, mutate := range []func(*location.ClientServerDescriptor){
			func(d *location.ClientServerDescriptor) { d.Endpoint = "tcp://10.0.0.9:7400" },
			func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "cluster-b" },
			func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 2 },
		} {
			f := newLSFix(t)
			f.claim("a")
			f.updateCS(f.cs("a"), newClaim)
			d := f.cs("a")
			d.DescriptorRevision = 2
			mutate(&d)
			f.noEffect(func() { require.Equal(t, lsStale(), f.updateCS(d, renew)) })
		}
	})
	t.Run("LS-086 re-create continues the counter", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateCS(f.cs("a"), newClaim))
		st, err := f.s.RemoveClientServer(f.ctx, key, f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
		require.Equal(t, lsStored(2, t0), f.updateCS(f.cs("a"), newClaim))
	})
	t.Run("LS-087 other owner", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateCS(f.cs("a"), newClaim)
		f.noEffect(func() { require.Equal(t, lsStale(), f.updateCS(f.cs("b"), newClaim)) })
		f.expire("a")
		require.Equal(t, lsStored(2, t0), f.updateCS(f.cs("b"), newClaim))
	})
	t.Run("LS-088 list", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateCS(f.cs("a"), newClaim)
		other := f.cs("a")
		other.ChannelName = "orders-2"
		f.updateCS(other, newClaim)
		f.expire("a")
		require.Equal(t, []location.ClientServerDescriptor{csAt(f.cs("a"), t0)}, f.clientServers("orders"))
	})
	t.Run("LS-089 remove", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.updateCS(f.cs("a"), newClaim)
		f.noEffect(func() {
			st, err := f.s.RemoveClientServer(f.ctx, key, location.OwnerToken{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 1})
			require.NoError(t, err)
			require.Equal(t, location.IgnoredStale, st)
		})
		st, err := f.s.RemoveClientServer(f.ctx, key, a)
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
		require.Empty(t, f.clientServers("orders"))
		require.Equal(t, int64(2), f.stamp(location.LocationClientServer, "orders"))
	})
}
