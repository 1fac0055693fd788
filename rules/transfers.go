package rules

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Actor transfers (03 §3). A slot (mesh, actor) has records keyed by
// transfer id (TableTransferRecords) and at most one active transfer
// (TableTransferActive). Records are never deleted. Transfers bump no
// change stamp.

// transferStored is a stored result carrying a copy of the record.
func transferStored(r location.ActorTransferRecord) location.ActorTransferWriteResult {
	c := r.Clone()
	return location.ActorTransferWriteResult{Status: location.TransferStored, Record: &c}
}

// transferOutcome is a result without a record.
func transferOutcome(s location.TransferWriteStatus) location.ActorTransferWriteResult {
	return location.ActorTransferWriteResult{Status: s}
}

// wholeMillis truncates a TTL to whole milliseconds.
func wholeMillis(ttl time.Duration) time.Duration { return ttl.Truncate(time.Millisecond) }

// PrepareActorTransfer is prepareActorTransfer (03 §3.2). With an active
// transfer in the slot, the same transfer id still prepared answers stored
// with the existing record, unchanged (anomaly A-26: the request's other
// fields are not compared); any other active transfer is a conflict.
// Otherwise a new prepared record (participants copied, recovery lease
// now + TTL) replaces any finished record of that id and becomes active.
func PrepareActorTransfer(tx *Tx, r location.ActorTransferPrepareRequest) (location.ActorTransferWriteResult, error) {
	slot := TransferSlotKey(r.MeshName, r.ActorID)
	active, _, hasActive, err := readRow[TransferPointer](tx, TableTransferActive, slot)
	if err != nil {
		return location.ActorTransferWriteResult{}, err
	}
	if hasActive {
		existing, _, ok, err := readRow[location.ActorTransferRecord](tx, TableTransferRecords,
			TransferRecordKey(location.ActorTransferRef{MeshName: r.MeshName, ActorID: r.ActorID, TransferID: active.TransferID}))
		if err != nil {
			return location.ActorTransferWriteResult{}, err
		}
		if active.TransferID == r.TransferID && ok && existing.State == location.TransferPrepared {
			return transferStored(existing), nil
		}
		return transferOutcome(location.TransferRejectedConflict), nil
	}
	now := tx.Now()
	rec := location.ActorTransferRecord{
		MeshName:                r.MeshName,
		ActorID:                 r.ActorID,
		TransferID:              r.TransferID,
		Source:                  r.Source,
		Target:                  r.Target,
		ExpectedActorGeneration: r.ExpectedActorGeneration,
		ExpectedMembershipEpoch: r.ExpectedMembershipEpoch,
		Participants:            participantSet(r.Participants),
		State:                   location.TransferPrepared,
		RecoveryOwnerID:         r.RecoveryOwnerID,
		RecoveryLeaseExpiresAt:  now.Add(wholeMillis(r.RecoveryLeaseTTL)),
		UpdatedAt:               now,
	}
	ref := location.ActorTransferRef{MeshName: r.MeshName, ActorID: r.ActorID, TransferID: r.TransferID}
	tx.Put(TableTransferRecords, TransferRecordKey(ref), rec, 0)
	tx.Put(TableTransferActive, slot, TransferPointer{TransferID: r.TransferID}, 0)
	return transferStored(rec), nil
}

// CommitActorTransfer moves the slot's active transfer ref from prepared to
// committed (03 §3.3).
func CommitActorTransfer(tx *Tx, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return transitionTransfer(tx, ref, recoveryOwnerID, location.TransferPrepared, location.TransferCommitted, false)
}

// ActivateActorTransfer moves the slot's active transfer ref from committed
// to activated and leaves the slot without an active transfer.
func ActivateActorTransfer(tx *Tx, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return transitionTransfer(tx, ref, recoveryOwnerID, location.TransferCommitted, location.TransferActivated, true)
}

// AbortActorTransfer moves the slot's active transfer ref from prepared to
// aborted and leaves the slot without an active transfer.
func AbortActorTransfer(tx *Tx, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return transitionTransfer(tx, ref, recoveryOwnerID, location.TransferPrepared, location.TransferAborted, true)
}

