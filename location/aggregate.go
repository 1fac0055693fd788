package location

// AggregateParticipant is one authority record an aggregate rewrites.
type AggregateParticipant struct {
	AuthorityKey         AuthorityKey `json:"authorityKey"`
	ExpectedStoreVersion StoreVersion `json:"expectedStoreVersion"`
	OwnerTransition      Transition   `json:"ownerTransition"`
	AuthorityPayload     []byte       `json:"authorityPayload"`
	MembershipMutation   []byte       `json:"membershipMutation"`
}

// AggregatePrepareRequest prepares an aggregate: participants in ascending
// byte order of their keys, no duplicates.
type AggregatePrepareRequest struct {
	AggregateID                         string                 `json:"aggregateId"`
	AggregateGeneration                 int64                  `json:"aggregateGeneration"`
	Participants                        []AggregateParticipant `json:"participants"`
	InventoryDigest                     []byte                 `json:"inventoryDigest"`
	TargetDescriptor                    MeshNodeKey            `json:"targetDescriptor"`
	TargetDescriptorLifecycleGeneration int64                  `json:"targetDescriptorLifecycleGeneration"`
	Capacity                            CapacityVector         `json:"capacity"`
	TargetOwner                         OwnerToken             `json:"targetOwner"`
}

// AggregateFence identifies a prepared aggregate.
type AggregateFence struct {
	AggregateID         string `json:"aggregateId"`
	AggregateGeneration int64  `json:"aggregateGeneration"`
}

// AggregatePrepareResult is the outcome of PrepareAggregate: KindPrepared or
// KindAlreadyPrepared (Fence), KindConflict, KindStale, or
// KindGenerationExhausted (declared, never produced).
// CommitAggregate answers KindCommitted, KindAlreadyCommitted, KindStale or
// KindGenerationExhausted; AbortAggregate KindAborted, KindAlreadyAborted or
// KindStale.
type AggregatePrepareResult struct {
	Kind  ResultKind
	Fence AggregateFence
}
