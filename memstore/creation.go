package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Reserve reserves an authority record for a new object. It implements
// location.ObjectCreationStore.
func (s *Store) Reserve(ctx context.Context, r location.ReserveRequest) (location.ReserveResult, error) {
	return decide(ctx, s, "Reserve",
		func() error { return location.ValidateReserve(r) },
		func(tx *rules.Tx) (location.ReserveResult, error) { return rules.Reserve(tx, r) })
}

// Commit completes a spot creation. It implements
// location.ObjectCreationStore.
func (s *Store) Commit(ctx context.Context, r location.CommitRequest) (location.CommitResult, error) {
	return decide(ctx, s, "Commit",
		func() error { return location.ValidateCommit(r) },
		func(tx *rules.Tx) (location.CommitResult, error) { return rules.Commit(tx, r) })
}

// CompleteCreation completes an actor creation and publishes its terminal.
// The request is validated by the decision, at the decision's time (the
// publication window depends on it). It implements
// location.ObjectCreationStore.
func (s *Store) CompleteCreation(ctx context.Context, r location.CompleteCreationRequest) (location.CompleteCreationResult, error) {
	return decide(ctx, s, "CompleteCreation", nil,
		func(tx *rules.Tx) (location.CompleteCreationResult, error) { return rules.CompleteCreation(tx, r) })
}

// ReadCreationTerminal returns the terminal published for op while it is
// visible; an expired terminal reads as missing and is purged. It implements
// location.ObjectCreationStore.
func (s *Store) ReadCreationTerminal(ctx context.Context, op location.OperationIdentity) (location.TerminalReadResult, error) {
	return decide(ctx, s, "ReadCreationTerminal",
		func() error { return location.ValidateOperationIdentity(op) },
		func(tx *rules.Tx) (location.TerminalReadResult, error) {
			if rules.ExpiredCreationTerminal(tx, op) {
				tx.Delete(rules.TableOperationTerminals, rules.OperationKey(op))
			}
			return rules.ReadCreationTerminal(tx, op), nil
		})
}

// AbortCreation abandons a creation reservation. It implements
// location.ObjectCreationStore.
func (s *Store) AbortCreation(ctx context.Context, r location.AbortRequest) (location.ResultKind, error) {
	return decide(ctx, s, "AbortCreation",
		func() error { return location.ValidateAbort(r) },
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortCreation(tx, r) })
}
