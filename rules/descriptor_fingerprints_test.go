package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestMeshNodeFingerprints checks 02 §2.8 and A-32: which changes are
// mutable, which immutable, and which reorderings are no change at all.
func TestMeshNodeFingerprints(t *testing.T) {
	base := fixture.MN(fixture.Token("a", 1))
	base.SpotTypes = []string{"room", "lobby"}
	base.ObjectCapabilities = append(base.ObjectCapabilities, location.ObjectCapability{ObjectKind: location.ObjectUserSpot, StableType: "lobby", Policy: location.PolicyRecreate, Limit: 10})
	base.PopulationCapacity.SpotTypes = append(base.PopulationCapacity.SpotTypes, location.SpotTypeCapacity{ObjectKind: location.ObjectUserSpot, StableType: "lobby", PopulationCapacity: location.PopulationCapacity{Limit: 10}})
	lsFingerprints(t, "", base, EqualMeshNode, EqualMeshNodeImmutable, []lsFingerprintCase[location.MeshNodeDescriptor]{
		{name: "identical", change: func(*location.MeshNodeDescriptor) {}, sameFull: true, sameImmutable: true},
		{name: "updatedAt is never compared", change: func(d *location.MeshNodeDescriptor) { d.UpdatedAt = fixture.T0() }, sameFull: true, sameImmutable: true},
		{name: "spot types reordered", change: func(d *location.MeshNodeDescriptor) { d.SpotTypes = []string{"lobby", "room"} }, sameFull: true, sameImmutable: true},
		{name: "capabilities reordered", change: func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities[0], d.ObjectCapabilities[1] = d.ObjectCapabilities[1], d.ObjectCapabilities[0]
		}, sameFull: true, sameImmutable: true},
		{name: "nil and empty channel weights", change: func(d *location.MeshNodeDescriptor) {}, sameFull: true, sameImmutable: true},
		{name: "A-32 spot-type capacities reordered", change: func(d *location.MeshNodeDescriptor) {
			s := d.PopulationCapacity.SpotTypes
			s[0], s[1] = s[1], s[0]
		}, sameImmutable: true},
		{name: "revision", change: func(d *location.MeshNodeDescriptor) { d.DescriptorRevision = 4 }, sameImmutable: true},
		{name: "placement weight", change: func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 1 }, sameImmutable: true},
		{name: "actors active and reserved", change: func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Actors.Active, d.PopulationCapacity.Actors.Reserved = 5, 5
		}, sameImmutable: true},
		{name: "spots active and reserved", change: func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Spots.Active, d.PopulationCapacity.Spots.Reserved = 1, 2
		}, sameImmutable: true},
		{name: "spot-type capacity limit", change: func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.SpotTypes[0].Limit = 50 }, sameImmutable: true},
		{name: "added spot-type capacity", change: func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.SpotTypes = append(d.PopulationCapacity.SpotTypes, location.SpotTypeCapacity{ObjectKind: location.ObjectUserSpot, StableType: "x"})
		}, sameImmutable: true},
		{name: "activation active", change: func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Active = 9 }, sameImmutable: true},
		{name: "channel weight value", change: func(d *location.MeshNodeDescriptor) { d.ChannelWeights["orders"] = 1 }, sameImmutable: true},
		{name: "maintenance wave", change: func(d *location.MeshNodeDescriptor) { d.MaintenanceWave = lsPtr("wave-1") }, sameImmutable: true},
		{name: "state", change: func(d *location.MeshNodeDescriptor) { d.State = location.StateStopped }, sameImmutable: true},
		{name: "endpoint", change: func(d *location.MeshNodeDescriptor) { d.Endpoint = "tcp://10.0.0.9:7300" }},
		{name: "entry spot", change: func(d *location.MeshNodeDescriptor) { d.EntrySpotID = lsPtr("entry-9") }},
		{name: "actors limit", change: func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Actors.Limit = 99 }},
		{name: "spots limit", change: func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Spots.Limit = 99 }},
		{name: "activation limit", change: func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Limit = 99 }},
		{name: "added channel", change: func(d *location.MeshNodeDescriptor) { d.ChannelWeights["extra"] = 1 }},
		{name: "removed channel", change: func(d *location.MeshNodeDescriptor) { delete(d.ChannelWeights, "world") }},
		{name: "application version", change: func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = 2 }},
		{name: "spot types", change: func(d *location.MeshNodeDescriptor) { d.SpotTypes = []string{"room"} }},
		{name: "capability policy", change: func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Policy = location.PolicyDisabled }},
		{name: "capability limit", change: func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Limit = 99 }},
		{name: "security identity", change: func(d *location.MeshNodeDescriptor) { d.SecurityIdentity = "cluster-b" }},
		{name: "object role", change: func(d *location.MeshNodeDescriptor) {
			d.ObjectRole, d.ObjectCapabilities = location.RoleClient, nil
		}},
		{name: "lifecycle", change: func(d *location.MeshNodeDescriptor) { d.LifecycleGeneration = 8 }},
		{name: "owner", change: func(d *location.MeshNodeDescriptor) { d.OwnerID = "b" }},
		{name: "lease generation", change: func(d *location.MeshNodeDescriptor) { d.LeaseGeneration = 2 }},
	})
	t.Run("absent and empty maps and lists are equal", func(t *testing.T) {
		a, b := fixture.MN(fixture.Token("a", 1)), fixture.MN(fixture.Token("a", 1))
		a.ChannelWeights, b.ChannelWeights = nil, map[string]int64{}
		a.SpotTypes, b.SpotTypes = nil, []string{}
		a.PopulationCapacity.SpotTypes, b.PopulationCapacity.SpotTypes = nil, []location.SpotTypeCapacity{}
		require.True(t, EqualMeshNode(&a, &b))
	})
}

