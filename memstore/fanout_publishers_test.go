package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

func TestFanoutPublishers(t *testing.T) {
	t0 := lsT0()
	newClaim, renew := location.IntentNewClaim, location.IntentRenew
	key := location.FanoutPublisherKey{ChannelName: "events", PublisherRID: "pub-a"}
	rids := func(items []location.FanoutPublisherDescriptor) []location.RoutingID {
		out := []location.RoutingID{}
		for _, d := range items {
			out = append(out, d.PublisherRID)
		}
		return out
	}
	noStamps := func(f *lsFix) {
		f.t.Helper()
		require.Empty(f.t, f.state().stamps, "fanout bumps no stamp (A-07)")
		require.Empty(f.t, f.state().meshStamps)
	}
	t.Run("LS-090 create bumps nothing", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateFP(f.fp("a"), newClaim))
		noStamps(f)
		for _, kind := range []location.ScopeKind{location.ScopeFanoutPublisher, location.LocationPeer.Scope(), location.LocationClientServer.Scope()} {
			for _, mesh := range []*string{nil, lsPtr("events")} {
				v, err := f.s.GetChangeStamp(f.ctx, location.ChangeStampScope{Kind: kind, MeshName: mesh})
				require.NoError(t, err)
				require.Zero(t, v)
			}
		}
	})
	t.Run("LS-091 revision rules", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateFP(f.fp("a"), newClaim)
		draining := f.fp("a")
		draining.State = location.StateDraining
		endpoint := f.fp("a")
		endpoint.DescriptorRevision, endpoint.Endpoint = 2, "tcp://10.0.0.2:9501"
		lifecycle := f.fp("a")
		lifecycle.LifecycleGeneration, lifecycle.DescriptorRevision = 8, 2
		f.noEffect(func() {
			for _, d := range []location.FanoutPublisherDescriptor{draining, endpoint, lifecycle} {
				require.Equal(t, lsStale(), f.updateFP(d, renew))
			}
		})
		f.clk.Advance(time.Second)
		draining.DescriptorRevision = 2
		require.Equal(t, lsStored(1, t0.Add(time.Second)), f.updateFP(draining, renew))
		listed := f.fanouts("events")
		require.Len(t, listed, 1)
		require.Equal(t, int64(2), listed[0].DescriptorRevision)
		require.Equal(t, location.StateDraining, listed[0].State)
		noStamps(f)
	})
	t.Run("LS-092 validation", func(t *testing.T) {
		for _, c := range []struct {
			mutate func(*location.FanoutPublisherDescriptor)
			class  location.ErrorClass
		}{
			{func(d *location.FanoutPublisherDescriptor) { d.Endpoint = "" }, location.ClassType},
			{func(d *location.FanoutPublisherDescriptor) { d.SecurityIdentity = "" }, location.ClassType},
			{func(d *location.FanoutPublisherDescriptor) { d.PublisherRID = "" }, location.ClassType},
			{func(d *location.FanoutPublisherDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
		} {
			f := newLSFix(t)
			f.claim("a")
			d := f.fp("a")
			c.mutate(&d)
			f.noEffect(func() {
				_, err := f.s.UpdateFanoutPublisher(f.ctx, d, newClaim)
				requireInputError(t, err, c.class)
			})
		}
	})
	t.Run("LS-093 A-16 liveness filter", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateFP(f.fp("a"), newClaim)
		b := f.fp("b")
		b.PublisherRID = "pub-b"
		f.updateFP(b, newClaim)
		f.expire("b")
		require.Equal(t, []location.RoutingID{"pub-a"}, rids(f.fanouts("events")))
		f.claim("b")
		require.Equal(t, []location.RoutingID{"pub-a", "pub-b"}, rids(f.fanouts("events")), "pub-b's row carries the old lease generation")
	})
	t.Run("LS-094 released owner hidden", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.updateFP(f.fp("a"), newClaim)
		_, err := f.s.ReleaseOwnerLease(f.ctx, a)
		require.NoError(t, err)
		require.Empty(t, f.fanouts("events"))
		f.claim("b")
		require.Equal(t, lsStored(2, t0), f.updateFP(f.fp("b"), newClaim))
	})
	t.Run("LS-095 paging counts live rows only", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		for _, c := range []struct {
			owner string
			rid   location.RoutingID
		}{{"a", "pub-a"}, {"b", "pub-b"}, {"a", "pub-c"}} {
			d := f.fp(c.owner)
			d.PublisherRID = c.rid
			f.updateFP(d, newClaim)
		}
		f.expire("b")
		p, err := f.s.ListFanoutPublishers(f.ctx, "events", location.PageRequest{PageSize: 1})
		require.NoError(t, err)
		require.Equal(t, []location.RoutingID{"pub-a"}, rids(p.Items))
		require.Equal(t, "1", p.ContinuationToken)
		p, err = f.s.ListFanoutPublishers(f.ctx, "events", location.PageRequest{PageSize: 1, ContinuationToken: p.ContinuationToken})
		require.NoError(t, err)
		require.Equal(t, []location.RoutingID{"pub-c"}, rids(p.Items))
		require.Empty(t, p.ContinuationToken)
	})
	t.Run("LS-096 remove", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.updateFP(f.fp("a"), newClaim)
		f.noEffect(func() {
			st, err := f.s.RemoveFanoutPublisher(f.ctx, key, location.OwnerToken{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 1})
			require.NoError(t, err)
			require.Equal(t, location.IgnoredStale, st)
		})
		st, err := f.s.RemoveFanoutPublisher(f.ctx, key, a)
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
		require.Empty(t, f.fanouts("events"))
		noStamps(f)
		require.Equal(t, int64(1), f.state().gens[rules.Table(location.TableFanoutPublishers)][rules.FanoutPublisherKey(key)])
	})
	t.Run("LS-097 lease checks", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		wrong := f.fp("a")
		wrong.LeaseGeneration++
		f.noEffect(func() {
			require.Equal(t, lsConflict(), f.updateFP(f.fp("ghost"), newClaim))
			require.Equal(t, lsConflict(), f.updateFP(wrong, newClaim))
		})
	})
}
