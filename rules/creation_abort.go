package rules

import "github.com/zlink-systems/zlink-etcd/location"

// AbortCreation is abort (04 §2.8). The request is assumed validated
// (location.ValidateAbort encodes the key first: D-22's fix for invalid
// input).
//
//  1. The reservation already aborted → alreadyAborted, for any key (D-22,
//     kept).
//  2. Stale unless the row is this reservation's reserved row (same id,
//     version and creation target). Liveness is not required.
//  3. The row is deleted and its reserved capacity released; the
//     reservation's terminal becomes aborted. No version is consumed.
//
// A committed reservation answers stale; so does one whose row
// removeAllByOwner deleted (D-32).
func AbortCreation(tx *Tx, r location.AbortRequest) (location.ResultKind, error) {
	if reservationTerminal(tx, r.ReservationID) == RecordAborted {
		return location.KindAlreadyAborted, nil
	}
	key, err := creationKey(r.Key)
	if err != nil {
		return "", err
	}
	k := string(key)
	row, ok := authorityRow(tx, k)
	if !ok || !reservedRowFor(row, r.ReservationID, r.ExpectedStoreVersion, r.Target) {
		return location.KindStale, nil
	}
	a := row.Allocation
	ledger := newLedgerChanges()
	ledger.reserved(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, -1)
	if err := ledger.write(tx); err != nil {
		return "", err
	}
	tx.Delete(TableAuthority, k)
	tx.Put(TableReservationTerminals, r.ReservationID, ReservationTerminal{State: RecordAborted}, 0)
	tx.BumpScanRevision()
	return location.KindAborted, nil
}
