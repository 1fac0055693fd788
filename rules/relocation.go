package rules

import (
	"github.com/zlink-systems/zlink-etcd/location"
)

// ReserveRelocationCapacity is reserveRelocationCapacity (04 §2.9): it
// reserves the relocation target's capacity for one active authority row
// without writing the row, so that a later newOwner compare-exchange can
// present the same expected version. The request is assumed validated.
//
//  1. A reservation with the same id answers alreadyReserved when its stored
//     request equals this one field by field, whatever its state (D-10),
//     else conflict.
//  2. Conflict unless the row is active and matches the request (rule MA).
//  3. targetUnavailable unless the target is live (the source may be dead).
//  4. placementCapacityExhausted unless admission passes at the target.
//  5. Store the reservation and add its capacity to the target's reserved
//     ledger. No version is consumed; cursors stay valid.
func ReserveRelocationCapacity(tx *Tx, r location.RelocationReservationRequest) (location.RelocationReserveResult, error) {
	key := string(r.AuthorityKey)
	if existing, ok := valueAt[RelocationRecord](tx, TableRelocations, r.ReservationID); ok {
		if sameRelocationRequest(existing.Request, r) {
			return location.RelocationReserveResult{Kind: location.KindAlreadyReserved, Fence: location.RelocationFence(existing.Request.ReservationID)}, nil
		}
		return relocationConflict(tx, key), nil
	}
	row, ok := authorityRow(tx, key)
	if !ok || !matchesAuthority(r, key, r.ExpectedStoreVersion, row) {
		return relocationConflict(tx, key), nil
	}
	if !relocationTargetLive(tx, r) {
		return location.RelocationReserveResult{Kind: location.KindTargetUnavailable}, nil
	}
	target := relocationTargetAllocation(r)
	if !placementAvailable(tx, target) {
		return location.RelocationReserveResult{Kind: location.KindPlacementCapacityExhausted}, nil
	}
	ledger := newLedgerChanges()
	ledger.reserved(target.Descriptor, target.DescriptorLifecycleGeneration, target.Capacity, +1)
	if err := ledger.write(tx); err != nil {
		return location.RelocationReserveResult{}, err
	}
	tx.Put(TableRelocations, r.ReservationID, RelocationRecord{Request: r.Clone(), State: RecordReserved}, 0)
	return location.RelocationReserveResult{Kind: location.KindReserved, Fence: location.RelocationFence(r.ReservationID)}, nil
}

// AbortRelocationCapacity is abortRelocationCapacity (04 §2.10): unknown →
// stale; aborted → alreadyAborted; committed → alreadyCommitted; adopted by
// an aggregate (prepared) → stale; reserved → aborted, releasing the
// target's reserved capacity.
func AbortRelocationCapacity(tx *Tx, fence location.RelocationFence) (location.ResultKind, error) {
	id := string(fence)
	res, ok := valueAt[RelocationRecord](tx, TableRelocations, id)
	if !ok {
		return location.KindStale, nil
	}
	switch res.State {
	case RecordAborted:
		return location.KindAlreadyAborted, nil
	case RecordCommitted:
		return location.KindAlreadyCommitted, nil
	case RecordReserved:
	default:
		return location.KindStale, nil
	}
	r := res.Request
	ledger := newLedgerChanges()
	ledger.reserved(r.TargetDescriptor, r.TargetNodeLifecycleGeneration, r.Capacity, -1)
	if err := ledger.write(tx); err != nil {
		return "", err
	}
	res.State = RecordAborted
	tx.Put(TableRelocations, id, res, 0)
	return location.KindAborted, nil
}

// relocationConflict is conflict{current: read(key)}.
func relocationConflict(tx *Tx, key string) location.RelocationReserveResult {
	cur := readAuthorityKey(tx, key)
	return location.RelocationReserveResult{Kind: location.KindConflict, Current: &cur}
}

// matchesAuthority is rule MA (04 §2.2): the reservation names this key and
// expected version, the row has that version, is active, and its kind,
// stable type, node incarnation and owner token are the reservation's
// source. The capacities are not compared.
func matchesAuthority(r location.RelocationReservationRequest, key string, expected location.StoreVersion, row AuthorityRow) bool {
	a := row.Allocation
	return string(r.AuthorityKey) == key &&
		r.ExpectedStoreVersion == expected &&
		row.StoreVersion == expected &&
		a.State == location.AllocationActive &&
		a.ObjectKind == r.ObjectKind &&
		a.StableType == r.StableType &&
		a.Descriptor == r.SourceDescriptor &&
		a.DescriptorLifecycleGeneration == r.SourceNodeLifecycleGeneration &&
		row.Owner == r.SourceOwner
}

// relocationTargetLive reports whether the reservation's target is live.
func relocationTargetLive(tx *Tx, r location.RelocationReservationRequest) bool {
	return TargetLive(tx, r.TargetDescriptor, r.TargetNodeLifecycleGeneration, r.TargetOwner)
}

// relocationTargetAllocation is the active allocation a relocation moves a
// row to.
func relocationTargetAllocation(r location.RelocationReservationRequest) location.PlacementAllocation {
	return location.PlacementAllocation{
		State:                         location.AllocationActive,
		ObjectKind:                    r.ObjectKind,
		StableType:                    r.StableType,
		Descriptor:                    r.TargetDescriptor,
		DescriptorLifecycleGeneration: r.TargetNodeLifecycleGeneration,
		Capacity:                      r.Capacity.Clone(),
	}
}

// sameRelocationRequest compares two requests field by field (D-10 fixed:
// the reference compared serialisations, so field order mattered).
func sameRelocationRequest(a, b location.RelocationReservationRequest) bool {
	return a.ReservationID == b.ReservationID &&
		a.AuthorityKey == b.AuthorityKey &&
		a.ExpectedStoreVersion == b.ExpectedStoreVersion &&
		a.ObjectKind == b.ObjectKind &&
		a.StableType == b.StableType &&
		a.SourceDescriptor == b.SourceDescriptor &&
		a.SourceNodeLifecycleGeneration == b.SourceNodeLifecycleGeneration &&
		a.SourceOwner == b.SourceOwner &&
		a.TargetDescriptor == b.TargetDescriptor &&
		a.TargetNodeLifecycleGeneration == b.TargetNodeLifecycleGeneration &&
		a.TargetOwner == b.TargetOwner &&
		sameCapacity(a.Capacity, b.Capacity)
}

// sameCapacity compares two vectors, spot type included (absent equals only
// absent).
func sameCapacity(a, b location.CapacityVector) bool {
	if a.Actors != b.Actors || a.Spots != b.Spots {
		return false
	}
	if a.SpotType == nil || b.SpotType == nil {
		return a.SpotType == nil && b.SpotType == nil
	}
	return *a.SpotType == *b.SpotType
}
