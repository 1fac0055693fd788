package location

import (
	"crypto/sha256"
	"fmt"
)

// Validation of PrepareAggregate (04-authority §2.11). CommitAggregate and
// AbortAggregate take only a fence and are not validated. Two different spot
// types among the newOwner participants are found only while deciding
// (state-dependent, D-23); package rules reports them with
// CodeAggregateSpotTypes.

// Codes of aggregate validation errors.
const (
	// CodeAggregateID: the aggregate id is not plain text (Type).
	CodeAggregateID = "aggregate.id"
	// CodeAggregateShape: generation under 1 or no participants (Range).
	CodeAggregateShape = "aggregate.shape"
	// CodeAggregateDigest: the inventory digest is not 32 bytes (Type).
	CodeAggregateDigest = "aggregate.digest"
	// CodeAggregateParticipantOrder: participant keys repeat or are not in
	// ascending byte order (Type).
	CodeAggregateParticipantOrder = "aggregate.participant_order"
	// CodeAggregateTransition: a participant's owner transition is neither
	// preserve nor newOwner (Type; Go rule, the reference's type system
	// rules it out).
	CodeAggregateTransition = "aggregate.transition"
	// CodeAggregateSpotTypes: the newOwner participants hold more than one
	// spot type (Type; raised by the decision, D-23).
	CodeAggregateSpotTypes = "aggregate.spot_types"
)

// ValidatePrepareAggregate checks an aggregate prepare request in the
// reference's order: aggregateId is plain text; generation ≥ 1 and at least
// one participant; inventory digest of 32 bytes; capacity vector valid;
// participant keys unique and strictly ascending in byte order. Then the Go
// rules: every participant payload is at most 1 MiB (D-03,
// authority.payload), every transition is preserve or newOwner, and the
// other text fields are valid UTF-8.
func ValidatePrepareAggregate(r AggregatePrepareRequest) error {
	if p := plainTextProblem(r.AggregateID); p != "" {
		return NewTypeError(CodeAggregateID, "aggregateId %s %s", quote(r.AggregateID), p)
	}
	if r.AggregateGeneration < 1 {
		return NewRangeError(CodeAggregateShape, "aggregateGeneration %d is not positive", r.AggregateGeneration)
	}
	if len(r.Participants) == 0 {
		return NewRangeError(CodeAggregateShape, "aggregate has no participants; at least one is required")
	}
	if len(r.InventoryDigest) != sha256.Size {
		return NewTypeError(CodeAggregateDigest, "aggregate inventoryDigest is %d bytes long; it must be %d", len(r.InventoryDigest), sha256.Size)
	}
	if err := ValidateCapacityVector(r.Capacity); err != nil {
		return err
	}
	for i := 1; i < len(r.Participants); i++ {
		prev, cur := r.Participants[i-1].AuthorityKey, r.Participants[i].AuthorityKey
		switch {
		case cur == prev:
			return NewTypeError(CodeAggregateParticipantOrder, "aggregate participants[%d] repeats authority key %s", i, quote(string(cur)))
		case cur < prev:
			return NewTypeError(CodeAggregateParticipantOrder, "aggregate participants[%d] key %s sorts before participants[%d] key %s; keys must ascend in byte order",
				i, quote(string(cur)), i-1, quote(string(prev)))
		}
	}
	for i, p := range r.Participants {
		if err := requireMaxBytes(CodeAuthorityPayload, fmt.Sprintf("aggregate participants[%d].authorityPayload", i), p.AuthorityPayload, MaxPayloadBytes); err != nil {
			return err
		}
		if p.OwnerTransition != TransitionPreserve && p.OwnerTransition != TransitionNewOwner {
			return NewTypeError(CodeAggregateTransition, "aggregate participants[%d].ownerTransition %s is neither %q nor %q",
				i, quote(string(p.OwnerTransition)), TransitionPreserve, TransitionNewOwner)
		}
	}
	fields := make([]textField, 0, 2+2*len(r.Participants))
	for i, p := range r.Participants {
		fields = append(fields,
			textField{fmt.Sprintf("aggregate participants[%d].authorityKey", i), string(p.AuthorityKey)},
			textField{fmt.Sprintf("aggregate participants[%d].expectedStoreVersion", i), string(p.ExpectedStoreVersion)})
	}
	fields = append(fields,
		textField{"aggregate targetDescriptor.meshName", r.TargetDescriptor.MeshName},
		textField{"aggregate targetOwner.ownerId", r.TargetOwner.OwnerID})
	fields = append(fields, capacityTextFields("aggregate capacity", r.Capacity)...)
	return requireUTF8(fields...)
}
