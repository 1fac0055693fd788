package location

import "time"

// OwnerToken identifies one incarnation of an owner: its id and the generation
// of the owner lease it holds.
type OwnerToken struct {
	OwnerID         string `json:"ownerId"`
	LeaseGeneration int64  `json:"leaseGeneration"`
}

// OwnerLeaseClaimResult is the outcome of ClaimOwnerLease. Kind is
// KindClaimed (Token, LeaseExpiresAt and StoreNow are set), KindConflict or
// KindGenerationExhausted.
type OwnerLeaseClaimResult struct {
	Kind           ResultKind
	Token          OwnerToken
	LeaseExpiresAt time.Time
	StoreNow       time.Time
}

// OwnerLeaseRenewResult is the outcome of RenewOwnerLease. Kind is KindRenewed
// (LeaseExpiresAt and StoreNow are set) or KindStale.
type OwnerLeaseRenewResult struct {
	Kind           ResultKind
	LeaseExpiresAt time.Time
	StoreNow       time.Time
}

// OwnerLeaseReadResult is the outcome of ReadOwnerLease. Kind is KindFound
// (Token, LeaseExpiresAt and StoreNow are set) or KindMissing.
type OwnerLeaseReadResult struct {
	Kind           ResultKind
	Token          OwnerToken
	LeaseExpiresAt time.Time
	StoreNow       time.Time
}

// ReleaseOwnerLease answers KindReleased or KindStale.
