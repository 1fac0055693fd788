package location

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"time"
)

// Validation of object creation (04-authority §1.6.1, §1.7, §2.4–§2.8):
// capacity vectors, Reserve, Commit, CompleteCreation, ReadCreationTerminal
// and AbortCreation.

// MaxCapacitySlots bounds every count of a capacity vector (2^31-1).
const MaxCapacitySlots = 1<<31 - 1

// ValidateCapacityVector checks a capacity vector (04 §1.6.1): actors, spots
// and the spot-type count are in 0..2^31-1, not all zero, and a present spot
// type has a non-zero count. The spot type's kind and stable type and the
// vector's fit to the object kind are not checked.
func ValidateCapacityVector(v CapacityVector) error {
	counts := []struct {
		name  string
		value int64
	}{{"actors", v.Actors}, {"spots", v.Spots}}
	if v.SpotType != nil {
		counts = append(counts, struct {
			name  string
			value int64
		}{"spotType.count", v.SpotType.Count})
	}
	for _, c := range counts {
		if c.value < 0 || c.value > MaxCapacitySlots {
			return NewRangeError(CodeAuthorityCapacity, "capacity %s %d is outside 0..%d", c.name, c.value, MaxCapacitySlots)
		}
	}
	if v.SpotType != nil && v.SpotType.Count == 0 {
		return NewRangeError(CodeAuthorityCapacity, "capacity spotType %s/%s has count 0; leave the spot type out instead",
			quote(string(v.SpotType.ObjectKind)), quote(v.SpotType.StableType))
	}
	if v.Actors == 0 && v.Spots == 0 && v.SpotType == nil {
		return NewRangeError(CodeAuthorityCapacity, "capacity vector is empty: actors, spots and spot type are all zero")
	}
	return nil
}

// capacityTextFields lists the text of a capacity vector's spot type for the
// UTF-8 sweep.
func capacityTextFields(name string, v CapacityVector) []textField {
	if v.SpotType == nil {
		return nil
	}
	return []textField{
		{fmt.Sprintf("%s.spotType.objectKind", name), string(v.SpotType.ObjectKind)},
		{fmt.Sprintf("%s.spotType.stableType", name), v.SpotType.StableType},
	}
}

// Codes of creation validation errors besides the authority.* codes.
const (
	// CodeTerminalOperationRID: the operation's source node RID is not 1..255
	// bytes or holds NUL (Type).
	CodeTerminalOperationRID = "terminal.operation_rid"
	// CodeTerminalOperationIDs: the source generation is under 1, or both
	// halves of the operation id are zero (Range).
	CodeTerminalOperationIDs = "terminal.operation_ids"
	// CodeTerminalEnvelope: the envelope is larger than 1 MiB or its digest
	// is not 32 bytes (Range).
	CodeTerminalEnvelope = "terminal.envelope"
	// CodeTerminalDigestMismatch: the digest is not the SHA-256 of the
	// envelope (Type).
	CodeTerminalDigestMismatch = "terminal.digest_mismatch"
	// CodeTerminalWindow: operationDeadline + 5 minutes is not after now, or
	// is not a time the reference can represent (Range).
	CodeTerminalWindow = "terminal.window"
	// CodeTerminalReservationID: the reservation id is not plain text (Type).
	CodeTerminalReservationID = "terminal.reservation_id"
	// CodeTerminalPublication: the completion carries no terminal
	// publication (Type; Go fix of D-35).
	CodeTerminalPublication = "terminal.publication"
	// CodeTerminalCompletionKind: the completion kind is none of created,
	// rejected, failed (Type; Go rule, the reference's type system rules it
	// out).
	CodeTerminalCompletionKind = "terminal.completion_kind"
)

// CreationTerminalRetention is how long a creation terminal stays readable
// after its operation deadline (5 minutes).
const CreationTerminalRetention = 5 * time.Minute

// maxReceiptSize is the largest creation request encoded size.
const maxReceiptSize = MaxPayloadBytes

