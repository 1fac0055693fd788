package rules

import (
	"bytes"

	"github.com/zlink-systems/zlink-etcd/location"
)

// CompleteCreation is completeCreation (04 §2.6), the end of an actor
// creation, which also publishes the creation's terminal. Its validation
// depends on time (the publication window must be open), so the decision
// runs location.ValidateCompleteCreation itself at tx.Now(): no terminal is
// ever published already expired (INV-11), however late a store runs the
// decision.
//
//  1. A visible terminal for the operation identity → alreadyCompleted with
//     that record; only the identity is compared (D-07, kept).
//  2. The reservation already ended committed, rejected or failed → stale.
//     An expired terminal counts as absent (D-06 fixed), so there is no
//     alreadyCompleted here.
//  3. Stale unless the row is this reservation's reserved row and the
//     creation target is live.
//  4. No version left → generationExhausted.
//  5. A version is issued and the reserved capacity released; created: the
//     row becomes active (capacity to the active ledger); rejected or failed:
//     the row is deleted (the version is consumed unseen, D-29). The terminal
//     is stored under the operation identity.
func CompleteCreation(tx *Tx, r location.CompleteCreationRequest) (location.CompleteCreationResult, error) {
	now := tx.Now()
	if err := location.ValidateCompleteCreation(r, now); err != nil {
		return location.CompleteCreationResult{}, err
	}
	pub := r.Completion.Terminal
	expiresAt := location.Millis(pub.OperationDeadline.Add(location.CreationTerminalRetention))
	if rec, ok := visibleTerminal(tx, pub.Operation); ok {
		return location.CompleteCreationResult{Kind: location.KindAlreadyCompleted, Terminal: terminalCopy(rec)}, nil
	}
	switch reservationTerminal(tx, r.ReservationID) {
	case RecordCommitted, string(location.TerminalRejected), string(location.TerminalFailed):
		return location.CompleteCreationResult{Kind: location.KindStale}, nil
	}
	key, err := creationKey(r.Key)
	if err != nil {
		return location.CompleteCreationResult{}, err
	}
	k := string(key)
	row, ok := authorityRow(tx, k)
	if !ok || !reservedRowFor(row, r.ReservationID, r.ExpectedStoreVersion, r.Target) ||
		!creationTargetLive(tx, row.Creation.Target) {
		return location.CompleteCreationResult{Kind: location.KindStale}, nil
	}
	if !tx.Source().CanIssue(1, 0, 0) {
		return location.CompleteCreationResult{Kind: location.KindGenerationExhausted}, nil
	}
	terminal := location.TerminalRecord{
		State:                  r.Completion.Kind,
		Operation:              pub.Operation,
		ReservationID:          r.ReservationID,
		ObjectKind:             location.ObjectActor,
		TerminalEnvelope:       bytes.Clone(pub.TerminalEnvelope),
		TerminalEnvelopeSHA256: bytes.Clone(pub.TerminalEnvelopeSHA256),
		ExpiresAt:              expiresAt,
		StoreNow:               now,
	}
	result := location.CompleteCreationResult{Kind: location.ResultKind(r.Completion.Kind), Terminal: terminalCopy(terminal)}
	if r.Completion.Kind == location.TerminalCreated {
		row, err = activateReservedRow(tx, k, row, r.ReservationID, r.Completion.ReadyPayload)
		if err != nil {
			return location.CompleteCreationResult{}, err
		}
		ready := AuthoritySnapshotOf(row, now)
		result.Ready = &ready
	} else {
		a := row.Allocation
		ledger := newLedgerChanges()
		ledger.reserved(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, -1)
		if err := ledger.write(tx); err != nil {
			return location.CompleteCreationResult{}, err
		}
		tx.Source().IssueVersion()
		tx.Delete(TableAuthority, k)
		tx.Put(TableReservationTerminals, r.ReservationID, ReservationTerminal{State: string(r.Completion.Kind)}, 0)
		tx.BumpScanRevision()
	}
	tx.Put(TableOperationTerminals, OperationKey(pub.Operation), terminal, 0)
	return result, nil
}
