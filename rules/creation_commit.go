package rules

import "github.com/zlink-systems/zlink-etcd/location"

// Commit is commit (04 §2.5), the end of a spot creation. The request is
// assumed validated (location.ValidateCommit: payload size, not an actor,
// key encoding).
//
//  1. The reservation already committed and the row at the key active with
//     that reservation → alreadyCommitted{current row}. D-05 fixed: the
//     row's own reservation id must match, so an old replay after delete and
//     re-creation is stale.
//  2. Stale unless the row is this reservation's reserved row (same id,
//     version and creation target) and the creation target is live. The
//     key's spot kind is not compared with the row's (D-28).
//  3. No version left → generationExhausted.
//  4. The row becomes active with the ready payload; its capacity moves from
//     the reserved to the active ledger.
func Commit(tx *Tx, r location.CommitRequest) (location.CommitResult, error) {
	key, err := creationKey(r.Key)
	if err != nil {
		return location.CommitResult{}, err
	}
	k := string(key)
	row, ok := authorityRow(tx, k)
	if ok && reservationTerminal(tx, r.ReservationID) == RecordCommitted &&
		row.Allocation.State == location.AllocationActive &&
		row.Creation != nil && row.Creation.ReservationID == r.ReservationID {
		ready := AuthoritySnapshotOf(row, tx.Now())
		return location.CommitResult{Kind: location.KindAlreadyCommitted, Ready: &ready}, nil
	}
	if !ok || !reservedRowFor(row, r.ReservationID, r.ExpectedStoreVersion, r.Target) ||
		!creationTargetLive(tx, row.Creation.Target) {
		return location.CommitResult{Kind: location.KindStale}, nil
	}
	if !tx.Source().CanIssue(1, 0, 0) {
		return location.CommitResult{Kind: location.KindGenerationExhausted}, nil
	}
	row, err = activateReservedRow(tx, k, row, r.ReservationID, r.ReadyPayload)
	if err != nil {
		return location.CommitResult{}, err
	}
	ready := AuthoritySnapshotOf(row, tx.Now())
	return location.CommitResult{Kind: location.KindCommitted, Ready: &ready}, nil
}
