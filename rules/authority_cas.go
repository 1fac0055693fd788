package rules

import (
	"bytes"

	"github.com/zlink-systems/zlink-etcd/location"
)

// CompareExchangeAuthority is compareExchangeAuthority (04 §2.2). It runs
// location.ValidateCompareExchange first (cheap, and the rules below rely on
// the mutation's shape), which also checks the payload size before the
// version gate (D-02 fixed).
//
// Common gate (CX-0): conflict unless the row exists, is active and has
// exactly the expected version. Then, by mutation kind:
//   - delete: the owner must be live; a fresh version is returned in the
//     deleted result; the row's capacity leaves the active ledger.
//   - rebindOwnerLease: the expected owner must be the row's owner and the
//     target token must be live on the row's node incarnation; the owner
//     lease generation changes, nothing else but payload and version.
//   - restore: the expected owner must be the row's owner (no liveness).
//   - put/preserve: the owner must be live.
//   - put/newOwner: the relocation reservation named by the fence must be
//     reserved, match the row (rule MA) and the target owner, and have a
//     live target (CX-N1…CX-N9).
func CompareExchangeAuthority(tx *Tx, key location.AuthorityKey, expected location.StoreVersion, m location.AuthorityMutation) (location.CompareExchangeResult, error) {
	if err := location.ValidateCompareExchange(key, m); err != nil {
		return location.CompareExchangeResult{}, err // the mutation's pointers are used below
	}
	k := string(key)
	// Every branch below replaces fields of row (a rewrite clones the new
	// payload) and copies the result out (AuthoritySnapshotOf), never
	// modifying what the stored row references: it may be shared.
	row, ok := sharedAuthorityRow(tx, k)
	if !ok || row.Allocation.State != location.AllocationActive || row.StoreVersion != expected {
		return casConflict(tx, k), nil
	}
	switch m.Kind {
	case location.MutationDelete:
		return casDelete(tx, k, row)
	case location.MutationRebindOwnerLease:
		if *m.ExpectedOwner != row.Owner ||
			!TargetLive(tx, row.Allocation.Descriptor, row.Allocation.DescriptorLifecycleGeneration, *m.TargetOwner) {
			return casConflict(tx, k), nil
		}
		// Validation already ensures the target keeps the owner id and
		// changes the lease generation (D-09: the reference repeats it).
		row.Owner.LeaseGeneration = m.TargetOwner.LeaseGeneration
		return casRewrite(tx, k, row, m.Payload), nil
	case location.MutationRestore:
		if *m.ExpectedOwner != row.Owner {
			return casConflict(tx, k), nil
		}
		return casRewrite(tx, k, row, m.Payload), nil
	}
	if m.Transition == location.TransitionPreserve {
		if !ownerLive(tx, row) {
			return casConflict(tx, k), nil
		}
		return casRewrite(tx, k, row, m.Payload), nil
	}
	return casNewOwner(tx, k, expected, row, m)
}

// casConflict is conflict{current: read(key)}.
func casConflict(tx *Tx, key string) location.CompareExchangeResult {
	cur := readAuthorityKey(tx, key)
	return location.CompareExchangeResult{Kind: location.KindConflict, Current: &cur}
}

// casStored is the stored result of a written row.
func casStored(tx *Tx, row AuthorityRow) location.CompareExchangeResult {
	s := AuthoritySnapshotOf(row, tx.Now())
	return location.CompareExchangeResult{Kind: location.KindStored, Stored: &s}
}

// casGenerationExhausted is the generationExhausted result.
func casGenerationExhausted() location.CompareExchangeResult {
	return location.CompareExchangeResult{Kind: location.KindGenerationExhausted}
}

// casDelete removes a live owner's row, consuming a version that only the
// result shows.
func casDelete(tx *Tx, key string, row AuthorityRow) (location.CompareExchangeResult, error) {
	if !ownerLive(tx, row) {
		return casConflict(tx, key), nil
	}
	if !tx.Source().CanIssue(1, 0, 0) {
		return casGenerationExhausted(), nil
	}
	ledger := newLedgerChanges()
	a := row.Allocation
	ledger.active(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, -1)
	if err := ledger.write(tx); err != nil {
		return location.CompareExchangeResult{}, err
	}
	v := tx.Source().IssueVersion()
	tx.Delete(TableAuthority, key)
	tx.BumpScanRevision()
	return location.CompareExchangeResult{Kind: location.KindDeleted, DeletedVersion: v, StoreNow: tx.Now()}, nil
}

// casRewrite writes row (already carrying any owner change) with a new
// payload and a fresh version: rebind, restore and preserve.
func casRewrite(tx *Tx, key string, row AuthorityRow, payload []byte) location.CompareExchangeResult {
	if !tx.Source().CanIssue(1, 0, 0) {
		return casGenerationExhausted()
	}
	row.StoreVersion = tx.Source().IssueVersion()
	row.Payload = bytes.Clone(payload)
	// The row is the shared record's copy with a payload of its own, and
	// the result gets a copy of it (casStored): the plan may own it.
	tx.PutOwned(TableAuthority, key, row, 0)
	tx.BumpScanRevision()
	return casStored(tx, row)
}

// casNewOwner commits a relocation (CX-N1…CX-N9): the row moves to the
// reservation's target with the reservation's capacity and the target owner,
// and the reservation becomes committed. The source owner may be dead.
func casNewOwner(tx *Tx, key string, expected location.StoreVersion, row AuthorityRow, m location.AuthorityMutation) (location.CompareExchangeResult, error) {
	fence := string(*m.RelocationFence)
	res, ok := valueAt[RelocationRecord](tx, TableRelocations, fence)
	if !ok || res.State != RecordReserved ||
		!matchesAuthority(res.Request, key, expected, row) ||
		res.Request.TargetOwner != *m.TargetOwner ||
		!relocationTargetLive(tx, res.Request) {
		return casConflict(tx, key), nil
	}
	if !tx.Source().CanIssue(1, 0, 1) {
		return casGenerationExhausted(), nil
	}
	r := res.Request
	src := row.Allocation
	ledger := newLedgerChanges()
	ledger.active(src.Descriptor, src.DescriptorLifecycleGeneration, src.Capacity, -1)
	ledger.reserved(r.TargetDescriptor, r.TargetNodeLifecycleGeneration, r.Capacity, -1)
	ledger.active(r.TargetDescriptor, r.TargetNodeLifecycleGeneration, r.Capacity, +1)
	if err := ledger.write(tx); err != nil {
		return location.CompareExchangeResult{}, err
	}
	authKey := location.AuthorityKey(key)
	row.StoreVersion = tx.Source().IssueVersion()
	row.AuthorityOwnerGeneration = tx.Source().IssueOwnerGeneration(authKey)
	row.Payload = bytes.Clone(m.Payload)
	row.Owner = r.TargetOwner
	row.Allocation = relocationTargetAllocation(r)
	row.PendingCreation = nil
	tx.Put(TableAuthority, key, row, 0)
	res.State = RecordCommitted
	tx.Put(TableRelocations, fence, res, 0)
	tx.BumpScanRevision()
	return casStored(tx, row), nil
}
