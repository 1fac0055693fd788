package rules

import (
	"bytes"

	"github.com/zlink-systems/zlink-etcd/location"
)

// PrepareAggregate is prepareAggregate (04 §2.11). The request is assumed
// validated (location.ValidatePrepareAggregate, which also bounds participant
// payloads: D-03 fixed).
//
//  1. An existing record for (id, generation): prepared with an identical
//     request → alreadyPrepared; committed → stale; otherwise conflict
//     (D-25).
//  2. The target is not live → conflict.
//  3. A relocation reservation whose id is the aggregate id is adopted when
//     it is reserved and its target owner, descriptor, lifecycle and
//     capacity equal the aggregate's (its authority and source are not
//     checked, D-24).
//  4. Without adoption, admission at the target must pass, else conflict
//     (D-23: no capacity-specific result).
//  5. Each participant must exist, be active and have its expected version;
//     a preserve participant's owner must be live; newOwner participants'
//     capacities are summed (two different spot types: invalid argument,
//     D-23).
//  6. The sum must equal the aggregate capacity, else conflict (so a
//     preserve-only aggregate can never be prepared, D-04).
//  7. Adopted: the reservation becomes prepared; else the capacity is
//     reserved at the target. The record is stored prepared. No version is
//     consumed and participants are not locked (D-26).
func PrepareAggregate(tx *Tx, r location.AggregatePrepareRequest) (location.AggregatePrepareResult, error) {
	fence := location.AggregateFence{AggregateID: r.AggregateID, AggregateGeneration: r.AggregateGeneration}
	aggKey := AggregateKey(fence)
	conflict := location.AggregatePrepareResult{Kind: location.KindConflict}
	if existing, ok := valueAt[AggregateRecord](tx, TableAggregates, aggKey); ok {
		switch {
		case existing.State == RecordPrepared && sameAggregateRequest(existing.Request, r):
			return location.AggregatePrepareResult{Kind: location.KindAlreadyPrepared, Fence: aggregateFence(existing.Request)}, nil
		case existing.State == RecordCommitted:
			return location.AggregatePrepareResult{Kind: location.KindStale}, nil
		default:
			return conflict, nil
		}
	}
	if !TargetLive(tx, r.TargetDescriptor, r.TargetDescriptorLifecycleGeneration, r.TargetOwner) {
		return conflict, nil
	}
	target := aggregateTargetAllocation(r)
	reservation, adopts := valueAt[RelocationRecord](tx, TableRelocations, r.AggregateID)
	adopts = adopts && reservation.State == RecordReserved &&
		reservation.Request.TargetOwner == r.TargetOwner &&
		reservation.Request.TargetDescriptor == r.TargetDescriptor &&
		reservation.Request.TargetNodeLifecycleGeneration == r.TargetDescriptorLifecycleGeneration &&
		sameCapacity(reservation.Request.Capacity, r.Capacity)
	if !adopts && !placementAvailable(tx, target) {
		return conflict, nil
	}
	var moved location.CapacityVector
	for _, p := range r.Participants {
		row, ok := authorityRow(tx, string(p.AuthorityKey))
		if !ok || row.Allocation.State != location.AllocationActive || row.StoreVersion != p.ExpectedStoreVersion {
			return conflict, nil
		}
		if p.OwnerTransition == location.TransitionPreserve {
			if !ownerLive(tx, row) {
				return conflict, nil
			}
			continue
		}
		var err error
		if moved, err = addCapacity(moved, row.Allocation.Capacity); err != nil {
			return location.AggregatePrepareResult{}, err
		}
	}
	if !sameCapacity(moved, r.Capacity) {
		return conflict, nil
	}
	record := AggregateRecord{Request: r.Clone(), State: RecordPrepared}
	if adopts {
		reservation.State = RecordPrepared
		reservation.Aggregate = &fence
		tx.Put(TableRelocations, r.AggregateID, reservation, 0)
		record.CapacityReservationID = r.AggregateID
	} else {
		ledger := newLedgerChanges()
		ledger.reserved(target.Descriptor, target.DescriptorLifecycleGeneration, target.Capacity, +1)
		if err := ledger.write(tx); err != nil {
			return location.AggregatePrepareResult{}, err
		}
	}
	tx.Put(TableAggregates, aggKey, record, 0)
	return location.AggregatePrepareResult{Kind: location.KindPrepared, Fence: fence}, nil
}

