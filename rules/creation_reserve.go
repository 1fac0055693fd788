package rules

import (
	"bytes"

	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Reserve is reserve (04 §2.4): it creates a reserved authority row for a new
// object on a live creation target. The request is assumed validated
// (location.ValidateReserve).
//
//  1. An entry-spot claim on the key → conflict{current: missing}, even when
//     a row exists (D-33).
//  2. An existing row → typeMismatch when its object kind or stable type
//     differs, else alreadyExists when active, else conflict.
//  3. A target that is not live → conflict (the row is missing).
//  4. Admission at the target fails → placementCapacityExhausted.
//  5. No version, object or owner generation left → generationExhausted.
//  6. Create the row with a fresh reservation id, version, object and owner
//     generation, owned by the target owner; reserve its capacity.
func Reserve(tx *Tx, r location.ReserveRequest) (location.ReserveResult, error) {
	key, err := creationKey(r.Key)
	if err != nil {
		return location.ReserveResult{}, err
	}
	if _, claimed := EntryClaimHeld(tx, key); claimed {
		cur := missingResult(tx.Now())
		return location.ReserveResult{Kind: location.KindConflict, Current: &cur}, nil
	}
	k := string(key)
	if row, ok := authorityRow(tx, k); ok {
		cur := snapshotResult(row, tx.Now())
		switch {
		case row.Allocation.ObjectKind != r.Key.Kind || row.Allocation.StableType != r.Intent.StableType:
			return location.ReserveResult{Kind: location.KindTypeMismatch, Current: &cur}, nil
		case row.Allocation.State == location.AllocationActive:
			return location.ReserveResult{Kind: location.KindAlreadyExists, Current: &cur}, nil
		default:
			return location.ReserveResult{Kind: location.KindConflict, Current: &cur}, nil
		}
	}
	if !creationTargetLive(tx, r.Target) {
		cur := missingResult(tx.Now())
		return location.ReserveResult{Kind: location.KindConflict, Current: &cur}, nil
	}
	alloc := location.PlacementAllocation{
		State:                         location.AllocationReserved,
		ObjectKind:                    r.Key.Kind,
		StableType:                    r.Intent.StableType,
		Descriptor:                    r.Target.Descriptor(),
		DescriptorLifecycleGeneration: r.Target.NodeLifecycleGeneration,
		Capacity:                      r.Capacity.Clone(),
	}
	if !placementAvailable(tx, alloc) {
		return location.ReserveResult{Kind: location.KindPlacementCapacityExhausted}, nil
	}
	if !tx.Source().CanIssue(1, 1, 1) {
		return location.ReserveResult{Kind: location.KindGenerationExhausted}, nil
	}
	ledger := newLedgerChanges()
	ledger.reserved(alloc.Descriptor, alloc.DescriptorLifecycleGeneration, alloc.Capacity, +1)
	if err := ledger.write(tx); err != nil {
		return location.ReserveResult{}, err
	}
	src := tx.Source()
	reservationID := src.NewReservationID()
	row := AuthorityRow{
		StoreVersion:             src.IssueVersion(),
		Payload:                  bytes.Clone(r.CreatingPayload),
		ObjectGeneration:         src.IssueObjectGeneration(key),
		AuthorityOwnerGeneration: src.IssueOwnerGeneration(key),
		Owner:                    r.Target.Owner,
		Allocation:               alloc,
		PendingCreation: &location.PendingCreation{
			ReservationID:           reservationID,
			RequestContentReference: r.Intent.RequestContentReference,
			RequestSHA256:           bytes.Clone(r.Intent.RequestSHA256),
			RequestEncodedSize:      r.Intent.RequestEncodedSize,
		},
		Creation: &CreationInfo{ReservationID: reservationID, Target: r.Target},
	}
	tx.Put(TableAuthority, k, row, 0)
	tx.BumpScanRevision()
	creating := AuthoritySnapshotOf(row, tx.Now())
	return location.ReserveResult{Kind: location.KindReserved, ReservationID: reservationID, Creating: &creating}, nil
}

// creationKey is the authority key of the object a creation names.
func creationKey(k location.ObjectCreationKey) (location.AuthorityKey, error) {
	key, err := location.EncodeAuthorityKey(k.Kind, k.GlobalID)
	if err != nil {
		return "", fmt.Errorf("rules: creation key: %w", err)
	}
	return key, nil
}

// reservedRowFor reports whether row is the reserved row of this creation:
// reserved, same reservation id, expected version and creation target (mesh,
// node RID, lifecycle generation and owner token).
func reservedRowFor(row AuthorityRow, reservationID string, expected location.StoreVersion, target location.CreationTarget) bool {
	return row.Allocation.State == location.AllocationReserved &&
		row.Creation != nil && row.Creation.ReservationID == reservationID &&
		row.StoreVersion == expected &&
		row.Creation.Target == target
}

// activateReservedRow turns a reserved row active with the ready payload and
// a fresh version, moving its capacity from the reserved to the active
// ledger; the row's and the reservation's terminals become committed. The
// caller has checked that a version can be issued.
func activateReservedRow(tx *Tx, key string, row AuthorityRow, reservationID string, readyPayload []byte) (AuthorityRow, error) {
	a := row.Allocation
	ledger := newLedgerChanges()
	ledger.reserved(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, -1)
	ledger.active(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, +1)
	if err := ledger.write(tx); err != nil {
		return AuthorityRow{}, err
	}
	row.StoreVersion = tx.Source().IssueVersion()
	row.Payload = bytes.Clone(readyPayload)
	row.Allocation.State = location.AllocationActive
	row.PendingCreation = nil
	creation := *row.Creation
	creation.Terminal = RecordCommitted
	row.Creation = &creation
	tx.Put(TableAuthority, key, row, 0)
	tx.Put(TableReservationTerminals, reservationID, ReservationTerminal{State: RecordCommitted}, 0)
	tx.BumpScanRevision()
	return row, nil
}