// ValidateReserve checks a Reserve request in the reference's order: the
// global id is plain text; stable type and content reference are plain text;
// the creating payload is at most 1 MiB; the capacity vector is valid; the
// request digest is 32 bytes and the encoded size 0..1 MiB; the key can be
// encoded (a known kind, a global id of 1..255 bytes). Then, Go-only, the
// target's text is valid UTF-8. Target numbers are not validated.
func ValidateReserve(r ReserveRequest) error {
	if p := plainTextProblem(r.Key.GlobalID); p != "" {
		return NewTypeError(CodeAuthorityIdentityText, "reserve globalId %s %s", quote(r.Key.GlobalID), p)
	}
	for _, f := range []textField{{"stableType", r.Intent.StableType}, {"requestContentReference", r.Intent.RequestContentReference}} {
		if p := plainTextProblem(f.value); p != "" {
			return NewTypeError(CodeAuthorityIntentText, "reserve intent %s %s %s", f.name, quote(f.value), p)
		}
	}
	if err := requireMaxBytes(CodeAuthorityPayload, "reserve creatingPayload", r.CreatingPayload, MaxPayloadBytes); err != nil {
		return err
	}
	if err := ValidateCapacityVector(r.Capacity); err != nil {
		return err
	}
	if len(r.Intent.RequestSHA256) != sha256.Size {
		return NewTypeError(CodeAuthorityReceipt, "reserve intent requestSha256 is %d bytes long; it must be %d", len(r.Intent.RequestSHA256), sha256.Size)
	}
	if r.Intent.RequestEncodedSize < 0 || r.Intent.RequestEncodedSize > maxReceiptSize {
		return NewTypeError(CodeAuthorityReceipt, "reserve intent requestEncodedSize %d is outside 0..%d", r.Intent.RequestEncodedSize, maxReceiptSize)
	}
	if err := requireCreationKey("reserve", r.Key); err != nil {
		return err
	}
	fields := []textField{
		{"reserve target.meshName", r.Target.MeshName},
		{"reserve target.owner.ownerId", r.Target.Owner.OwnerID},
	}
	fields = append(fields, capacityTextFields("reserve capacity", r.Capacity)...)
	return requireUTF8(fields...)
}

// ValidateCommit checks a Commit request (spots only) in the reference's
// order: the ready payload is at most 1 MiB, the key is not an actor's
// (actors complete through CompleteCreation), the key can be encoded. The
// reservation id, expected version and target are compared, not validated.
func ValidateCommit(r CommitRequest) error {
	if err := requireMaxBytes(CodeAuthorityPayload, "commit readyPayload", r.ReadyPayload, MaxPayloadBytes); err != nil {
		return err
	}
	if r.Key.Kind == ObjectActor {
		return NewTypeError(CodeAuthorityKindPath, "commit is for spots; actor %s must be completed with CompleteCreation", quote(r.Key.GlobalID))
	}
	return requireCreationKey("commit", r.Key)
}

