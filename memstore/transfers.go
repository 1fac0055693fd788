package memstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// PrepareActorTransfer starts a transfer (rules.PrepareActorTransfer).
func (s *Store) PrepareActorTransfer(ctx context.Context, r location.ActorTransferPrepareRequest) (location.ActorTransferWriteResult, error) {
	validate := func() error { return location.ValidateTransferPrepare(r) }
	return decide(ctx, s, "PrepareActorTransfer", validate, func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
		return rules.PrepareActorTransfer(tx, r)
	})
}

// CommitActorTransfer commits the slot's prepared transfer
// (rules.CommitActorTransfer).
func (s *Store) CommitActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	validate := func() error { return location.ValidateTransferRef(ref) }
	return decide(ctx, s, "CommitActorTransfer", validate, func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
		return rules.CommitActorTransfer(tx, ref, recoveryOwnerID)
	})
}

// ActivateActorTransfer activates the slot's committed transfer
// (rules.ActivateActorTransfer).
func (s *Store) ActivateActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	validate := func() error { return location.ValidateTransferRef(ref) }
	return decide(ctx, s, "ActivateActorTransfer", validate, func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
		return rules.ActivateActorTransfer(tx, ref, recoveryOwnerID)
	})
}

// AbortActorTransfer aborts the slot's prepared transfer
// (rules.AbortActorTransfer).
func (s *Store) AbortActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	validate := func() error { return location.ValidateTransferRef(ref) }
	return decide(ctx, s, "AbortActorTransfer", validate, func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
		return rules.AbortActorTransfer(tx, ref, recoveryOwnerID)
	})
}

// TakeOverActorTransfer passes an expired recovery lease to a successor
// (rules.TakeOverActorTransfer).
func (s *Store) TakeOverActorTransfer(ctx context.Context, ref location.ActorTransferRef, successorOwnerID string, ttl time.Duration) (location.ActorTransferWriteResult, error) {
	validate := func() error { return location.ValidateTransferTakeover(ref, successorOwnerID, ttl) }
	return decide(ctx, s, "TakeOverActorTransfer", validate, func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
		return rules.TakeOverActorTransfer(tx, ref, successorOwnerID, ttl)
	})
}

// ResolveActorTransfer returns a copy of the slot's active transfer record,
// or nil. No validation, as the reference.
func (s *Store) ResolveActorTransfer(ctx context.Context, meshName, actorID string) (*location.ActorTransferRecord, error) {
	return decide(ctx, s, "ResolveActorTransfer", nil, func(tx *rules.Tx) (*location.ActorTransferRecord, error) {
		rec, ok := rules.ActiveActorTransfer(tx, meshName, actorID)
		if !ok {
			return nil, nil
		}
		return &rec, nil
	})
}