// CommitAggregate is commitAggregate (04 §2.12).
//
//  1. Unknown → stale; committed → alreadyCommitted; aborted → stale.
//  2. Each participant, in order, must exist, be active and have its
//     expected version; a newOwner participant needs a live aggregate
//     target, a preserve participant a live owner; else stale.
//  3. Not enough versions (one per participant) or owner generations (one
//     per newOwner participant) → generationExhausted.
//  4. Each participant gets a fresh version and its payload; a newOwner
//     participant also a fresh owner generation, the target owner, and the
//     target node incarnation (its kind, stable type and capacity stay),
//     its capacity leaving its source's active ledger.
//  5. The aggregate capacity moves from the target's reserved to its active
//     ledger; the aggregate and an adopted reservation become committed.
//
// A stale or generationExhausted result leaves the aggregate prepared and its
// capacity held (D-26).
func CommitAggregate(tx *Tx, f location.AggregateFence) (location.ResultKind, error) {
	aggKey := AggregateKey(f)
	agg, ok := valueAt[AggregateRecord](tx, TableAggregates, aggKey)
	if !ok {
		return location.KindStale, nil
	}
	switch agg.State {
	case RecordCommitted:
		return location.KindAlreadyCommitted, nil
	case RecordPrepared:
	default:
		return location.KindStale, nil
	}
	r := agg.Request
	rows := make([]AuthorityRow, len(r.Participants))
	var newOwners int64
	for i, p := range r.Participants {
		row, ok := authorityRow(tx, string(p.AuthorityKey))
		if !ok || row.Allocation.State != location.AllocationActive || row.StoreVersion != p.ExpectedStoreVersion {
			return location.KindStale, nil
		}
		if p.OwnerTransition == location.TransitionNewOwner {
			if !TargetLive(tx, r.TargetDescriptor, r.TargetDescriptorLifecycleGeneration, r.TargetOwner) {
				return location.KindStale, nil
			}
			newOwners++
		} else if !ownerLive(tx, row) {
			return location.KindStale, nil
		}
		rows[i] = row
	}
	if !tx.Source().CanIssue(int64(len(rows)), 0, newOwners) {
		return location.KindGenerationExhausted, nil
	}
	target := aggregateTargetAllocation(r)
	ledger := newLedgerChanges()
	for i, p := range r.Participants {
		if p.OwnerTransition == location.TransitionNewOwner {
			a := rows[i].Allocation
			ledger.active(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, -1)
		}
	}
	ledger.reserved(target.Descriptor, target.DescriptorLifecycleGeneration, target.Capacity, -1)
	ledger.active(target.Descriptor, target.DescriptorLifecycleGeneration, target.Capacity, +1)
	if err := ledger.write(tx); err != nil {
		return "", err
	}
	src := tx.Source()
	for i, p := range r.Participants {
		row := rows[i]
		row.StoreVersion = src.IssueVersion()
		row.Payload = bytes.Clone(p.AuthorityPayload)
		if p.OwnerTransition == location.TransitionNewOwner {
			row.AuthorityOwnerGeneration = src.IssueOwnerGeneration(p.AuthorityKey)
			row.Owner = r.TargetOwner
			row.Allocation.Descriptor = r.TargetDescriptor
			row.Allocation.DescriptorLifecycleGeneration = r.TargetDescriptorLifecycleGeneration
			row.Allocation.Capacity = row.Allocation.Capacity.Clone()
			row.PendingCreation = nil
		}
		tx.Put(TableAuthority, string(p.AuthorityKey), row, 0)
	}
	agg.State = RecordCommitted
	tx.Put(TableAggregates, aggKey, agg, 0)
	setAdoptedReservation(tx, agg, RecordCommitted)
	tx.BumpScanRevision()
	return location.KindCommitted, nil
}

// AbortAggregate is abortAggregate (04 §2.13): unknown → stale; aborted →
// alreadyAborted; committed → stale; prepared → aborted, releasing the
// target's reserved capacity (an adopted reservation's included) and
// aborting an adopted reservation.
func AbortAggregate(tx *Tx, f location.AggregateFence) (location.ResultKind, error) {
	aggKey := AggregateKey(f)
	agg, ok := valueAt[AggregateRecord](tx, TableAggregates, aggKey)
	if !ok {
		return location.KindStale, nil
	}
	switch agg.State {
	case RecordAborted:
		return location.KindAlreadyAborted, nil
	case RecordPrepared:
	default:
		return location.KindStale, nil
	}
	target := aggregateTargetAllocation(agg.Request)
	ledger := newLedgerChanges()
	ledger.reserved(target.Descriptor, target.DescriptorLifecycleGeneration, target.Capacity, -1)
	if err := ledger.write(tx); err != nil {
		return "", err
	}
	agg.State = RecordAborted
	tx.Put(TableAggregates, aggKey, agg, 0)
	setAdoptedReservation(tx, agg, RecordAborted)
	return location.KindAborted, nil
}

