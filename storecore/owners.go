package storecore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Owner leases, what owners hold (transfers, RemoveAllByOwner), change
// stamps and change watches.

// ClaimOwnerLease issues a new lease for ownerID: conflict while the id
// holds a live lease (even for the holder itself, A-35), otherwise claimed
// with a new generation and an expiry of now + ttl (whole milliseconds). It
// implements location.OwnerLeaseStore.
func (s *Store) ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	return Do(ctx, s, Op{Name: "ClaimOwnerLease"}, func() error { return validateLease(ownerID, ttl) },
		func(ctx context.Context) (location.OwnerLeaseClaimResult, error) {
			return s.b.Leases().Claim(ctx, ownerID, ttl)
		})
}

// ReadOwnerLease reports ownerID's live lease, or missing. It implements
// location.OwnerLeaseStore.
func (s *Store) ReadOwnerLease(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	return Do(ctx, s, Op{Name: "ReadOwnerLease"}, func() error { return location.ValidateOwnerID(ownerID) },
		func(ctx context.Context) (location.OwnerLeaseReadResult, error) {
			return s.b.Leases().Read(ctx, ownerID)
		})
}

// RenewOwnerLease moves the expiry of t's live lease to now + ttl (which may
// be earlier than before, A-36); a lease that is not live with t's
// generation answers stale. It implements location.OwnerLeaseStore.
func (s *Store) RenewOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	return Do(ctx, s, Op{Name: "RenewOwnerLease"}, func() error { return validateLease(t.OwnerID, ttl) },
		func(ctx context.Context) (location.OwnerLeaseRenewResult, error) {
			return s.b.Leases().Renew(ctx, t, ttl)
		})
}

// ReleaseOwnerLease ends t's lease when its generation matches (released),
// otherwise answers stale; the owner's rows stay. No validation, as the
// reference. It implements location.OwnerLeaseStore.
func (s *Store) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	return Do(ctx, s, Op{Name: "ReleaseOwnerLease"}, nil,
		func(ctx context.Context) (location.ResultKind, error) { return s.b.Leases().Release(ctx, t) })
}

// ReadOwnerLiveness reports which of ownerIDs hold a live lease, in their
// order (an empty list answers an empty one without reading). It implements
// location.OwnerLivenessReader.
func (s *Store) ReadOwnerLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	return Do(ctx, s, Op{Name: "ReadOwnerLiveness"}, func() error { return location.ValidateOwnerIDs(ownerIDs) },
		func(ctx context.Context) ([]location.OwnerLiveness, error) {
			if len(ownerIDs) == 0 {
				return []location.OwnerLiveness{}, nil
			}
			return s.b.ReadLiveness(ctx, ownerIDs)
		})
}

// ExpireOwnerLease ends ownerID's current lease at once, as if its TTL had
// elapsed; rows stay, and an owner without a lease is left alone. It is the
// conformance harness's hook (conformance.Fixture.ExpireOwnerLease).
func (s *Store) ExpireOwnerLease(ctx context.Context, ownerID string) error {
	_, err := Do(ctx, s, Op{Name: "ExpireOwnerLease"}, nil,
		func(ctx context.Context) (struct{}, error) { return struct{}{}, s.b.Leases().Expire(ctx, ownerID) })
	return err
}

// validateLease checks an owner id, then a TTL.
func validateLease(ownerID string, ttl time.Duration) error {
	if err := location.ValidateOwnerID(ownerID); err != nil {
		return err
	}
	_, err := location.ValidateLeaseTTL(ttl)
	return err
}

// RemoveAllByOwner removes everything an owner holds (03 §2), if the
// token's lease is live with exactly its generation (else nothing, and 0):
// the authority records of the exact token (their capacity released), then
// every location row of its owner id, whatever lease generation wrote it
// table by table in the reference's order (rules.OwnedTables), each
// with its stamps (rules.RemoveLocationRow). The answer counts what was
// removed; on an error, what was removed before it. The lease itself, row
// generation counters and transfers are untouched. It implements
// location.OwnerCleanup.
func (s *Store) RemoveAllByOwner(ctx context.Context, t location.OwnerToken) (int64, error) {
	return Do(ctx, s, Op{Name: "RemoveAllByOwner"}, nil,
		func(ctx context.Context) (int64, error) { return s.b.RemoveOwned(ctx, t) })
}

// PrepareActorTransfer starts a transfer (rules.PrepareActorTransfer). It
// implements location.ActorTransferStore.
func (s *Store) PrepareActorTransfer(ctx context.Context, r location.ActorTransferPrepareRequest) (location.ActorTransferWriteResult, error) {
	ref := location.ActorTransferRef{MeshName: r.MeshName, ActorID: r.ActorID, TransferID: r.TransferID}
	return decide(ctx, s, Op{"PrepareActorTransfer", rules.TableTransferRecords},
		func() error { return location.ValidateTransferPrepare(r) }, transferReads(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.PrepareActorTransfer(tx, r)
		})
}