// transitionTransfer is the shared transition (03 §3.3): notFound unless ref
// is the slot's active transfer, invalidState unless the record is in the
// required state, rejectedConflict unless recoveryOwnerID is the recorded
// recovery owner (whose lease is not checked, anomaly A-27).
func transitionTransfer(tx *Tx, ref location.ActorTransferRef, recoveryOwnerID string, required, next location.TransferState, clearActive bool) (location.ActorTransferWriteResult, error) {
	slot := TransferSlotKey(ref.MeshName, ref.ActorID)
	rec, _, ok, err := readRow[location.ActorTransferRecord](tx, TableTransferRecords, TransferRecordKey(ref))
	if err != nil {
		return location.ActorTransferWriteResult{}, err
	}
	active, _, hasActive, err := readRow[TransferPointer](tx, TableTransferActive, slot)
	if err != nil {
		return location.ActorTransferWriteResult{}, err
	}
	if !ok || !hasActive || active.TransferID != ref.TransferID {
		return transferOutcome(location.TransferNotFound), nil
	}
	if rec.State != required {
		return transferOutcome(location.TransferInvalidState), nil
	}
	if rec.RecoveryOwnerID != recoveryOwnerID {
		return transferOutcome(location.TransferRejectedConflict), nil
	}
	updated := rec.Clone()
	updated.State, updated.UpdatedAt = next, tx.Now()
	tx.Put(TableTransferRecords, TransferRecordKey(ref), updated, 0)
	if clearActive {
		tx.Delete(TableTransferActive, slot)
	}
	return transferStored(updated), nil
}

// TakeOverActorTransfer is takeOverActorTransfer (03 §3.4): a prepared or
// committed record whose recovery lease has expired passes to successor with
// a recovery lease of now + TTL; state and active pointer stay. The active
// pointer is not consulted (a finished record answers invalidState).
func TakeOverActorTransfer(tx *Tx, ref location.ActorTransferRef, successorOwnerID string, ttl time.Duration) (location.ActorTransferWriteResult, error) {
	rec, _, ok, err := readRow[location.ActorTransferRecord](tx, TableTransferRecords, TransferRecordKey(ref))
	if err != nil {
		return location.ActorTransferWriteResult{}, err
	}
	if !ok {
		return transferOutcome(location.TransferNotFound), nil
	}
	if rec.State != location.TransferPrepared && rec.State != location.TransferCommitted {
		return transferOutcome(location.TransferInvalidState), nil
	}
	now := tx.Now()
	if rec.RecoveryLeaseExpiresAt.After(now) {
		return transferOutcome(location.TransferRejectedConflict), nil
	}
	updated := rec.Clone()
	updated.RecoveryOwnerID = successorOwnerID
	updated.RecoveryLeaseExpiresAt = now.Add(wholeMillis(ttl))
	updated.UpdatedAt = now
	tx.Put(TableTransferRecords, TransferRecordKey(ref), updated, 0)
	return transferStored(updated), nil
}

// ActiveActorTransfer returns a copy of the slot's active transfer record
// (resolveActorTransfer, 03 §3.5).
func ActiveActorTransfer(tx *Tx, meshName, actorID string) (location.ActorTransferRecord, bool) {
	active, _, ok, err := readRow[TransferPointer](tx, TableTransferActive, TransferSlotKey(meshName, actorID))
	if err != nil || !ok {
		return location.ActorTransferRecord{}, false
	}
	rec, _, ok, err := readRow[location.ActorTransferRecord](tx, TableTransferRecords,
		TransferRecordKey(location.ActorTransferRef{MeshName: meshName, ActorID: actorID, TransferID: active.TransferID}))
	if err != nil || !ok {
		return location.ActorTransferRecord{}, false
	}
	return rec.Clone(), true
}

// participantSet copies participants as a set: first occurrences in order.
func participantSet(ids []location.RoutingID) []location.RoutingID {
	out := make([]location.RoutingID, 0, len(ids))
	seen := make(map[location.RoutingID]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
