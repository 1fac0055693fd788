package location

// RelocationReservationRequest reserves capacity on a relocation target for
// one authority record.
type RelocationReservationRequest struct {
	ReservationID                 string         `json:"reservationId"`
	AuthorityKey                  AuthorityKey   `json:"authorityKey"`
	ExpectedStoreVersion          StoreVersion   `json:"expectedStoreVersion"`
	ObjectKind                    ObjectKind     `json:"objectKind"`
	StableType                    string         `json:"stableType"`
	SourceDescriptor              MeshNodeKey    `json:"sourceDescriptor"`
	SourceNodeLifecycleGeneration int64          `json:"sourceNodeLifecycleGeneration"`
	SourceOwner                   OwnerToken     `json:"sourceOwner"`
	TargetDescriptor              MeshNodeKey    `json:"targetDescriptor"`
	TargetNodeLifecycleGeneration int64          `json:"targetNodeLifecycleGeneration"`
	TargetOwner                   OwnerToken     `json:"targetOwner"`
	Capacity                      CapacityVector `json:"capacity"`
}

// RelocationReserveResult is the outcome of ReserveRelocationCapacity:
// KindReserved or KindAlreadyReserved (Fence), KindConflict (Current),
// KindTargetUnavailable or KindPlacementCapacityExhausted.
// AbortRelocationCapacity answers KindAborted, KindAlreadyAborted,
// KindAlreadyCommitted or KindStale.
type RelocationReserveResult struct {
	Kind    ResultKind
	Fence   RelocationFence
	Current *AuthorityReadResult
}
