package storecore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Authority records (04): reads, exchanges and scans of the records, object
// creation, relocation capacity and aggregate moves.

// ReadAuthority returns the authority record under key, or missing. It
// implements location.AuthorityStore.
func (s *Store) ReadAuthority(ctx context.Context, key location.AuthorityKey) (location.AuthorityReadResult, error) {
	return decide(ctx, s, Op{"ReadAuthority", rules.TableAuthority},
		func() error { return location.ValidateCanonicalAuthorityKey(key) },
		rowReads(rules.TableAuthority, string(key)),
		func(tx *rules.Tx) (location.AuthorityReadResult, error) { return rules.ReadAuthority(tx, key), nil })
}

// CompareExchangeAuthority applies m to the record under key when its
// version is expected (rules.CompareExchangeAuthority, which also guards
// the mutation's shape itself). It implements location.AuthorityStore.
func (s *Store) CompareExchangeAuthority(ctx context.Context, key location.AuthorityKey, expected location.StoreVersion, m location.AuthorityMutation) (location.CompareExchangeResult, error) {
	return decideOn[location.CompareExchangeResult](ctx, s, Op{"CompareExchangeAuthority", rules.TableAuthority},
		exchange{key: key, expected: expected, m: m})
}

// exchange is the input of CompareExchangeAuthority (decideOn).
type exchange struct {
	key      location.AuthorityKey
	expected location.StoreVersion
	m        location.AuthorityMutation
}

func (x *exchange) check() error { return location.ValidateCompareExchange(x.key, x.m) }

func (x *exchange) readSet(p Peek, rs *ReadSet) bool {
	exchangeReads(x, p, rs)
	return true
}

func (x *exchange) decide(tx *rules.Tx) (location.CompareExchangeResult, error) {
	return rules.CompareExchangeAuthority(tx, x.key, x.expected, x.m)
}

// ListAuthorities lists the records whose key starts with prefix, in byte
// order of the key, limit per page. A continuation cursor is valid only as
// long as the backend can continue the first page's snapshot; a cursor
// that is stale, belongs to another prefix or cannot be decoded answers
// scanExpired (decision E-10). It implements location.AuthorityStore.
func (s *Store) ListAuthorities(ctx context.Context, prefix, cursor string, limit int) (location.AuthorityScanResult, error) {
	return Do(ctx, s, Op{"ListAuthorities", rules.TableAuthority},
		func() error { return location.ValidateListAuthorities(prefix, cursor, limit) },
		func(ctx context.Context) (location.AuthorityScanResult, error) {
			return s.b.ScanAuthorities(ctx, prefix, cursor, limit)
		})
}

// Reserve reserves an authority record for a new object (rules.Reserve). It
// implements location.ObjectCreationStore.
func (s *Store) Reserve(ctx context.Context, r location.ReserveRequest) (location.ReserveResult, error) {
	return decide(ctx, s, Op{"Reserve", rules.TableAuthority},
		func() error { return location.ValidateReserve(r) },
		func(Peek) ReadSet { return reserveReads(&r) },
		func(tx *rules.Tx) (location.ReserveResult, error) { return rules.Reserve(tx, r) })
}

// Commit completes a spot creation (rules.Commit). It implements
// location.ObjectCreationStore.
func (s *Store) Commit(ctx context.Context, r location.CommitRequest) (location.CommitResult, error) {
	return decide(ctx, s, Op{"Commit", rules.TableAuthority},
		func() error { return location.ValidateCommit(r) },
		func(peek Peek) ReadSet { return creationReads(peek, r.Key, r.ReservationID, r.Target) },
		func(tx *rules.Tx) (location.CommitResult, error) { return rules.Commit(tx, r) })
}

// CompleteCreation completes an actor creation and publishes its terminal
// (rules.CompleteCreation). The request is validated at the store clock's
// time first; the decision checks the publication window again at its own
// time, so that no terminal is ever published already expired. The
// operation terminal, like the reservation terminal, is expected absent. It
// implements location.ObjectCreationStore.
func (s *Store) CompleteCreation(ctx context.Context, r location.CompleteCreationRequest) (location.CompleteCreationResult, error) {
	return decide(ctx, s, Op{"CompleteCreation", rules.TableAuthority},
		func() error { return location.ValidateCompleteCreation(r, s.b.Now()) },
		func(peek Peek) ReadSet {
			rs := creationReads(peek, r.Key, r.ReservationID, r.Target)
			rs.Absent = append(rs.Absent, Row(rules.TableOperationTerminals, rules.OperationKey(r.Completion.Terminal.Operation)))
			return rs
		},
		func(tx *rules.Tx) (location.CompleteCreationResult, error) { return rules.CompleteCreation(tx, r) })
}

