package etcdstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Object creation (04 §2.4–2.8): reserve an authority record, then commit
// (spots) or complete (actors, publishing a creation terminal), or abort.
// Each is one guarded transaction over the record, its reservation
// terminal, the target's descriptor, owner key and capacity ledger.

// creationKey returns the etcd key of the record a creation key names ("" if
// the key cannot be encoded; validation reports that first).
func (s *Store) creationKey(k location.ObjectCreationKey) string {
	key, err := location.EncodeAuthorityKey(k.Kind, k.GlobalID)
	if err != nil {
		return ""
	}
	return s.authKey(key)
}

// creationPrefetch is what a creation step reads first: the record, the
// reservation terminal, the target's descriptor and owner key.
func (s *Store) creationPrefetch(k location.ObjectCreationKey, reservationID string, target location.CreationTarget) []string {
	out := []string{
		s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(target.Descriptor())),
		s.layout.OwnerKey(target.Owner.OwnerID),
	}
	if key := s.creationKey(k); key != "" {
		out = append(out, key)
	}
	if reservationID != "" {
		out = append(out, s.tableKey(rules.TableReservationTerminals, reservationID))
	}
	return out
}

// Reserve reserves an authority record for a new object (rules.Reserve). The
// reservation id is chosen once per call, so every retry reserves under the
// same id. It implements location.ObjectCreationStore.
func (s *Store) Reserve(ctx context.Context, r location.ReserveRequest) (location.ReserveResult, error) {
	return decide(ctx, s, "Reserve", func() error { return location.ValidateReserve(r) },
		s.creationPrefetch(r.Key, "", r.Target),
		func(tx *rules.Tx) (location.ReserveResult, error) { return rules.Reserve(tx, r) })
}

// Commit completes a spot creation (rules.Commit). It implements
// location.ObjectCreationStore.
func (s *Store) Commit(ctx context.Context, r location.CommitRequest) (location.CommitResult, error) {
	return decide(ctx, s, "Commit", func() error { return location.ValidateCommit(r) },
		s.creationPrefetch(r.Key, r.ReservationID, r.Target),
		func(tx *rules.Tx) (location.CommitResult, error) { return rules.Commit(tx, r) })
}

// CompleteCreation completes an actor creation and publishes its terminal
// (rules.CompleteCreation). The publication window is validated at the
// operation's time. Terminals stay readable until their expiry and are
// purged by the garbage collector afterwards (decision E-11). It implements
// location.ObjectCreationStore.
func (s *Store) CompleteCreation(ctx context.Context, r location.CompleteCreationRequest) (location.CompleteCreationResult, error) {
	prefetch := append(s.creationPrefetch(r.Key, r.ReservationID, r.Target),
		s.tableKey(rules.TableOperationTerminals, rules.OperationKey(r.Completion.Terminal.Operation)))
	return decideAt(ctx, s, "CompleteCreation",
		func(now time.Time) error { return location.ValidateCompleteCreation(r, now) }, prefetch,
		func(tx *rules.Tx) (location.CompleteCreationResult, error) { return rules.CompleteCreation(tx, r) })
}

// ReadCreationTerminal returns the terminal published for op while it is
// visible, else missing (rules.ReadCreationTerminal). It implements
// location.ObjectCreationStore.
func (s *Store) ReadCreationTerminal(ctx context.Context, op location.OperationIdentity) (location.TerminalReadResult, error) {
	return decide(ctx, s, "ReadCreationTerminal", func() error { return location.ValidateOperationIdentity(op) },
		[]string{s.tableKey(rules.TableOperationTerminals, rules.OperationKey(op))},
		func(tx *rules.Tx) (location.TerminalReadResult, error) {
			return rules.ReadCreationTerminal(tx, op), nil
		})
}

// AbortCreation abandons a reservation (rules.AbortCreation). It implements
// location.ObjectCreationStore.
func (s *Store) AbortCreation(ctx context.Context, r location.AbortRequest) (location.ResultKind, error) {
	return decide(ctx, s, "AbortCreation", func() error { return location.ValidateAbort(r) },
		s.creationPrefetch(r.Key, r.ReservationID, r.Target),
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortCreation(tx, r) })
}
