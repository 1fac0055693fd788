package etcdstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Actor transfers (03 §3; 03b E-15): per slot an active pointer and one
// record per transfer id, neither lease-attached; the recovery lease is a
// time in the record compared with the store clock.

// transferKeys are the keys a transition of ref reads.
func (s *Store) transferKeys(ref location.ActorTransferRef) []string {
	return []string{
		s.tableKey(rules.TableTransferActive, rules.TransferSlotKey(ref.MeshName, ref.ActorID)),
		s.tableKey(rules.TableTransferRecords, rules.TransferRecordKey(ref)),
	}
}

// PrepareActorTransfer starts a transfer (rules.PrepareActorTransfer). It
// implements location.ActorTransferStore.
func (s *Store) PrepareActorTransfer(ctx context.Context, r location.ActorTransferPrepareRequest) (location.ActorTransferWriteResult, error) {
	ref := location.ActorTransferRef{MeshName: r.MeshName, ActorID: r.ActorID, TransferID: r.TransferID}
	return decide(ctx, s, "PrepareActorTransfer", func() error { return location.ValidateTransferPrepare(r) }, s.transferKeys(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.PrepareActorTransfer(tx, r)
		})
}

// CommitActorTransfer commits the slot's prepared transfer
// (rules.CommitActorTransfer). It implements location.ActorTransferStore.
func (s *Store) CommitActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, "CommitActorTransfer", func() error { return location.ValidateTransferRef(ref) }, s.transferKeys(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.CommitActorTransfer(tx, ref, recoveryOwnerID)
		})
}

// ActivateActorTransfer activates the slot's committed transfer
// (rules.ActivateActorTransfer). It implements location.ActorTransferStore.
func (s *Store) ActivateActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, "ActivateActorTransfer", func() error { return location.ValidateTransferRef(ref) }, s.transferKeys(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.ActivateActorTransfer(tx, ref, recoveryOwnerID)
		})
}

// AbortActorTransfer aborts the slot's prepared transfer
// (rules.AbortActorTransfer). It implements location.ActorTransferStore.
func (s *Store) AbortActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, "AbortActorTransfer", func() error { return location.ValidateTransferRef(ref) }, s.transferKeys(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.AbortActorTransfer(tx, ref, recoveryOwnerID)
		})
}

// TakeOverActorTransfer passes an expired recovery lease to a successor
// (rules.TakeOverActorTransfer). It implements location.ActorTransferStore.
func (s *Store) TakeOverActorTransfer(ctx context.Context, ref location.ActorTransferRef, successorOwnerID string, ttl time.Duration) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, "TakeOverActorTransfer",
		func() error { return location.ValidateTransferTakeover(ref, successorOwnerID, ttl) }, s.transferKeys(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.TakeOverActorTransfer(tx, ref, successorOwnerID, ttl)
		})
}

// ResolveActorTransfer returns the slot's active transfer record, or nil. No
// validation, as the reference. It implements location.ActorTransferStore.
func (s *Store) ResolveActorTransfer(ctx context.Context, meshName, actorID string) (*location.ActorTransferRecord, error) {
	slot := s.tableKey(rules.TableTransferActive, rules.TransferSlotKey(meshName, actorID))
	return decide(ctx, s, "ResolveActorTransfer", nil, []string{slot},
		func(tx *rules.Tx) (*location.ActorTransferRecord, error) {
			rec, ok := rules.ActiveActorTransfer(tx, meshName, actorID)
			if !ok {
				return nil, nil
			}
			return &rec, nil
		})
}
