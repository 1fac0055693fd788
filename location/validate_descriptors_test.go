package location_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// vMN is MN(a) of the locations catalogue (§3) with leaseGeneration 1.
func vMN() location.MeshNodeDescriptor { return fixture.MN(fixture.Token("a", 1)) }

// vDistinctCapabilities returns n server capabilities with distinct types.
func vDistinctCapabilities(n int) []location.ObjectCapability {
	caps := make([]location.ObjectCapability, n)
	for i := range caps {
		caps[i] = location.ObjectCapability{
			ObjectKind: location.ObjectUserSpot, StableType: fmt.Sprintf("type-%d", i), Policy: location.PolicyRecreate, Limit: 1,
		}
	}
	return caps
}

func vStrPtr(s string) *string { return &s }

func TestValidateMeshNode(t *testing.T) {
	vWriteMutations(t, vMN, location.ValidateMeshNode, []vWriteCase[location.MeshNodeDescriptor]{
		{"fixture is valid", func(*location.MeshNodeDescriptor) {}, location.IntentNewClaim, vOK()},
		{"LS-036 validation precedes the lease check", func(d *location.MeshNodeDescriptor) { d.MeshName = ""; d.OwnerID = "ghost" }, location.IntentNewClaim, vType(location.CodeMeshNodeIdentity)},

		// LS-037: one row per mutation, in the catalogue's order.
		{"LS-037/01 meshName empty", func(d *location.MeshNodeDescriptor) { d.MeshName = "" }, location.IntentNewClaim, vType(location.CodeMeshNodeIdentity)},
		{"LS-037/02 meshName 256 bytes", func(d *location.MeshNodeDescriptor) { d.MeshName = strings.Repeat("m", 256) }, location.IntentNewClaim, vType(location.CodeMeshNodeIdentity)},
		{"LS-037/03 ownerId with NUL", func(d *location.MeshNodeDescriptor) { d.OwnerID = "a\x00" }, location.IntentNewClaim, vType(location.CodeMeshNodeIdentity)},
		{"LS-037/04 client with entry spot", func(d *location.MeshNodeDescriptor) {
			d.ObjectRole = location.RoleClient
			d.ObjectCapabilities = nil
			d.EntrySpotID = vStrPtr("e")
		}, location.IntentNewClaim, vType(location.CodeMeshNodeEntrySpotRole)},
		{"LS-037/05 client with empty entry spot", func(d *location.MeshNodeDescriptor) {
			d.ObjectRole = location.RoleClient
			d.ObjectCapabilities = nil
			d.EntrySpotID = vStrPtr("")
		}, location.IntentNewClaim, vType(location.CodeMeshNodeEntrySpotRole)},
		{"LS-037/06 server with empty entry spot", func(d *location.MeshNodeDescriptor) { d.EntrySpotID = vStrPtr("") }, location.IntentNewClaim, vType(location.CodeMeshNodeEntrySpotText)},
		{"LS-037/07 lifecycleGeneration 0", func(d *location.MeshNodeDescriptor) { d.LifecycleGeneration = 0 }, location.IntentNewClaim, vRange(location.CodeMeshNodeGenerations)},
		{"LS-037/08 descriptorRevision 0", func(d *location.MeshNodeDescriptor) { d.DescriptorRevision = 0 }, location.IntentNewClaim, vRange(location.CodeMeshNodeGenerations)},
		{"LS-037/09 leaseGeneration 0", func(d *location.MeshNodeDescriptor) { d.LeaseGeneration = 0 }, location.IntentNewClaim, vRange(location.CodeMeshNodeGenerations)},
		{"LS-037/10 applicationVersion -1", func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeGenerations)},
		{"LS-037/11 actors over limit", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 60, Reserved: 50, Limit: 100}
		}, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/12 spots limit -1", func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.Spots.Limit = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/13 spot type over limit", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.SpotTypes[0].PopulationCapacity = location.PopulationCapacity{Active: 101, Limit: 100}
		}, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/14 activation limit 0", func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Limit = 0 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/15 activation active over limit", func(d *location.MeshNodeDescriptor) {
			d.ActivationConcurrency = location.ActivationConcurrency{Active: 5, Limit: 4}
		}, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/16 placementWeight 10001", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 10001 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/17 placementWeight -1", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/18 1025 capabilities", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities = vDistinctCapabilities(1025) }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/19 client with a capability", func(d *location.MeshNodeDescriptor) { d.ObjectRole = location.RoleClient }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"LS-037/20 capability stableType empty", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].StableType = "" }, location.IntentNewClaim, vType(location.CodeMeshNodeCapabilityType)},
		{"LS-037/21 duplicate capability", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = append(d.ObjectCapabilities, d.ObjectCapabilities[0])
		}, location.IntentNewClaim, vType(location.CodeMeshNodeCapabilityDuplicate)},
		{"LS-037/22 snapshot policy without adapter", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Policy = location.PolicySnapshot }, location.IntentNewClaim, vType(location.CodeMeshNodeCapabilitySnapshot)},
		{"LS-037/23 recreate policy with adapter", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].HasSnapshotAdapter = true }, location.IntentNewClaim, vType(location.CodeMeshNodeCapabilitySnapshot)},
		{"LS-037/24 actor capability with a limit", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = []location.ObjectCapability{{ObjectKind: location.ObjectActor, StableType: "player", Policy: location.PolicyDisabled, Limit: 5}}
		}, location.IntentNewClaim, vRange(location.CodeMeshNodeCapabilityLimit)},
		{"LS-037/25 capability limit -1", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Limit = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapabilityLimit)},

		// LS-038: boundaries that are accepted.
		{"LS-038 actors over a zero limit", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 60, Reserved: 50}
		}, location.IntentNewClaim, vOK()},
		{"LS-038 spot type over a zero limit", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.SpotTypes[0].PopulationCapacity = location.PopulationCapacity{Active: 7}
		}, location.IntentNewClaim, vOK()},
		{"LS-038 placementWeight 0", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 0 }, location.IntentNewClaim, vOK()},
		{"LS-038 placementWeight 10000", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = 10000 }, location.IntentNewClaim, vOK()},
		{"LS-038 client without capabilities or entry spot", func(d *location.MeshNodeDescriptor) {
			d.ObjectRole = location.RoleClient
			d.ObjectCapabilities = nil
		}, location.IntentNewClaim, vOK()},
		{"LS-038 1024 capabilities", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities = vDistinctCapabilities(1024) }, location.IntentNewClaim, vOK()},
		{"LS-038 applicationVersion 0", func(d *location.MeshNodeDescriptor) { d.ApplicationVersion = 0 }, location.IntentNewClaim, vOK()},
		{"LS-038 actor capability with limit 0", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = []location.ObjectCapability{{ObjectKind: location.ObjectActor, StableType: "player", Policy: location.PolicyDisabled}}
		}, location.IntentNewClaim, vOK()},
		{"LS-038 snapshot policy with adapter", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities[0].Policy = location.PolicySnapshot
			d.ObjectCapabilities[0].HasSnapshotAdapter = true
		}, location.IntentNewClaim, vOK()},
		{"LS-038 meshName 255 bytes", func(d *location.MeshNodeDescriptor) { d.MeshName = strings.Repeat("m", 255) }, location.IntentNewClaim, vOK()},

		// Further rules and boundaries of 02 §2.1.
		{"ownerId 256 bytes", func(d *location.MeshNodeDescriptor) { d.OwnerID = strings.Repeat("o", 256) }, location.IntentNewClaim, vType(location.CodeMeshNodeIdentity)},
		{"meshName invalid UTF-8", func(d *location.MeshNodeDescriptor) { d.MeshName = "g\xffme" }, location.IntentNewClaim, vType(location.CodeMeshNodeIdentity)},
		{"meshName of spaces is DText", func(d *location.MeshNodeDescriptor) { d.MeshName = "  " }, location.IntentNewClaim, vOK()},
		{"server entry spot 255 bytes", func(d *location.MeshNodeDescriptor) { d.EntrySpotID = vStrPtr(strings.Repeat("e", 255)) }, location.IntentNewClaim, vOK()},
		{"server entry spot 256 bytes", func(d *location.MeshNodeDescriptor) { d.EntrySpotID = vStrPtr(strings.Repeat("e", 256)) }, location.IntentNewClaim, vType(location.CodeMeshNodeEntrySpotText)},
		{"server entry spot with NUL", func(d *location.MeshNodeDescriptor) { d.EntrySpotID = vStrPtr("e\x00") }, location.IntentNewClaim, vType(location.CodeMeshNodeEntrySpotText)},
		{"role none with entry spot", func(d *location.MeshNodeDescriptor) {
			d.ObjectRole = location.RoleNone
			d.ObjectCapabilities = nil
			d.EntrySpotID = vStrPtr("entry-1")
		}, location.IntentNewClaim, vType(location.CodeMeshNodeEntrySpotRole)},
		{"generations at the maximum", func(d *location.MeshNodeDescriptor) {
			d.LifecycleGeneration, d.DescriptorRevision, d.LeaseGeneration, d.ApplicationVersion =
				location.MaxGeneration, location.MaxGeneration, location.MaxGeneration, location.MaxGeneration
		}, location.IntentNewClaim, vOK()},
		{"negative lease generation", func(d *location.MeshNodeDescriptor) { d.LeaseGeneration = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeGenerations)},
		{"counts at the safe maximum", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Spots = location.PopulationCapacity{Active: location.MaxSafeInteger}
			d.ActivationConcurrency = location.ActivationConcurrency{Active: location.MaxSafeInteger, Limit: location.MaxSafeInteger}
			d.ObjectCapabilities[0].Limit = location.MaxSafeInteger
		}, location.IntentNewClaim, vOK()},
		{"count over the safe maximum", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Spots.Reserved = location.MaxSafeInteger + 1
		}, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"spot type active negative", func(d *location.MeshNodeDescriptor) { d.PopulationCapacity.SpotTypes[0].Active = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"actors exactly at the limit", func(d *location.MeshNodeDescriptor) {
			d.PopulationCapacity.Actors = location.PopulationCapacity{Active: 50, Reserved: 50, Limit: 100}
		}, location.IntentNewClaim, vOK()},
		{"activation active negative", func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Active = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"activation limit over the safe maximum", func(d *location.MeshNodeDescriptor) { d.ActivationConcurrency.Limit = location.MaxSafeInteger + 1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"capability limit over the safe maximum", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].Limit = location.MaxSafeInteger + 1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapabilityLimit)},
		{"capability stableType 256 bytes", func(d *location.MeshNodeDescriptor) { d.ObjectCapabilities[0].StableType = strings.Repeat("t", 256) }, location.IntentNewClaim, vType(location.CodeMeshNodeCapabilityType)},
		{"same stable type under two kinds", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = append(d.ObjectCapabilities, location.ObjectCapability{
				ObjectKind: location.ObjectUserSpot, StableType: "room", Policy: location.PolicyRecreate,
			})
		}, location.IntentNewClaim, vOK()},
		{"not validated: rid, endpoint, identity, spot types, weights, state", func(d *location.MeshNodeDescriptor) {
			d.RID, d.Endpoint, d.SecurityIdentity = "", "", ""
			d.SpotTypes = []string{"", "x\x00"}
			d.ChannelWeights = map[string]int64{"": -5}
			d.MaintenanceWave = vStrPtr("")
			d.State = 99
			d.ObjectRole = "server"
			d.PopulationCapacity.SpotTypes[0].ObjectKind = "nonsense"
		}, location.IntentNewClaim, vOK()},

		// First violation wins, in the reference's order.
		{"identity before entry spot", func(d *location.MeshNodeDescriptor) { d.MeshName = ""; d.EntrySpotID = vStrPtr("") }, location.IntentNewClaim, vType(location.CodeMeshNodeIdentity)},
		{"entry spot before generations", func(d *location.MeshNodeDescriptor) { d.EntrySpotID = vStrPtr(""); d.LifecycleGeneration = 0 }, location.IntentNewClaim, vType(location.CodeMeshNodeEntrySpotText)},
		{"generations before capacity", func(d *location.MeshNodeDescriptor) { d.LifecycleGeneration = 0; d.PlacementWeight = -1 }, location.IntentNewClaim, vRange(location.CodeMeshNodeGenerations)},
		{"capacity before capabilities", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = -1; d.ObjectCapabilities[0].StableType = "" }, location.IntentNewClaim, vRange(location.CodeMeshNodeCapacity)},
		{"capabilities in list order", func(d *location.MeshNodeDescriptor) {
			d.ObjectCapabilities = []location.ObjectCapability{
				{ObjectKind: location.ObjectUserSpot, StableType: "a", Policy: location.PolicySnapshot},
				{ObjectKind: location.ObjectUserSpot, StableType: ""},
			}
		}, location.IntentNewClaim, vType(location.CodeMeshNodeCapabilitySnapshot)},
		{"reference rules before the intent", func(d *location.MeshNodeDescriptor) { d.PlacementWeight = -1 }, 0, vRange(location.CodeMeshNodeCapacity)},

		// Go rules: text is UTF-8, intent is 1..3 (LS-207).
		{"endpoint invalid UTF-8", func(d *location.MeshNodeDescriptor) { d.Endpoint = "tcp://\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"channel weight key invalid UTF-8", func(d *location.MeshNodeDescriptor) { d.ChannelWeights["\xfe"] = 1 }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"spot type entry invalid UTF-8", func(d *location.MeshNodeDescriptor) { d.SpotTypes = []string{"\xc3"} }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"opaque rid bytes are fine", func(d *location.MeshNodeDescriptor) { d.RID = "\x00\xff\xfe" }, location.IntentNewClaim, vOK()},
		{"LS-207 intent 0", func(*location.MeshNodeDescriptor) {}, 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", func(*location.MeshNodeDescriptor) {}, 4, vRange(location.CodeWriteIntent)},
		{"intent Renew", func(*location.MeshNodeDescriptor) {}, location.IntentRenew, vOK()},
		{"intent Takeover", func(*location.MeshNodeDescriptor) {}, location.IntentTakeover, vOK()},
	})
}