// TestChannelDescriptorFingerprints checks the client-server and fanout
// fingerprints behind LS-084, LS-085 and LS-091.
func TestChannelDescriptorFingerprints(t *testing.T) {
	lsFingerprints(t, "clientServer/", fixture.CS(fixture.Token("a", 1)), EqualClientServer, EqualClientServerImmutable, []lsFingerprintCase[location.ClientServerDescriptor]{
		{name: "weight", change: func(d *location.ClientServerDescriptor) { d.Weight = 50 }, sameImmutable: true},
		{name: "state", change: func(d *location.ClientServerDescriptor) { d.State = location.StateDraining }, sameImmutable: true},
		{name: "revision", change: func(d *location.ClientServerDescriptor) { d.DescriptorRevision = 2 }, sameImmutable: true},
		{name: "endpoint", change: func(d *location.ClientServerDescriptor) { d.Endpoint = "x" }},
		{name: "security identity", change: func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "x" }},
		{name: "lifecycle", change: func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 2 }},
		{name: "updatedAt", change: func(d *location.ClientServerDescriptor) { d.UpdatedAt = fixture.T0() }, sameFull: true, sameImmutable: true},
	})
	lsFingerprints(t, "fanout/", fixture.FP(fixture.Token("a", 1)), EqualFanoutPublisher, EqualFanoutPublisherImmutable, []lsFingerprintCase[location.FanoutPublisherDescriptor]{
		{name: "state", change: func(d *location.FanoutPublisherDescriptor) { d.State = location.StateDraining }, sameImmutable: true},
		{name: "revision", change: func(d *location.FanoutPublisherDescriptor) { d.DescriptorRevision = 2 }, sameImmutable: true},
		{name: "endpoint", change: func(d *location.FanoutPublisherDescriptor) { d.Endpoint = "x" }},
		{name: "lifecycle", change: func(d *location.FanoutPublisherDescriptor) { d.LifecycleGeneration = 8 }},
		{name: "owner", change: func(d *location.FanoutPublisherDescriptor) { d.OwnerID = "b" }},
		{name: "updatedAt", change: func(d *location.FanoutPublisherDescriptor) { d.UpdatedAt = fixture.T0() }, sameFull: true, sameImmutable: true},
	})
}

// lsFingerprintCase is one change to a descriptor and whether its full and
// its immutable fingerprint stay equal.
type lsFingerprintCase[D any] struct {
	name                    string
	change                  func(*D)
	sameFull, sameImmutable bool
}

// lsFingerprints applies each case's change to a deep copy of base and
// compares the copy with base by both fingerprints.
func lsFingerprints[D location.Cloner[D]](t *testing.T, prefix string, base D, full, immutable func(a, b *D) bool, cases []lsFingerprintCase[D]) {
	t.Helper()
	for _, c := range cases {
		t.Run(prefix+c.name, func(t *testing.T) {
			changed := base.Clone()
			c.change(&changed)
			require.Equal(t, c.sameFull, full(&base, &changed), "full")
			require.Equal(t, c.sameImmutable, immutable(&base, &changed), "immutable")
		})
	}
}