// CommitActorTransfer commits the slot's prepared transfer
// (rules.CommitActorTransfer). It implements location.ActorTransferStore.
func (s *Store) CommitActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, Op{"CommitActorTransfer", rules.TableTransferRecords},
		func() error { return location.ValidateTransferRef(ref) }, transferReads(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.CommitActorTransfer(tx, ref, recoveryOwnerID)
		})
}

// ActivateActorTransfer activates the slot's committed transfer
// (rules.ActivateActorTransfer). It implements location.ActorTransferStore.
func (s *Store) ActivateActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, Op{"ActivateActorTransfer", rules.TableTransferRecords},
		func() error { return location.ValidateTransferRef(ref) }, transferReads(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.ActivateActorTransfer(tx, ref, recoveryOwnerID)
		})
}

// AbortActorTransfer aborts the slot's prepared transfer
// (rules.AbortActorTransfer). It implements location.ActorTransferStore.
func (s *Store) AbortActorTransfer(ctx context.Context, ref location.ActorTransferRef, recoveryOwnerID string) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, Op{"AbortActorTransfer", rules.TableTransferRecords},
		func() error { return location.ValidateTransferRef(ref) }, transferReads(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.AbortActorTransfer(tx, ref, recoveryOwnerID)
		})
}

// TakeOverActorTransfer passes an expired recovery lease to a successor
// (rules.TakeOverActorTransfer). It implements location.ActorTransferStore.
func (s *Store) TakeOverActorTransfer(ctx context.Context, ref location.ActorTransferRef, successorOwnerID string, ttl time.Duration) (location.ActorTransferWriteResult, error) {
	return decide(ctx, s, Op{"TakeOverActorTransfer", rules.TableTransferRecords},
		func() error { return location.ValidateTransferTakeover(ref, successorOwnerID, ttl) }, transferReads(ref),
		func(tx *rules.Tx) (location.ActorTransferWriteResult, error) {
			return rules.TakeOverActorTransfer(tx, ref, successorOwnerID, ttl)
		})
}

// ResolveActorTransfer returns a copy of the slot's active transfer record,
// or nil. No validation, as the reference. It implements
// location.ActorTransferStore.
func (s *Store) ResolveActorTransfer(ctx context.Context, meshName, actorID string) (*location.ActorTransferRecord, error) {
	return decide(ctx, s, Op{"ResolveActorTransfer", rules.TableTransferRecords}, nil,
		rowReads(rules.TableTransferActive, rules.TransferSlotKey(meshName, actorID)),
		func(tx *rules.Tx) (*location.ActorTransferRecord, error) {
			rec, ok := rules.ActiveActorTransfer(tx, meshName, actorID)
			return resolved(rec, 0, ok), nil
		})
}

// GetChangeStamp returns the change stamp of (scope.Kind, scope.MeshName): a
// nil or empty mesh name selects the kind's global counter; ChannelName is
// ignored (anomaly A-06, reproduced: a client-server channel is passed as
// MeshName). A stamp is 0 before the first change of its scope and moves on
// every change, never otherwise: by exactly 1 per changed row in memory (03
// §4), by at least 1 per transaction on etcd (decision E-5). No validation.
// It implements location.ChangeStampReader.
func (s *Store) GetChangeStamp(ctx context.Context, scope location.ChangeStampScope) (int64, error) {
	return Do(ctx, s, Op{Name: "GetChangeStamp"}, nil, func(ctx context.Context) (int64, error) {
		c := rules.StampCounter{Kind: scope.Kind}
		if scope.MeshName != nil {
			c.Mesh = *scope.MeshName
		}
		return s.b.ChangeStamp(ctx, c)
	})
}

// GetMeshNodeChangeStamp returns a per-mesh stamp that moves whenever a
// mesh-node row of the mesh is created, really updated, taken over or
// removed (also by RemoveAllByOwner and garbage collection), and never
// otherwise. Always ok. It implements location.MeshNodeChangeStamper.
func (s *Store) GetMeshNodeChangeStamp(ctx context.Context, meshName string) (int64, bool, error) {
	stamp, err := Do(ctx, s, Op{Name: "GetMeshNodeChangeStamp"}, nil,
		func(ctx context.Context) (int64, error) { return s.b.MeshNodeChangeStamp(ctx, meshName) })
	if err != nil {
		return 0, false, err
	}
	return stamp, true, nil
}

// WatchChanges implements location.ChangeWatcher: a value is sent on the
// returned channel soon after a row of one of the given tables (every table
// when none is given) changes, and, when one of them is a location table
// (rules.LocationTables) or none is given, after an owner lease ends as the
// backend learns of it (etcd: its owner key is deleted; memory: a release
// or ExpireOwnerLease); notifications the receiver has not taken yet
// coalesce into one. The channel is closed when ctx is done.
func (s *Store) WatchChanges(ctx context.Context, tables ...location.Table) (<-chan struct{}, error) {
	return Do(ctx, s, Op{Name: "WatchChanges"}, nil,
		func(ctx context.Context) (<-chan struct{}, error) { return s.b.Watch(ctx, tables) })
}
