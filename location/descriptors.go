package location

import "time"

// PopulationCapacity is a slot count: active and reserved slots and a limit
// (0 = unlimited for validation).
type PopulationCapacity struct {
	Active   int64 `json:"active"`
	Reserved int64 `json:"reserved"`
	Limit    int64 `json:"limit"`
}

// SpotTypeCapacity is the capacity a node offers for one spot type.
type SpotTypeCapacity struct {
	ObjectKind ObjectKind `json:"objectKind"` // user_spot or instance_spot; not validated
	StableType string     `json:"stableType"` // not validated
	PopulationCapacity
}

// Population is a mesh node's published population capacity.
type Population struct {
	Actors    PopulationCapacity `json:"actors"`
	Spots     PopulationCapacity `json:"spots"`
	SpotTypes []SpotTypeCapacity `json:"spotTypes"`
}

// ActivationConcurrency bounds concurrent activations on a node.
type ActivationConcurrency struct {
	Active int64 `json:"active"`
	Limit  int64 `json:"limit"`
}

// ObjectCapability says a node can host objects of a kind and stable type.
type ObjectCapability struct {
	ObjectKind         ObjectKind        `json:"objectKind"`
	StableType         string            `json:"stableType"`
	Policy             MaintenancePolicy `json:"policy"`
	HasSnapshotAdapter bool              `json:"hasSnapshotAdapter"`
	Limit              int64             `json:"limit"`
}

// MeshNodeKey identifies a mesh-node descriptor. Authority allocations use it
// as their descriptor key.
type MeshNodeKey struct {
	MeshName string    `json:"meshName"`
	RID      RoutingID `json:"rid"`
}

// MeshNodeDescriptor is a RouteMesh node's discovery descriptor (table
// "meshNodes", key (MeshName, RID)).
type MeshNodeDescriptor struct {
	MeshName              string                `json:"meshName"`
	RID                   RoutingID             `json:"rid"`
	LifecycleGeneration   int64                 `json:"lifecycleGeneration"`
	DescriptorRevision    int64                 `json:"descriptorRevision"`
	Endpoint              string                `json:"endpoint"`
	ObjectRole            ObjectRole            `json:"objectRole"`
	EntrySpotID           *string               `json:"entrySpotId,omitempty"`
	PlacementWeight       int64                 `json:"placementWeight"`
	PopulationCapacity    Population            `json:"populationCapacity"`
	ActivationConcurrency ActivationConcurrency `json:"activationConcurrency"`
	ChannelWeights        map[string]int64      `json:"channelWeights"`
	ApplicationVersion    int64                 `json:"applicationVersion"`
	SpotTypes             []string              `json:"spotTypes"`
	ObjectCapabilities    []ObjectCapability    `json:"objectCapabilities"`
	MaintenanceWave       *string               `json:"maintenanceWave,omitempty"`
	State                 RuntimeState          `json:"state"`
	SecurityIdentity      string                `json:"securityIdentity"`
	OwnerID               string                `json:"ownerId"`
	LeaseGeneration       int64                 `json:"leaseGeneration"`
	UpdatedAt             time.Time             `json:"updatedAt"`
}

// Key returns the descriptor's key.
func (d *MeshNodeDescriptor) Key() MeshNodeKey { return MeshNodeKey{MeshName: d.MeshName, RID: d.RID} }

// Owner returns the descriptor's owner token.
func (d *MeshNodeDescriptor) Owner() OwnerToken {
	return OwnerToken{OwnerID: d.OwnerID, LeaseGeneration: d.LeaseGeneration}
}

// ClientServerKey identifies a client-server server descriptor.
type ClientServerKey struct {
	ChannelName string    `json:"channelName"`
	ServerRID   RoutingID `json:"serverRid"`
}

// ClientServerDescriptor is a client-server channel's server descriptor
// (table "clientServers", key (ChannelName, ServerRID)).
type ClientServerDescriptor struct {
	ChannelName         string       `json:"channelName"`
	ServerRID           RoutingID    `json:"serverRid"`
	LifecycleGeneration int64        `json:"lifecycleGeneration"`
	DescriptorRevision  int64        `json:"descriptorRevision"`
	Endpoint            string       `json:"endpoint"`
	Weight              int64        `json:"weight"`
	State               RuntimeState `json:"state"`
	SecurityIdentity    string       `json:"securityIdentity"`
	OwnerID             string       `json:"ownerId"`
	LeaseGeneration     int64        `json:"leaseGeneration"`
	UpdatedAt           time.Time    `json:"updatedAt"`
}

// Key returns the descriptor's key.
func (d *ClientServerDescriptor) Key() ClientServerKey {
	return ClientServerKey{ChannelName: d.ChannelName, ServerRID: d.ServerRID}
}

// Owner returns the descriptor's owner token.
func (d *ClientServerDescriptor) Owner() OwnerToken {
	return OwnerToken{OwnerID: d.OwnerID, LeaseGeneration: d.LeaseGeneration}
}

// FanoutPublisherKey identifies a fanout publisher descriptor.
type FanoutPublisherKey struct {
	ChannelName  string    `json:"channelName"`
	PublisherRID RoutingID `json:"publisherRid"`
}

// FanoutPublisherDescriptor is a fanout channel's publisher descriptor (table
// "fanoutPublishers", key (ChannelName, PublisherRID)).
type FanoutPublisherDescriptor struct {
	ChannelName         string       `json:"channelName"`
	PublisherRID        RoutingID    `json:"publisherRid"`
	LifecycleGeneration int64        `json:"lifecycleGeneration"`
	DescriptorRevision  int64        `json:"descriptorRevision"`
	Endpoint            string       `json:"endpoint"`
	State               RuntimeState `json:"state"`
	SecurityIdentity    string       `json:"securityIdentity"`
	OwnerID             string       `json:"ownerId"`
	LeaseGeneration     int64        `json:"leaseGeneration"`
	UpdatedAt           time.Time    `json:"updatedAt"`
}

// Key returns the descriptor's key.
func (d *FanoutPublisherDescriptor) Key() FanoutPublisherKey {
	return FanoutPublisherKey{ChannelName: d.ChannelName, PublisherRID: d.PublisherRID}
}

// Owner returns the descriptor's owner token.
func (d *FanoutPublisherDescriptor) Owner() OwnerToken {
	return OwnerToken{OwnerID: d.OwnerID, LeaseGeneration: d.LeaseGeneration}
}