// vCS is CS(a) of the locations catalogue with leaseGeneration 1.
func vCS() location.ClientServerDescriptor { return fixture.CS(fixture.Token("a", 1)) }

func TestValidateClientServer(t *testing.T) {
	vWriteMutations(t, vCS, location.ValidateClientServer, []vWriteCase[location.ClientServerDescriptor]{
		{"fixture is valid", func(*location.ClientServerDescriptor) {}, location.IntentNewClaim, vOK()},
		{"LS-081 channelName empty", func(d *location.ClientServerDescriptor) { d.ChannelName = "" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"LS-081 serverRid empty", func(d *location.ClientServerDescriptor) { d.ServerRID = "" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"LS-081 endpoint empty", func(d *location.ClientServerDescriptor) { d.Endpoint = "" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"LS-081 securityIdentity empty", func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"LS-081 channelName with NUL", func(d *location.ClientServerDescriptor) { d.ChannelName = "ord\x00ers" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"LS-081 lifecycleGeneration 0", func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 0 }, location.IntentNewClaim, vRange(location.CodeClientServerGenerations)},
		{"LS-081 descriptorRevision 0", func(d *location.ClientServerDescriptor) { d.DescriptorRevision = 0 }, location.IntentNewClaim, vRange(location.CodeClientServerGenerations)},
		{"LS-081 leaseGeneration 0", func(d *location.ClientServerDescriptor) { d.LeaseGeneration = 0 }, location.IntentNewClaim, vRange(location.CodeClientServerGenerations)},
		{"LS-081 weight -1", func(d *location.ClientServerDescriptor) { d.Weight = -1 }, location.IntentNewClaim, vRange(location.CodeClientServerWeight)},
		{"LS-081 weight 10001", func(d *location.ClientServerDescriptor) { d.Weight = 10001 }, location.IntentNewClaim, vRange(location.CodeClientServerWeight)},
		{"LS-081 weight 0", func(d *location.ClientServerDescriptor) { d.Weight = 0 }, location.IntentNewClaim, vOK()},
		{"LS-081 weight 10000", func(d *location.ClientServerDescriptor) { d.Weight = 10000 }, location.IntentNewClaim, vOK()},
		{"ownerId empty", func(d *location.ClientServerDescriptor) { d.OwnerID = "" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"endpoint 256 bytes", func(d *location.ClientServerDescriptor) { d.Endpoint = strings.Repeat("e", 256) }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"serverRid 255 bytes", func(d *location.ClientServerDescriptor) { d.ServerRID = location.RoutingID(strings.Repeat("r", 255)) }, location.IntentNewClaim, vOK()},
		{"serverRid 256 bytes", func(d *location.ClientServerDescriptor) { d.ServerRID = location.RoutingID(strings.Repeat("r", 256)) }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"serverRid with NUL", func(d *location.ClientServerDescriptor) { d.ServerRID = "srv\x00" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"opaque serverRid bytes", func(d *location.ClientServerDescriptor) { d.ServerRID = "\xff\xfe\x01" }, location.IntentNewClaim, vOK()},
		{"securityIdentity invalid UTF-8", func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "\xff" }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"generations at the maximum", func(d *location.ClientServerDescriptor) {
			d.LifecycleGeneration, d.DescriptorRevision, d.LeaseGeneration = location.MaxGeneration, location.MaxGeneration, location.MaxGeneration
		}, location.IntentNewClaim, vOK()},
		{"identity before generations", func(d *location.ClientServerDescriptor) { d.OwnerID = ""; d.LeaseGeneration = 0 }, location.IntentNewClaim, vType(location.CodeClientServerIdentity)},
		{"generations before weight", func(d *location.ClientServerDescriptor) { d.LeaseGeneration = 0; d.Weight = -1 }, location.IntentNewClaim, vRange(location.CodeClientServerGenerations)},
		{"weight before intent", func(d *location.ClientServerDescriptor) { d.Weight = -1 }, 9, vRange(location.CodeClientServerWeight)},
		{"LS-207 intent 0", func(*location.ClientServerDescriptor) {}, 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", func(*location.ClientServerDescriptor) {}, 4, vRange(location.CodeWriteIntent)},
	})
}

// vFP is FP(a) of the locations catalogue with leaseGeneration 1.
func vFP() location.FanoutPublisherDescriptor { return fixture.FP(fixture.Token("a", 1)) }

func TestValidateFanoutPublisher(t *testing.T) {
	vWriteMutations(t, vFP, location.ValidateFanoutPublisher, []vWriteCase[location.FanoutPublisherDescriptor]{
		{"fixture is valid", func(*location.FanoutPublisherDescriptor) {}, location.IntentNewClaim, vOK()},
		{"LS-092 endpoint empty", func(d *location.FanoutPublisherDescriptor) { d.Endpoint = "" }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"LS-092 securityIdentity empty", func(d *location.FanoutPublisherDescriptor) { d.SecurityIdentity = "" }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"LS-092 publisherRid empty", func(d *location.FanoutPublisherDescriptor) { d.PublisherRID = "" }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"LS-092 lifecycleGeneration 0", func(d *location.FanoutPublisherDescriptor) { d.LifecycleGeneration = 0 }, location.IntentNewClaim, vRange(location.CodeFanoutGenerations)},
		{"channelName empty", func(d *location.FanoutPublisherDescriptor) { d.ChannelName = "" }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"channelName 256 bytes", func(d *location.FanoutPublisherDescriptor) { d.ChannelName = strings.Repeat("c", 256) }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"channelName 255 bytes", func(d *location.FanoutPublisherDescriptor) { d.ChannelName = strings.Repeat("c", 255) }, location.IntentNewClaim, vOK()},
		{"ownerId with NUL", func(d *location.FanoutPublisherDescriptor) { d.OwnerID = "\x00" }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"publisherRid with NUL", func(d *location.FanoutPublisherDescriptor) { d.PublisherRID = "\x00pub" }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"descriptorRevision 0", func(d *location.FanoutPublisherDescriptor) { d.DescriptorRevision = 0 }, location.IntentNewClaim, vRange(location.CodeFanoutGenerations)},
		{"leaseGeneration -1", func(d *location.FanoutPublisherDescriptor) { d.LeaseGeneration = -1 }, location.IntentNewClaim, vRange(location.CodeFanoutGenerations)},
		{"identity before generations", func(d *location.FanoutPublisherDescriptor) { d.Endpoint = ""; d.LifecycleGeneration = 0 }, location.IntentNewClaim, vType(location.CodeFanoutIdentity)},
		{"LS-207 intent 0", func(*location.FanoutPublisherDescriptor) {}, 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", func(*location.FanoutPublisherDescriptor) {}, 4, vRange(location.CodeWriteIntent)},
		{"intent Takeover", func(*location.FanoutPublisherDescriptor) {}, location.IntentTakeover, vOK()},
	})
}