// setAdoptedReservation moves the relocation reservation an aggregate
// adopted, if any, to state.
func setAdoptedReservation(tx *Tx, agg AggregateRecord, state string) {
	if agg.CapacityReservationID == "" {
		return
	}
	res, ok := valueAt[RelocationRecord](tx, TableRelocations, agg.CapacityReservationID)
	if !ok {
		return
	}
	res.State = state
	tx.Put(TableRelocations, agg.CapacityReservationID, res, 0)
}

// aggregateFence is the fence of a stored request.
func aggregateFence(r location.AggregatePrepareRequest) location.AggregateFence {
	return location.AggregateFence{AggregateID: r.AggregateID, AggregateGeneration: r.AggregateGeneration}
}

// aggregateTargetAllocation is the allocation an aggregate's capacity uses at
// its target; the kind and stable type come from the capacity's spot type
// (actor and "" without one) and do not affect the buckets.
func aggregateTargetAllocation(r location.AggregatePrepareRequest) location.PlacementAllocation {
	a := location.PlacementAllocation{
		State:                         location.AllocationActive,
		ObjectKind:                    location.ObjectActor,
		Descriptor:                    r.TargetDescriptor,
		DescriptorLifecycleGeneration: r.TargetDescriptorLifecycleGeneration,
		Capacity:                      r.Capacity.Clone(),
	}
	if t := r.Capacity.SpotType; t != nil {
		a.ObjectKind, a.StableType = t.ObjectKind, t.StableType
	}
	return a
}

// addCapacity adds two vectors; two different spot types cannot be added and
// are an invalid-argument error (state-dependent input, D-23).
func addCapacity(a, b location.CapacityVector) (location.CapacityVector, error) {
	sum := location.CapacityVector{Actors: a.Actors + b.Actors, Spots: a.Spots + b.Spots, SpotType: a.SpotType}
	if b.SpotType != nil {
		if a.SpotType != nil && (a.SpotType.ObjectKind != b.SpotType.ObjectKind || a.SpotType.StableType != b.SpotType.StableType) {
			return location.CapacityVector{}, location.NewTypeError(location.CodeAggregateSpotTypes,
				"aggregate participants hold more than one spot type (%s/%s and %s/%s)",
				a.SpotType.ObjectKind, a.SpotType.StableType, b.SpotType.ObjectKind, b.SpotType.StableType)
		}
		t := *b.SpotType
		if a.SpotType != nil {
			t.Count += a.SpotType.Count
		}
		sum.SpotType = &t
	}
	return sum, nil
}

// sameAggregateRequest is the reference's identity of two prepare requests:
// id, generation, target owner, digest, target node incarnation, capacity,
// and per participant (in order) key, expected version, transition, payload
// and membership bytes.
func sameAggregateRequest(a, b location.AggregatePrepareRequest) bool {
	if a.AggregateID != b.AggregateID ||
		a.AggregateGeneration != b.AggregateGeneration ||
		a.TargetOwner != b.TargetOwner ||
		!bytes.Equal(a.InventoryDigest, b.InventoryDigest) ||
		len(a.Participants) != len(b.Participants) ||
		a.TargetDescriptor != b.TargetDescriptor ||
		a.TargetDescriptorLifecycleGeneration != b.TargetDescriptorLifecycleGeneration ||
		!sameCapacity(a.Capacity, b.Capacity) {
		return false
	}
	for i, p := range a.Participants {
		q := b.Participants[i]
		if p.AuthorityKey != q.AuthorityKey ||
			p.ExpectedStoreVersion != q.ExpectedStoreVersion ||
			p.OwnerTransition != q.OwnerTransition ||
			!bytes.Equal(p.AuthorityPayload, q.AuthorityPayload) ||
			!bytes.Equal(p.MembershipMutation, q.MembershipMutation) {
			return false
		}
	}
	return true
}
