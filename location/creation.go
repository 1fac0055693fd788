package location

import "time"

// ObjectCreationKey names the object whose authority record a creation
// makes.
type ObjectCreationKey struct {
	Kind     ObjectKind `json:"kind"`
	GlobalID string     `json:"globalId"`
}

// CreationTarget is the node a creation places the object on.
type CreationTarget struct {
	MeshName                string     `json:"meshName"`
	NodeRID                 RoutingID  `json:"nodeRid"`
	NodeLifecycleGeneration int64      `json:"nodeLifecycleGeneration"`
	Owner                   OwnerToken `json:"owner"`
}

// Descriptor returns the target's mesh-node key.
func (t CreationTarget) Descriptor() MeshNodeKey {
	return MeshNodeKey{MeshName: t.MeshName, RID: t.NodeRID}
}

// CreationIntent describes the creation request being reserved.
type CreationIntent struct {
	StableType              string
	RequestContentReference string
	RequestSHA256           []byte // exactly 32 bytes
	RequestEncodedSize      int64  // 0..1 MiB
}

// OperationID is a creation operation's 128-bit id; not both halves zero.
type OperationID struct {
	High uint64 `json:"high"`
	Low  uint64 `json:"low"`
}

// OperationIdentity identifies a creation operation: the idempotency key of
// its terminal.
type OperationIdentity struct {
	SourceNodeRID        RoutingID   `json:"sourceNodeRid"`
	SourceNodeGeneration int64       `json:"sourceNodeGeneration"`
	OperationID          OperationID `json:"operationId"`
}

// TerminalState is the outcome a creation terminal records.
type TerminalState string

// Terminal states.
const (
	TerminalCreated  TerminalState = "created"
	TerminalRejected TerminalState = "rejected"
	TerminalFailed   TerminalState = "failed"
)

// TerminalPublication is the terminal a completion publishes.
type TerminalPublication struct {
	Operation              OperationIdentity
	TerminalEnvelope       []byte // at most 1 MiB
	TerminalEnvelopeSHA256 []byte // SHA-256 of TerminalEnvelope
	// OperationDeadline: the terminal stays readable until 5 minutes after it.
	OperationDeadline time.Time
}

// TerminalRecord is a stored creation terminal.
type TerminalRecord struct {
	State                  TerminalState     `json:"state"`
	Operation              OperationIdentity `json:"operation"`
	ReservationID          string            `json:"reservationId"`
	ObjectKind             ObjectKind        `json:"objectKind"`
	TerminalEnvelope       []byte            `json:"terminalEnvelope"`
	TerminalEnvelopeSHA256 []byte            `json:"terminalEnvelopeSha256"`
	ExpiresAt              time.Time         `json:"expiresAt"`
	// StoreNow is the time the terminal was published, not the read time.
	StoreNow time.Time `json:"storeNow"`
}

// TerminalReadResult is the outcome of ReadCreationTerminal: KindMissing
// (StoreNow) or KindFound (Record).
type TerminalReadResult struct {
	Kind     ResultKind
	Record   *TerminalRecord
	StoreNow time.Time
}

// ReserveRequest reserves an authority record for a new object.
type ReserveRequest struct {
	Key             ObjectCreationKey
	Intent          CreationIntent
	Target          CreationTarget
	CreatingPayload []byte
	Capacity        CapacityVector
}

// ReserveResult is the outcome of Reserve:
//   - KindReserved: ReservationID and Creating;
//   - KindAlreadyExists, KindTypeMismatch: Current (a snapshot read result);
//   - KindConflict: Current (missing or snapshot);
//   - KindPlacementCapacityExhausted, KindGenerationExhausted: nothing else.
type ReserveResult struct {
	Kind          ResultKind
	ReservationID string
	Creating      *AuthoritySnapshot
	Current       *AuthorityReadResult
}

// CommitRequest commits a spot's reservation.
type CommitRequest struct {
	Key                  ObjectCreationKey
	ReservationID        string
	ExpectedStoreVersion StoreVersion
	Target               CreationTarget
	ReadyPayload         []byte
}

// CommitResult is the outcome of Commit: KindCommitted or KindAlreadyCommitted
// (Ready set), KindStale or KindGenerationExhausted.
type CommitResult struct {
	Kind  ResultKind
	Ready *AuthoritySnapshot
}

// CreationCompletion is how an actor creation ended. ReadyPayload is used only
// when Kind is TerminalCreated.
type CreationCompletion struct {
	Kind         TerminalState
	ReadyPayload []byte
	Terminal     TerminalPublication
}

// CompleteCreationRequest completes an actor's reservation.
type CompleteCreationRequest struct {
	Key                  ObjectCreationKey
	ReservationID        string
	ExpectedStoreVersion StoreVersion
	Target               CreationTarget
	Completion           CreationCompletion
}

// CompleteCreationResult is the outcome of CompleteCreation:
//   - KindCreated: Ready and Terminal;
//   - KindRejected, KindFailed, KindAlreadyCompleted: Terminal;
//   - KindStale, KindGenerationExhausted: nothing else.
type CompleteCreationResult struct {
	Kind     ResultKind
	Ready    *AuthoritySnapshot
	Terminal *TerminalRecord
}

// AbortRequest abandons a reservation. AbortCreation answers KindAborted,
// KindAlreadyAborted or KindStale.
type AbortRequest struct {
	Key                  ObjectCreationKey
	ReservationID        string
	ExpectedStoreVersion StoreVersion
	Target               CreationTarget
}
