package rules

import (
	"maps"
	"slices"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Deep copies of location rows. Stores copy every value on the way in
// (decisions store copies of the caller's input) and on the way out (reads
// return copies), so no caller can reach a stored value.

// CloneMeshNode returns a deep copy of d.
func CloneMeshNode(d location.MeshNodeDescriptor) location.MeshNodeDescriptor {
	d.EntrySpotID = cloneString(d.EntrySpotID)
	d.PopulationCapacity.SpotTypes = slices.Clone(d.PopulationCapacity.SpotTypes)
	d.ChannelWeights = maps.Clone(d.ChannelWeights)
	d.SpotTypes = slices.Clone(d.SpotTypes)
	d.ObjectCapabilities = slices.Clone(d.ObjectCapabilities)
	d.MaintenanceWave = cloneString(d.MaintenanceWave)
	return d
}

// CloneClientServer returns a copy of d (the type holds no references; the
// function exists for symmetry).
func CloneClientServer(d location.ClientServerDescriptor) location.ClientServerDescriptor { return d }

// CloneFanoutPublisher returns a copy of d (the type holds no references).
func CloneFanoutPublisher(d location.FanoutPublisherDescriptor) location.FanoutPublisherDescriptor {
	return d
}

// ClonePeer returns a deep copy of p.
func ClonePeer(p location.PeerLocation) location.PeerLocation {
	if p.NodeRID != nil {
		rid := *p.NodeRID
		p.NodeRID = &rid
	}
	p.Metadata = maps.Clone(p.Metadata)
	p.Capabilities = slices.Clone(p.Capabilities)
	return p
}

// CloneSpot returns a copy of s (the type holds no references).
func CloneSpot(s location.SpotLocation) location.SpotLocation { return s }

// CloneActor returns a copy of a (the type holds no references).
func CloneActor(a location.ActorLocation) location.ActorLocation { return a }

// CloneRoute returns a deep copy of r.
func CloneRoute(r location.RouteLocation) location.RouteLocation {
	r.Value = slices.Clone(r.Value)
	return r
}

// CloneTransferRecord returns a deep copy of r.
func CloneTransferRecord(r location.ActorTransferRecord) location.ActorTransferRecord {
	r.Participants = slices.Clone(r.Participants)
	return r
}

// cloneString copies an optional string.
func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}
