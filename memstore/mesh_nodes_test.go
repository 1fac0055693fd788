package memstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

func TestMeshNodes(t *testing.T) {
	t0 := lsT0()
	newClaim, renew, takeover := location.IntentNewClaim, location.IntentRenew, location.IntentTakeover
	t.Run("LS-030 create", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		d := f.mn("a")
		d.UpdatedAt = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC) // LS-204
		require.Equal(t, lsStored(1, t0), f.updateMN(d, newClaim))
		require.Equal(t, []location.MeshNodeDescriptor{mnAt(f.mn("a"), t0)}, f.meshNodes("game"))
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, "game"))
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, ""))
		require.Equal(t, int64(0), f.stamp(location.LocationSpot, ""))
		require.Equal(t, int64(0), f.stamp(location.LocationClientServer, ""))
	})
	t.Run("LS-031 create with Takeover intent", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateMN(f.mn("a"), takeover))
	})
	t.Run("LS-032 renew of an absent descriptor", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.noEffect(func() { require.Equal(t, lsStale(), f.updateMN(f.mn("a"), renew)) })
		require.Empty(t, f.meshNodes("game"))
	})
	t.Run("LS-033 writer without a lease", func(t *testing.T) {
		f := newLSFix(t)
		for _, intent := range []location.WriteIntent{newClaim, renew, takeover} {
			f.noEffect(func() { require.Equal(t, lsConflict(), f.updateMN(f.mn("ghost"), intent)) })
		}
	})
	t.Run("LS-034 writer lease generation mismatch", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		d := f.mn("a")
		d.LeaseGeneration++
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updateMN(d, newClaim)) })
	})
	t.Run("LS-035 writer lease expired", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		f.expire("a")
		d := f.mn("a")
		d.DescriptorRevision = 4
		require.Equal(t, lsConflict(), f.updateMN(d, renew))
		require.Equal(t, int64(3), f.meshNodes("game")[0].DescriptorRevision)
	})
	t.Run("LS-036 validation precedes the lease check", func(t *testing.T) {
		f := newLSFix(t)
		d := f.mn("ghost")
		d.MeshName = ""
		_, err := f.s.UpdateMeshNode(f.ctx, d, newClaim)
		requireInputError(t, err, location.ClassType)
	})
	t.Run("LS-037 validation table", func(t *testing.T) {
		caps := func(n int) []location.ObjectCapability {
			out := make([]location.ObjectCapability, n)
			for i := range out {
				out[i] = location.ObjectCapability{ObjectKind: location.ObjectInstanceSpot, StableType: fmt.Sprintf("t%d", i), Policy: location.PolicyRecreate}
			}
			return out
		}
		client := func(d *location.MeshNodeDescriptor) { d.ObjectRole, d.ObjectCapabilities = location.RoleClient, nil }
		for i, c := range []struct {
			mutate func(*location.MeshNodeDescriptor)
			class  location.ErrorClass
		}{
			{func(d *location.MeshNodeDescriptor) { d.MeshName = "" }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { d.MeshName = strings.Repeat("m", 256) }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { d.OwnerID = "a\x00" }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { client(d); d.EntrySpotID = lsPtr("e") }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { client(d); d.EntrySpotID = lsPtr("") }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { d.EntrySpotID = lsPtr("") }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.DescriptorRevision = 0 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.LeaseGeneration = 0 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = -1 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) {
				d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 60, Reserved: 50, Limit: 100}
			}, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Spots.Limit = -1 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.SpotTypes[0].Active = 101 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Limit = 0 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) {
				d.ActivationConcurrency = location.ActivationConcurrency{Active: 5, Limit: 4}
			}, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 10001 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.PlacementWeight = -1 }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities = caps(1025) }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.ObjectRole = location.RoleClient }, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].StableType = "" }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) {
				d.ObjectCapabilities = append(d.ObjectCapabilities, d.ObjectCapabilities[0])
			}, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Policy = location.PolicySnapshot }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].HasSnapshotAdapter = true }, location.ClassType},
			{func(d *location.MeshNodeDescriptor) {
				d.ObjectCapabilities[0] = location.ObjectCapability{ObjectKind: location.ObjectActor, StableType: "player", Policy: location.PolicyRecreate, Limit: 5}
			}, location.ClassRange},
			{func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Limit = -1 }, location.ClassRange},
		} {
			t.Run(fmt.Sprint(i+1), func(t *testing.T) {
				f := newLSFix(t)
				f.claim("a")
				f.claim("a\x00")
				d := f.mn("a")
				c.mutate(&d)
				f.noEffect(func() {
					_, err := f.s.UpdateMeshNode(f.ctx, d, newClaim)
					requireInputError(t, err, c.class)
				})
			})
		}
	})
	t.Run("LS-038 validation boundaries accepted", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		caps := make([]location.ObjectCapability, 1024)
		for i := range caps {
			caps[i] = location.ObjectCapability{ObjectKind: location.ObjectInstanceSpot, StableType: fmt.Sprintf("t%d", i), Policy: location.PolicyRecreate}
		}
		for i, mutate := range []func(*location.MeshNodeDescriptor){
			func(d *location.MeshNodeDescriptor) {
				d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 60, Reserved: 50}
			},
			func(d *location.MeshNodeDescriptor) {
				d.PopulationCapacity.SpotTypes[0].PopulationCapacity = location.PopulationCapacity{Active: 7}
			},
			func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 0 },
			func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 10000 },
			func(d *location.MeshNodeDescriptor) { d.ObjectRole, d.ObjectCapabilities = location.RoleClient, nil },
			func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities = caps },
			func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = 0 },
			func(d *location.MeshNodeDescriptor) {
				d.ObjectCapabilities[0] = location.ObjectCapability{ObjectKind: location.ObjectActor, StableType: "player", Policy: location.PolicyDisabled}
			},
			func(d *location.MeshNodeDescriptor) {
				d.ObjectCapabilities[0].Policy, d.ObjectCapabilities[0].HasSnapshotAdapter = location.PolicySnapshot, true
			},
			func(d *location.MeshNodeDescriptor) { d.MeshName = strings.Repeat("m", 255) },
		} {
			d := f.mn("a")
			d.RID = location.RoutingID(fmt.Sprintf("node-%d", i))
			mutate(&d)
			require.Equal(t, lsStored(1, t0), f.updateMN(d, newClaim), "variant %d", i)
		}
	})
	t.Run("LS-039 exact replay keeps generation and updatedAt", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		f.clk.Advance(5 * time.Second)
		for _, intent := range []location.WriteIntent{renew, newClaim} {
			f.noEffect(func() { require.Equal(t, lsStored(1, t0), f.updateMN(f.mn("a"), intent)) })
		}
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, "game"))
		require.Equal(t, t0, f.meshNodes("game")[0].UpdatedAt)
	})
	t.Run("LS-040 normalised replay", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		d := f.mn("a")
		d.SpotTypes = []string{"room", "lobby"}
		d.ObjectCapabilities = append(d.ObjectCapabilities, location.ObjectCapability{ObjectKind: location.ObjectUserSpot, StableType: "lobby", Policy: location.PolicyRecreate, Limit: 10})
		f.updateMN(d, newClaim)
		f.clk.Advance(time.Second)
		swapped := d.Clone()
		swapped.SpotTypes = []string{"lobby", "room"}
		swapped.ObjectCapabilities[0], swapped.ObjectCapabilities[1] = swapped.ObjectCapabilities[1], swapped.ObjectCapabilities[0]
		f.noEffect(func() { require.Equal(t, lsStored(1, t0), f.updateMN(swapped, renew)) })
		require.Equal(t, []location.MeshNodeDescriptor{mnAt(d, t0)}, f.meshNodes("game"))
	})
	t.Run("LS-041 same revision, mutable change", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		d := f.mn("a")
		d.State = location.StateDraining
		f.noEffect(func() { require.Equal(t, lsStale(), f.updateMN(d, renew)) })
	})
	t.Run("LS-042 revision update", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		f.clk.Advance(5 * time.Second)
		d := f.mn("a")
		d.DescriptorRevision, d.State, d.PlacementWeight = 4, location.StateDraining, 50
		d.ChannelWeights = map[string]int64{"orders": 10, "world": 50}
		d.MaintenanceWave = lsPtr("wave-1")
		d.ActivationConcurrency = location.ActivationConcurrency{Active: 3, Limit: 100}
		require.Equal(t, lsStored(1, t0.Add(5*time.Second)), f.updateMN(d, renew))
		require.Equal(t, []location.MeshNodeDescriptor{mnAt(d, t0.Add(5*time.Second))}, f.meshNodes("game"))
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "game"))
	})
	t.Run("LS-043 revision update through NewClaim by the same owner and lease", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		f.clk.Advance(time.Second)
		d := f.mn("a")
		d.DescriptorRevision, d.State = 4, location.StateDraining
		require.Equal(t, lsStored(1, t0.Add(time.Second)), f.updateMN(d, newClaim))
	})
	t.Run("LS-044 mutable fields", func(t *testing.T) {
		for i, mutate := range []func(*location.MeshNodeDescriptor){
			func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 1 },
			func(d *location.MeshNodeDescriptor) {
				d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 5, Reserved: 5, Limit: 100}
			},
			func(d *location.MeshNodeDescriptor) {
				d.PopulationCapacity.Spots = location.PopulationCapacity{Active: 1, Reserved: 2, Limit: 100}
			},
			func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.SpotTypes[0].Limit = 50 },
			func(d *location.MeshNodeDescriptor) {
				d.PopulationCapacity.SpotTypes = append(d.PopulationCapacity.SpotTypes, location.SpotTypeCapacity{ObjectKind: location.ObjectUserSpot, StableType: "lobby", PopulationCapacity: location.PopulationCapacity{Limit: 10}})
			},
			func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Active = 9 },
			func(d *location.MeshNodeDescriptor) { d.ChannelWeights["orders"] = 1 },
			func(d *location.MeshNodeDescriptor) { d.MaintenanceWave = lsPtr("wave-1") },
			func(d *location.MeshNodeDescriptor) { d.State = location.StateStopped },
		} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				f := newLSFix(t)
				f.claim("a")
				f.updateMN(f.mn("a"), newClaim)
				d := f.mn("a")
				d.DescriptorRevision = 4
				mutate(&d)
				require.Equal(t, lsStored(1, t0), f.updateMN(d, renew))
			})
		}
	})
	t.Run("LS-045 immutable fields", func(t *testing.T) {
		for i, mutate := range []func(*location.MeshNodeDescriptor){
			func(d *location.MeshNodeDescriptor) { d.Endpoint = "tcp://10.0.0.9:7300" },
			func(d *location.MeshNodeDescriptor) { d.EntrySpotID = lsPtr("entry-9") },
			func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Actors.Limit = 99 },
			func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Spots.Limit = 99 },
			func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Limit = 99 },
			func(d *location.MeshNodeDescriptor) { d.ChannelWeights["extra"] = 1 },
			func(d *location.MeshNodeDescriptor) { delete(d.ChannelWeights, "world") },
			func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = 2 },
			func(d *location.MeshNodeDescriptor) { d.SpotTypes = []string{"room", "lobby"} },
			func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Policy = location.PolicyDisabled },
			func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Limit = 99 },
			func(d *location.MeshNodeDescriptor) { d.SecurityIdentity = "cluster-b" },
			func(d *location.MeshNodeDescriptor) { d.ObjectRole, d.ObjectCapabilities = location.RoleClient, nil },
		} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				f := newLSFix(t)
				f.claim("a")
				f.updateMN(f.mn("a"), newClaim)
				d := f.mn("a")
				d.DescriptorRevision = 4
				mutate(&d)
				f.noEffect(func() { require.Equal(t, lsStale(), f.updateMN(d, renew)) })
			})
		}
	})
	t.Run("LS-046 LS-047 lifecycle change and lower revision", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		lifecycle := f.mn("a")
		lifecycle.LifecycleGeneration, lifecycle.DescriptorRevision = 8, 4
		lower := f.mn("a")
		lower.DescriptorRevision = 2
		f.noEffect(func() {
			require.Equal(t, lsStale(), f.updateMN(lifecycle, renew))
			require.Equal(t, lsStale(), f.updateMN(lower, renew))
		})
	})
	t.Run("LS-048 A-10 other live owner's NewClaim", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateMN(f.mn("a"), newClaim)
		f.noEffect(func() { require.Equal(t, lsStale(), f.updateMN(f.mn("b"), newClaim)) })
		require.Equal(t, "a", f.meshNodes("game")[0].OwnerID)
	})
	t.Run("LS-049 other owner after expiry", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateMN(f.mn("a"), newClaim)
		f.expire("a")
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mn("b"), newClaim))
		require.Equal(t, "b", f.meshNodes("game")[0].OwnerID)
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "game"))
	})
	t.Run("LS-050 other owner after release", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.claim("b")
		f.updateMN(f.mn("a"), newClaim)
		_, err := f.s.ReleaseOwnerLease(f.ctx, a)
		require.NoError(t, err)
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mn("b"), newClaim))
	})
	t.Run("LS-051 LS-052 restarted owner", func(t *testing.T) {
		f := newLSFix(t)
		g1 := f.claim("a").LeaseGeneration
		f.updateMN(f.mn("a"), newClaim)
		f.expire("a")
		f.claim("a")
		require.Equal(t, lsStale(), f.updateMN(f.mn("a"), renew))
		old := f.mn("a")
		old.LeaseGeneration = g1
		require.Equal(t, lsConflict(), f.updateMN(old, newClaim), "LS-052")
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mn("a"), newClaim))
	})
	t.Run("LS-053 takeover by a live other owner", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateMN(f.mn("a"), newClaim)
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mn("b"), takeover))
		require.Equal(t, "b", f.meshNodes("game")[0].OwnerID)
		d := f.mn("a")
		d.DescriptorRevision = 4
		require.Equal(t, lsStale(), f.updateMN(d, renew))
	})
	t.Run("LS-054 same-owner Takeover bumps", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		f.clk.Advance(time.Second)
		require.Equal(t, lsStored(2, t0.Add(time.Second)), f.updateMN(f.mn("a"), takeover))
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "game"))
	})
	t.Run("LS-055 takeover may change lifecycle and immutable fields", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		d := f.mn("a")
		d.LifecycleGeneration, d.Endpoint = 8, "tcp://10.0.0.2:7300"
		require.Equal(t, lsStored(2, t0), f.updateMN(d, takeover))
		require.Equal(t, []location.MeshNodeDescriptor{mnAt(d, t0)}, f.meshNodes("game"))
	})
	t.Run("LS-060 LS-061 entry spot conflict, released by remove", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateMN(f.mne("a"), newClaim)
		other := f.mne("b")
		other.RID, other.LifecycleGeneration, other.Endpoint = "node-b", 8, "tcp://10.0.0.2:7300"
		f.noEffect(func() { require.Equal(t, lsConflict(), f.updateMN(other, newClaim)) })
		require.Len(t, f.meshNodes("game"), 1)
		require.Equal(t, int64(1), f.stamp(location.LocationPeer, "game"))
		st, err := f.s.RemoveMeshNode(f.ctx, lsKA(), f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
		require.Equal(t, lsStored(1, t0), f.updateMN(other, newClaim), "LS-061")
	})
	t.Run("LS-062 A-03 fixed: dead owner's claim on the same key", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mne("a"), newClaim)
		f.expire("a")
		f.claim("b")
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mne("b"), newClaim))
	})
	t.Run("LS-063 new owner without entry spot frees the claim", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mne("a"), newClaim)
		f.expire("a")
		f.claim("b")
		f.claim("c")
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mn("b"), newClaim))
		d := f.mne("c")
		d.RID = "node-c"
		require.Equal(t, lsStored(1, t0), f.updateMN(d, newClaim))
	})
	t.Run("LS-064 restarted owner keeps its claim", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mne("a"), newClaim)
		f.expire("a")
		f.claim("a")
		f.claim("b")
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mne("a"), newClaim))
		d := f.mne("b")
		d.RID = "node-b"
		require.Equal(t, lsConflict(), f.updateMN(d, newClaim))
	})
	t.Run("LS-065 A-02 fixed: same-owner Takeover with unchanged entry spot", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateMN(f.mne("a"), newClaim)
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mne("a"), takeover))
		d := f.mne("b")
		d.RID = "node-b"
		require.Equal(t, lsConflict(), f.updateMN(d, newClaim))
	})
	t.Run("LS-066 takeover changing the entry spot releases the old one", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mne("a"), newClaim)
		f.expire("a")
		f.claim("a")
		f.claim("b")
		f.claim("c")
		moved := f.mn("a")
		moved.LifecycleGeneration, moved.EntrySpotID = 8, lsPtr("entry-2")
		require.Equal(t, lsStored(2, t0), f.updateMN(moved, newClaim))
		b := f.mne("b")
		b.RID = "node-b"
		require.Equal(t, lsStored(1, t0), f.updateMN(b, newClaim))
		c := f.mn("c")
		c.RID, c.EntrySpotID = "node-c", lsPtr("entry-2")
		require.Equal(t, lsConflict(), f.updateMN(c, newClaim))
	})
	t.Run("LS-067 same owner, second key, same entry spot", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mne("a"), newClaim)
		d := f.mne("a")
		d.RID = "node-b"
		require.Equal(t, lsConflict(), f.updateMN(d, newClaim))
	})
	t.Run("LS-068 removeAllByOwner releases the claim", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateMN(f.mne("a"), newClaim)
		n, err := f.s.RemoveAllByOwner(f.ctx, f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		d := f.mne("b")
		d.RID = "node-b"
		require.Equal(t, lsStored(1, t0), f.updateMN(d, newClaim))
	})
	t.Run("LS-069 entry claims block authority reservations", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		b := f.claim("b")
		f.updateMN(f.mne("a"), newClaim)
		target := f.mn("b")
		target.RID = "node-b"
		require.Equal(t, lsStored(1, t0), f.updateMN(target, newClaim))
		req := location.ReserveRequest{
			Key: location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: "entry-1"},
			Intent: location.CreationIntent{StableType: "lobby", RequestContentReference: "req:entry-1",
				RequestSHA256: make([]byte, 32), RequestEncodedSize: 10},
			Target:          location.CreationTarget{MeshName: "game", NodeRID: "node-b", NodeLifecycleGeneration: 7, Owner: b},
			CreatingPayload: []byte("creating"),
			Capacity:        location.CapacityVector{Spots: 1},
		}
		res, err := f.s.Reserve(f.ctx, req)
		require.NoError(t, err)
		require.Equal(t, location.KindConflict, res.Kind)
		require.NotNil(t, res.Current)
		require.Equal(t, location.KindMissing, res.Current.Kind)
		st, err := f.s.RemoveMeshNode(f.ctx, lsKA(), f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
		res, err = f.s.Reserve(f.ctx, req)
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, res.Kind)
	})
	t.Run("A-03 fixed: a dead holder's claim does not block reservations", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		b := f.claim("b")
		f.updateMN(f.mne("a"), newClaim)
		target := f.mn("b")
		target.RID = "node-b"
		f.updateMN(target, newClaim)
		f.expire("a")
		res, err := f.s.Reserve(f.ctx, location.ReserveRequest{
			Key: location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: "entry-1"},
			Intent: location.CreationIntent{StableType: "lobby", RequestContentReference: "req:entry-1",
				RequestSHA256: make([]byte, 32), RequestEncodedSize: 10},
			Target:          location.CreationTarget{MeshName: "game", NodeRID: "node-b", NodeLifecycleGeneration: 7, Owner: b},
			CreatingPayload: []byte("creating"),
			Capacity:        location.CapacityVector{Spots: 1},
		})
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, res.Kind)
	})
	t.Run("LS-070 remove rejections", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		b := f.claim("b")
		f.updateMN(f.mn("a"), newClaim)
		for _, c := range []struct {
			k     location.MeshNodeKey
			owner location.OwnerToken
		}{
			{location.MeshNodeKey{MeshName: "game", RID: "node-z"}, a},
			{lsKA(), b},
			{lsKA(), location.OwnerToken{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 1}},
		} {
			f.noEffect(func() {
				st, err := f.s.RemoveMeshNode(f.ctx, c.k, c.owner)
				require.NoError(t, err)
				require.Equal(t, location.IgnoredStale, st)
			})
		}
	})
	t.Run("LS-071 remove", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		st, err := f.s.RemoveMeshNode(f.ctx, lsKA(), f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
		require.Empty(t, f.meshNodes("game"))
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, "game"))
		require.Equal(t, int64(2), f.stamp(location.LocationPeer, ""))
	})
	t.Run("LS-072 remove needs no live lease", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		f.expire("a")
		st, err := f.s.RemoveMeshNode(f.ctx, lsKA(), f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, location.Stored, st)
	})
	t.Run("LS-073 A-04 re-create after remove", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateMN(f.mn("a"), newClaim))
		require.Equal(t, lsStored(2, t0), f.updateMN(f.mn("a"), takeover))
		_, err := f.s.RemoveMeshNode(f.ctx, lsKA(), f.tok["a"])
		require.NoError(t, err)
		require.Equal(t, lsStored(1, t0), f.updateMN(f.mn("a"), newClaim))
	})
	t.Run("LS-074 list is per mesh and not liveness-filtered", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mn("a"), newClaim)
		d := f.mn("a")
		d.MeshName, d.RID = "test", "node-z"
		f.updateMN(d, newClaim)
		f.expire("a")
		require.Equal(t, []location.MeshNodeDescriptor{mnAt(f.mn("a"), t0)}, f.meshNodes("game"))
	})
	t.Run("LS-075 capacity projection", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		d := f.mn("a")
		d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 5, Reserved: 3, Limit: 100}
		d.PopulationCapacity.Spots = location.PopulationCapacity{Active: 2, Reserved: 1, Limit: 100}
		d.PopulationCapacity.SpotTypes[0].Active = 4
		f.updateMN(d, newClaim)
		want := mnAt(f.mn("a"), t0)
		require.Equal(t, []location.MeshNodeDescriptor{want}, f.meshNodes("game"))

		// With ledger usage (as the authority side keeps it) the counts appear.
		f.s.mu.Lock()
		ledger := map[string]rules.Record{}
		for _, b := range []struct {
			bucket rules.Bucket
			entry  rules.LedgerEntry
		}{
			{rules.Bucket{Descriptor: lsKA(), Lifecycle: 7, Name: rules.BucketActor}, rules.LedgerEntry{Active: 2, Reserved: 1}},
			{rules.Bucket{Descriptor: lsKA(), Lifecycle: 7, Name: rules.BucketSpot}, rules.LedgerEntry{Active: 3}},
			{rules.Bucket{Descriptor: lsKA(), Lifecycle: 7, Name: string(location.ObjectInstanceSpot), StableType: "room"}, rules.LedgerEntry{Reserved: 4}},
		} {
			ledger[b.bucket.Key()] = rules.Record{Value: b.entry}
		}
		f.s.tables[rules.TableLedger] = ledger
		f.s.mu.Unlock()
		want.PopulationCapacity.Actors = location.PopulationCapacity{Active: 2, Reserved: 1, Limit: 100}
		want.PopulationCapacity.Spots = location.PopulationCapacity{Active: 3, Limit: 100}
		want.PopulationCapacity.SpotTypes[0].PopulationCapacity = location.PopulationCapacity{Reserved: 4, Limit: 100}
		require.Equal(t, []location.MeshNodeDescriptor{want}, f.meshNodes("game"))
	})
	t.Run("LS-076 paging", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		for _, rid := range []location.RoutingID{"node-c", "node-a", "node-b"} {
			d := f.mn("a")
			d.RID = rid
			f.updateMN(d, newClaim)
		}
		rids := func(items []location.MeshNodeDescriptor) []location.RoutingID {
			var out []location.RoutingID
			for _, d := range items {
				out = append(out, d.RID)
			}
			return out
		}
		p, err := f.s.ListMeshNodes(f.ctx, "game", location.PageRequest{PageSize: 2})
		require.NoError(t, err)
		require.Equal(t, []location.RoutingID{"node-a", "node-b"}, rids(p.Items))
		require.Equal(t, "2", p.ContinuationToken)
		p, err = f.s.ListMeshNodes(f.ctx, "game", location.PageRequest{PageSize: 2, ContinuationToken: p.ContinuationToken})
		require.NoError(t, err)
		require.Equal(t, []location.RoutingID{"node-c"}, rids(p.Items))
		require.Empty(t, p.ContinuationToken)
		require.Equal(t, []location.RoutingID{"node-a", "node-b", "node-c"}, rids(f.meshNodes("game")))
	})
	t.Run("LS-203 listed rows are copies", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateMN(f.mne("a"), newClaim)
		got := f.meshNodes("game")
		got[0].ObjectCapabilities[0].Limit = 1
		got[0].ChannelWeights["orders"] = 1
		got[0].SpotTypes[0] = "x"
		got[0].PopulationCapacity.SpotTypes[0].Limit = 1
		*got[0].EntrySpotID = "x"
		require.Equal(t, []location.MeshNodeDescriptor{mnAt(f.mne("a"), t0)}, f.meshNodes("game"))
	})
}