// ValidateCompleteCreation checks a CompleteCreation request (actors only)
// against the store's time now, in the reference's order: the key is an
// actor's; (Go) the completion kind is created, rejected or failed; a created
// completion's ready payload is at most 1 MiB; (Go, D-35) a terminal
// publication is present; its operation identity is valid; its envelope is at
// most 1 MiB with a 32-byte digest that is the envelope's SHA-256; the
// publication window (operationDeadline + 5 minutes) is still open at now;
// the reservation id is plain text; the key can be encoded.
func ValidateCompleteCreation(r CompleteCreationRequest, now time.Time) error {
	if r.Key.Kind != ObjectActor {
		return NewTypeError(CodeAuthorityKindPath, "CompleteCreation is for actors; %s %s must be committed with Commit",
			quote(string(r.Key.Kind)), quote(r.Key.GlobalID))
	}
	c := r.Completion
	switch c.Kind {
	case TerminalCreated, TerminalRejected, TerminalFailed:
	default:
		return NewTypeError(CodeTerminalCompletionKind, "completion kind %s is none of %q, %q, %q",
			quote(string(c.Kind)), TerminalCreated, TerminalRejected, TerminalFailed)
	}
	if c.Kind == TerminalCreated {
		if err := requireMaxBytes(CodeAuthorityPayload, "completion readyPayload", c.ReadyPayload, MaxPayloadBytes); err != nil {
			return err
		}
	}
	p := c.Terminal
	if p.Operation == (OperationIdentity{}) && p.TerminalEnvelope == nil && p.TerminalEnvelopeSHA256 == nil && p.OperationDeadline.IsZero() {
		return NewTypeError(CodeTerminalPublication, "completion carries no terminal publication; every completion must publish one")
	}
	if err := ValidateOperationIdentity(p.Operation); err != nil {
		return err
	}
	if err := requireMaxBytes(CodeTerminalEnvelope, "terminal envelope", p.TerminalEnvelope, MaxPayloadBytes); err != nil {
		return err
	}
	if len(p.TerminalEnvelopeSHA256) != sha256.Size {
		return NewRangeError(CodeTerminalEnvelope, "terminal envelope digest is %d bytes long; it must be %d", len(p.TerminalEnvelopeSHA256), sha256.Size)
	}
	if sum := sha256.Sum256(p.TerminalEnvelope); !bytes.Equal(sum[:], p.TerminalEnvelopeSHA256) {
		return NewTypeError(CodeTerminalDigestMismatch, "terminal envelope digest %x is not the SHA-256 of the envelope (%x)", p.TerminalEnvelopeSHA256, sum)
	}
	deadlineMs := p.OperationDeadline.UnixMilli()
	expiresMs := deadlineMs + CreationTerminalRetention.Milliseconds()
	if deadlineMs < -MaxSafeInteger || expiresMs > MaxSafeInteger {
		return NewRangeError(CodeTerminalWindow, "terminal operationDeadline %s is outside the representable time range",
			p.OperationDeadline.UTC().Format(time.RFC3339Nano))
	}
	if nowMs := now.UnixMilli(); expiresMs <= nowMs {
		return NewRangeError(CodeTerminalWindow, "terminal publication window closed: operationDeadline %s + %v is not after now %s",
			time.UnixMilli(deadlineMs).UTC().Format(time.RFC3339Nano), CreationTerminalRetention, time.UnixMilli(nowMs).UTC().Format(time.RFC3339Nano))
	}
	if pt := plainTextProblem(r.ReservationID); pt != "" {
		return NewTypeError(CodeTerminalReservationID, "completion reservationId %s %s", quote(r.ReservationID), pt)
	}
	return requireCreationKey("completion", r.Key)
}

// ValidateOperationIdentity checks a creation operation identity
// (CompleteCreation's terminal, ReadCreationTerminal): the source node RID is
// 1..255 bytes without NUL, the source generation is at least 1, and the
// operation id is not zero in both halves.
func ValidateOperationIdentity(op OperationIdentity) error {
	if p := ridTextProblem(op.SourceNodeRID); p != "" {
		return NewTypeError(CodeTerminalOperationRID, "operation sourceNodeRid %s %s", quote(string(op.SourceNodeRID)), p)
	}
	if op.SourceNodeGeneration < 1 {
		return NewRangeError(CodeTerminalOperationIDs, "operation sourceNodeGeneration %d is outside 1..%d", op.SourceNodeGeneration, MaxGeneration)
	}
	if op.OperationID.High == 0 && op.OperationID.Low == 0 {
		return NewRangeError(CodeTerminalOperationIDs, "operation id is zero in both halves")
	}
	return nil
}

// ValidateAbort checks an AbortCreation request: only its key, which must be
// encodable (a known kind, a global id of 1..255 bytes). Go validates it
// before looking up the reservation (D-22); the reference answered
// alreadyAborted first.
func ValidateAbort(r AbortRequest) error {
	return requireCreationKey("abort", r.Key)
}

// requireCreationKey checks that a creation key can be encoded as an
// authority key.
func requireCreationKey(what string, k ObjectCreationKey) error {
	if _, err := EncodeAuthorityKey(k.Kind, k.GlobalID); err != nil {
		if ie, ok := AsInputError(err); ok {
			return &InputError{Class: ie.Class, Code: ie.Code, Message: fmt.Sprintf("%s key %s/%s: %s", what, quote(string(k.Kind)), quote(k.GlobalID), ie.Message)}
		}
		return err
	}
	return nil
}
