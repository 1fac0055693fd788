package location

import "time"

// TransferState is an actor transfer's state.
type TransferState string

// Transfer states.
const (
	TransferPrepared  TransferState = "prepared"
	TransferCommitted TransferState = "committed"
	TransferActivated TransferState = "activated"
	TransferAborted   TransferState = "aborted"
)

// TransferWriteStatus is the outcome of an actor-transfer write.
// TransferIgnoredStale exists in the contract but is never produced.
type TransferWriteStatus string

// Transfer write statuses.
const (
	TransferStored           TransferWriteStatus = "stored"
	TransferNotFound         TransferWriteStatus = "notFound"
	TransferIgnoredStale     TransferWriteStatus = "ignoredStale"
	TransferRejectedConflict TransferWriteStatus = "rejectedConflict"
	TransferInvalidState     TransferWriteStatus = "invalidState"
)

// ActorTransferRef names one transfer of one actor slot.
type ActorTransferRef struct {
	MeshName   string `json:"meshName"`
	ActorID    string `json:"actorId"`
	TransferID string `json:"transferId"` // lower-case UUID text
}

// ActorTransferPrepareRequest starts a transfer.
type ActorTransferPrepareRequest struct {
	MeshName                string
	ActorID                 string
	TransferID              string
	Source                  ActorRef
	Target                  ActorRef
	ExpectedActorGeneration int64
	ExpectedMembershipEpoch int64
	// Participants is a set: insertion order is kept, duplicates are dropped.
	Participants     []RoutingID
	RecoveryOwnerID  string
	RecoveryLeaseTTL time.Duration // whole milliseconds, >= 1 ms
}

// ActorTransferRecord is a stored transfer.
type ActorTransferRecord struct {
	MeshName                string        `json:"meshName"`
	ActorID                 string        `json:"actorId"`
	TransferID              string        `json:"transferId"`
	Source                  ActorRef      `json:"source"`
	Target                  ActorRef      `json:"target"`
	ExpectedActorGeneration int64         `json:"expectedActorGeneration"`
	ExpectedMembershipEpoch int64         `json:"expectedMembershipEpoch"`
	Participants            []RoutingID   `json:"participants"`
	State                   TransferState `json:"state"`
	RecoveryOwnerID         string        `json:"recoveryOwnerId"`
	RecoveryLeaseExpiresAt  time.Time     `json:"recoveryLeaseExpiresAt"`
	UpdatedAt               time.Time     `json:"updatedAt"`
}

// ActorTransferWriteResult is the outcome of a transfer write; Record is set
// only when Status is TransferStored.
type ActorTransferWriteResult struct {
	Status TransferWriteStatus
	Record *ActorTransferRecord
}
