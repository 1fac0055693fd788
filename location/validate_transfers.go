package location

import "time"

// Validation of actor-transfer inputs (03-owner-leases-transfers-stamps §3).

// Codes of actor-transfer validation errors.
const (
	// CodeTransferIdentity: meshName or actorId is empty or only whitespace
	// (Type).
	CodeTransferIdentity = "transfer.identity"
	// CodeTransferIDFormat: transferId is not lower-case canonical UUID text
	// (Type).
	CodeTransferIDFormat = "transfer.id_format"
	// CodeTransferLease: the recovery or successor owner is empty or only
	// whitespace, or the TTL is under 1 ms (Type, as the reference; A-24,
	//
	CodeTransferLease = "transfer.lease"
	// CodeTransferGenerations: expectedActorGeneration or
	// expectedMembershipEpoch is under 1 (Range).
	CodeTransferGenerations = "transfer.generations"
	// CodeTransferParticipants: the participant set is empty (Type).
	CodeTransferParticipants = "transfer.participants"
)

// ValidateTransferRef checks the transfer named by CommitActorTransfer,
// ActivateActorTransfer, AbortActorTransfer and TakeOverActorTransfer:
// meshName and actorId are TrimText, transferId is lower-case UUID text.
// The recovery owner of a transition is not validated (the reference does
// not; a wrong one answers rejectedConflict).
func ValidateTransferRef(ref ActorTransferRef) error {
	return validateTransferIdentity(ref.MeshName, ref.ActorID, ref.TransferID)
}

// ValidateTransferPrepare checks a PrepareActorTransfer request in the
// reference's order: identity, transfer id, recovery owner and TTL (whole
// milliseconds, at least 1), expected generation and epoch (at least 1),
// participants (not empty); then, Go-only, the source and target actor
// references' text is valid UTF-8.
func ValidateTransferPrepare(r ActorTransferPrepareRequest) error {
	if err := validateTransferIdentity(r.MeshName, r.ActorID, r.TransferID); err != nil {
		return err
	}
	if err := validateTransferLease("recoveryOwnerId", r.RecoveryOwnerID, r.RecoveryLeaseTTL); err != nil {
		return err
	}
	if r.ExpectedActorGeneration < 1 {
		return NewRangeError(CodeTransferGenerations, "transfer expectedActorGeneration %d is not positive", r.ExpectedActorGeneration)
	}
	if r.ExpectedMembershipEpoch < 1 {
		return NewRangeError(CodeTransferGenerations, "transfer expectedMembershipEpoch %d is not positive", r.ExpectedMembershipEpoch)
	}
	if len(r.Participants) == 0 {
		return NewTypeError(CodeTransferParticipants, "transfer has no participants; at least one is required")
	}
	return requireUTF8(
		textField{"transfer source.actorId", r.Source.ActorID},
		textField{"transfer source.meshName", r.Source.MeshName},
		textField{"transfer target.actorId", r.Target.ActorID},
		textField{"transfer target.meshName", r.Target.MeshName},
	)
}

// ValidateTransferTakeover checks a TakeOverActorTransfer call: the transfer
// reference, then the successor owner (TrimText) and the recovery TTL (whole
// milliseconds, at least 1; both transfer.lease).
func ValidateTransferTakeover(ref ActorTransferRef, successorOwnerID string, ttl time.Duration) error {
	if err := ValidateTransferRef(ref); err != nil {
		return err
	}
	return validateTransferLease("successorOwnerId", successorOwnerID, ttl)
}

// validateTransferIdentity checks the slot and transfer id.
func validateTransferIdentity(meshName, actorID, transferID string) error {
	for _, f := range []textField{{"meshName", meshName}, {"actorId", actorID}} {
		if p := trimTextProblem(f.value); p != "" {
			return NewTypeError(CodeTransferIdentity, "transfer %s %s %s", f.name, quote(f.value), p)
		}
	}
	if !IsUUIDLower(transferID) {
		return NewTypeError(CodeTransferIDFormat, "transferId %s is not lower-case canonical UUID text (8-4-4-4-12 digits of 0-9a-f)", quote(transferID))
	}
	return nil
}

// validateTransferLease checks a recovery owner and its TTL.
func validateTransferLease(field, ownerID string, ttl time.Duration) error {
	if p := trimTextProblem(ownerID); p != "" {
		return NewTypeError(CodeTransferLease, "transfer %s %s %s", field, quote(ownerID), p)
	}
	if ms, ok := WholeMillis(ttl); !ok {
		return NewTypeError(CodeTransferLease, "transfer recovery lease TTL %v is %d whole milliseconds, outside 1..%d", ttl, ms, MaxTTLMillis)
	}
	return nil
}
