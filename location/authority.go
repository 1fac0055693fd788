package location

import "time"

// AuthorityKey is the canonical "zla1:" text of an object's authority record
// (see package keys for the codec).
type AuthorityKey string

// StoreVersion is the opaque version of an authority record. Compare only
// by equality with a value the store returned.
type StoreVersion string

// AllocationState is the state of a placement allocation.
type AllocationState string

// Allocation states.
const (
	AllocationReserved AllocationState = "reserved"
	AllocationActive   AllocationState = "active"
)

// SpotTypeDelta is the typed part of a capacity vector.
type SpotTypeDelta struct {
	ObjectKind ObjectKind `json:"objectKind"` // user_spot or instance_spot
	StableType string     `json:"stableType"`
	Count      int64      `json:"count"`
}

// CapacityVector is the capacity one placement uses.
type CapacityVector struct {
	Actors   int64          `json:"actors"`
	Spots    int64          `json:"spots"`
	SpotType *SpotTypeDelta `json:"spotType,omitempty"`
}

// PlacementAllocation says where an object is placed and what it uses.
type PlacementAllocation struct {
	State                         AllocationState `json:"state"`
	ObjectKind                    ObjectKind      `json:"objectKind"`
	StableType                    string          `json:"stableType"`
	Descriptor                    MeshNodeKey     `json:"descriptor"`
	DescriptorLifecycleGeneration int64           `json:"descriptorLifecycleGeneration"`
	Capacity                      CapacityVector  `json:"capacity"`
}

// PendingCreation is the creation reservation of a reserved record.
type PendingCreation struct {
	ReservationID           string `json:"reservationId"`
	RequestContentReference string `json:"requestContentReference"`
	RequestSHA256           []byte `json:"requestSha256"`
	RequestEncodedSize      int64  `json:"requestEncodedSize"`
}

// AuthoritySnapshot is one authority record as read.
type AuthoritySnapshot struct {
	StoreVersion             StoreVersion
	Payload                  []byte
	ObjectGeneration         int64
	AuthorityOwnerGeneration int64
	Owner                    OwnerToken
	Allocation               PlacementAllocation
	// PendingCreation is set iff Allocation.State is AllocationReserved.
	PendingCreation *PendingCreation
	StoreNow        time.Time
}

// AuthorityReadResult is the outcome of a read: Kind KindMissing (StoreNow
// set) or KindSnapshot (Snapshot set; StoreNow equals Snapshot.StoreNow).
type AuthorityReadResult struct {
	Kind     ResultKind
	Snapshot *AuthoritySnapshot
	StoreNow time.Time
}

// MutationKind is the kind of a compare-exchange mutation.
type MutationKind string

// Mutation kinds.
const (
	MutationPut              MutationKind = "put"
	MutationRebindOwnerLease MutationKind = "rebindOwnerLease"
	MutationRestore          MutationKind = "restore"
	MutationDelete           MutationKind = "delete"
)

// Transition is the owner transition of a put or an aggregate participant.
type Transition string

// Owner transitions.
const (
	TransitionPreserve Transition = "preserve"
	TransitionNewOwner Transition = "newOwner"
)

// RelocationFence is the fence of a relocation capacity reservation (its
// reservation id).
type RelocationFence string

// AuthorityMutation is what CompareExchangeAuthority does on success.
//   - put/preserve: Payload; no TargetOwner, no RelocationFence.
//   - put/newOwner: Payload, TargetOwner and RelocationFence.
//   - rebindOwnerLease: Payload, ExpectedOwner and TargetOwner (same owner id,
//     different positive lease generations).
//   - restore: Payload and ExpectedOwner.
//   - delete: nothing.
type AuthorityMutation struct {
	Kind            MutationKind
	Payload         []byte
	Transition      Transition
	TargetOwner     *OwnerToken
	RelocationFence *RelocationFence
	ExpectedOwner   *OwnerToken
}

// CompareExchangeResult is the outcome of CompareExchangeAuthority:
//   - KindStored: Stored is the new snapshot;
//   - KindDeleted: DeletedVersion and StoreNow;
//   - KindConflict: Current is the current read result;
//   - KindGenerationExhausted: nothing else.
type CompareExchangeResult struct {
	Kind           ResultKind
	Stored         *AuthoritySnapshot
	DeletedVersion StoreVersion
	StoreNow       time.Time
	Current        *AuthorityReadResult
}

// AuthorityEntry is one listed record.
type AuthorityEntry struct {
	Key      AuthorityKey
	Snapshot AuthoritySnapshot
}

// AuthorityScanResult is one page of ListAuthorities: Kind KindPage (Items,
// and NextCursor non-empty iff more records remain) or KindScanExpired.
type AuthorityScanResult struct {
	Kind       ResultKind
	Items      []AuthorityEntry
	NextCursor string
}