// ReadCreationTerminal returns the terminal published for op while it is
// visible, else missing (rules.ReadCreationTerminal). With
// Options.PurgeExpiredTerminals an expired terminal is deleted as it is
// read; otherwise it stays, invisible, until a garbage collector removes it
// (decision E-11). It implements location.ObjectCreationStore.
func (s *Store) ReadCreationTerminal(ctx context.Context, op location.OperationIdentity) (location.TerminalReadResult, error) {
	return decide(ctx, s, Op{"ReadCreationTerminal", rules.TableOperationTerminals},
		func() error { return location.ValidateOperationIdentity(op) },
		rowReads(rules.TableOperationTerminals, rules.OperationKey(op)),
		func(tx *rules.Tx) (location.TerminalReadResult, error) {
			if s.opts.PurgeExpiredTerminals && rules.ExpiredCreationTerminal(tx, op) {
				tx.Delete(rules.TableOperationTerminals, rules.OperationKey(op))
			}
			return rules.ReadCreationTerminal(tx, op), nil
		})
}

// AbortCreation abandons a creation reservation (rules.AbortCreation). It
// implements location.ObjectCreationStore.
func (s *Store) AbortCreation(ctx context.Context, r location.AbortRequest) (location.ResultKind, error) {
	return decide(ctx, s, Op{"AbortCreation", rules.TableAuthority},
		func() error { return location.ValidateAbort(r) },
		func(peek Peek) ReadSet { return creationReads(peek, r.Key, r.ReservationID, r.Target) },
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortCreation(tx, r) })
}

// ReserveRelocationCapacity reserves target capacity for a relocation
// (rules.ReserveRelocationCapacity): the authority record is read, not
// written, so that the later newOwner exchange presents the same version.
// It implements location.RelocationCapacityStore.
func (s *Store) ReserveRelocationCapacity(ctx context.Context, r location.RelocationReservationRequest) (location.RelocationReserveResult, error) {
	return decide(ctx, s, Op{"ReserveRelocationCapacity", rules.TableRelocations},
		func() error { return location.ValidateRelocationReservation(r) },
		func(Peek) ReadSet {
			return ReadSet{Refs: []Ref{
				Row(rules.TableRelocations, r.ReservationID),
				Row(rules.TableAuthority, string(r.AuthorityKey)),
				Row(location.TableMeshNodes, rules.MeshNodeKey(r.TargetDescriptor)),
				Lease(r.TargetOwner.OwnerID),
			}}
		},
		func(tx *rules.Tx) (location.RelocationReserveResult, error) {
			return rules.ReserveRelocationCapacity(tx, r)
		})
}

// AbortRelocationCapacity releases a relocation reservation
// (rules.AbortRelocationCapacity). No validation, as the reference. It
// implements location.RelocationCapacityStore.
func (s *Store) AbortRelocationCapacity(ctx context.Context, fence location.RelocationFence) (location.ResultKind, error) {
	return decide(ctx, s, Op{"AbortRelocationCapacity", rules.TableRelocations}, nil,
		rowReads(rules.TableRelocations, string(fence)),
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortRelocationCapacity(tx, fence) })
}

// PrepareAggregate prepares an aggregate move (rules.PrepareAggregate): one
// decision over every participant; on etcd one transaction, refused before
// anything is written when it would exceed the cluster's limits (an error
// wrapping location.ErrTooLarge, decisions E-8, Q4). It implements
// location.AggregateStore.
func (s *Store) PrepareAggregate(ctx context.Context, r location.AggregatePrepareRequest) (location.AggregatePrepareResult, error) {
	return decide(ctx, s, Op{"PrepareAggregate", rules.TableAggregates},
		func() error { return location.ValidatePrepareAggregate(r) },
		func(Peek) ReadSet {
			fence := location.AggregateFence{AggregateID: r.AggregateID, AggregateGeneration: r.AggregateGeneration}
			refs := []Ref{
				Row(rules.TableAggregates, rules.AggregateKey(fence)),
				Row(location.TableMeshNodes, rules.MeshNodeKey(r.TargetDescriptor)),
				Lease(r.TargetOwner.OwnerID),
			}
			for _, p := range r.Participants {
				refs = append(refs, Row(rules.TableAuthority, string(p.AuthorityKey)))
			}
			return ReadSet{Refs: refs}
		},
		func(tx *rules.Tx) (location.AggregatePrepareResult, error) { return rules.PrepareAggregate(tx, r) })
}

// CommitAggregate commits a prepared aggregate (rules.CommitAggregate). No
// validation, as the reference. It implements location.AggregateStore.
func (s *Store) CommitAggregate(ctx context.Context, f location.AggregateFence) (location.ResultKind, error) {
	return decide(ctx, s, Op{"CommitAggregate", rules.TableAggregates}, nil,
		rowReads(rules.TableAggregates, rules.AggregateKey(f)),
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.CommitAggregate(tx, f) })
}

// AbortAggregate aborts a prepared aggregate (rules.AbortAggregate). No
// validation, as the reference. It implements location.AggregateStore.
func (s *Store) AbortAggregate(ctx context.Context, f location.AggregateFence) (location.ResultKind, error) {
	return decide(ctx, s, Op{"AbortAggregate", rules.TableAggregates}, nil,
		rowReads(rules.TableAggregates, rules.AggregateKey(f)),
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortAggregate(tx, f) })
}
