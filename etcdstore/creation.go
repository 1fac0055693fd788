package etcdstore

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
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

// reservePrefetch is everything Reserve reads when the key is free: the new
// record and its entry-spot claim (both usually absent, so never cached: the
// record's object generation must come from a fresh read anyway, decision
// E-3), the target's descriptor and owner key, and the capacity ledger
// buckets admission checks (actor, spot, and the request's spot type). One
// read of them all, then the commit.
func (s *Store) reservePrefetch(r location.ReserveRequest) []string {
	out := []string{
		s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(r.Target.Descriptor())),
		s.layout.OwnerKey(r.Target.Owner.OwnerID),
	}
	if key, err := location.EncodeAuthorityKey(r.Key.Kind, r.Key.GlobalID); err == nil {
		out = append(out, s.authKey(key), s.tableKey(rules.TableEntryClaims, string(key)))
	}
	node, lifecycle := r.Target.Descriptor(), r.Target.NodeLifecycleGeneration
	out = append(out, s.bucketKey(node, lifecycle, rules.BucketActor, ""), s.bucketKey(node, lifecycle, rules.BucketSpot, ""))
	if t := r.Capacity.SpotType; t != nil {
		out = append(out, s.bucketKey(node, lifecycle, string(t.ObjectKind), t.StableType))
	}
	return out
}

// creationPrefetch is what a later creation step (Commit, CompleteCreation,
// AbortCreation) reads: the record, the target's descriptor and owner key,
// the capacity ledger buckets the record's allocation moves, and the
// reservation terminal, expected absent (named after a fresh id, it exists
// only once the reservation ended). After this process's own Reserve the
// record, descriptor, owner key and buckets are cached, so the step is one
// transaction, which also asserts the terminal's absence. Without a cached
// record, the buckets are guessed from the target (its actor and spot
// buckets and, when its descriptor is cached, its spot types' buckets) and
// read with the rest.
func (s *Store) creationPrefetch(k location.ObjectCreationKey, reservationID string, target location.CreationTarget) txn.Prefetch {
	p := txn.Prefetch{Keys: []string{
		s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(target.Descriptor())),
		s.layout.OwnerKey(target.Owner.OwnerID),
	}}
	if key := s.creationKey(k); key != "" {
		p.Keys = append(p.Keys, key)
		p.Keys = append(p.Keys, s.creationBuckets(key, target)...)
	}
	if reservationID != "" {
		p.Absent = append(p.Absent, s.tableKey(rules.TableReservationTerminals, reservationID))
	}
	return p
}

// creationBuckets returns the ledger buckets a creation step of the record
// at key will move: those of the cached record's allocation, else a guess
// from the target.
func (s *Store) creationBuckets(key string, target location.CreationTarget) []string {
	if o, ok := s.engine.Cached(key); ok && o.Present {
		if rec, _, err := sharedRecord(rules.TableAuthority, o); err == nil {
			if row, ok := rec.Value.(rules.AuthorityRow); ok {
				return s.allocationBuckets(row.Allocation)
			}
		}
	}
	node, lifecycle := target.Descriptor(), target.NodeLifecycleGeneration
	out := []string{s.bucketKey(node, lifecycle, rules.BucketActor, ""), s.bucketKey(node, lifecycle, rules.BucketSpot, "")}
	if o, ok := s.engine.Cached(s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(node))); ok && o.Present {
		if rec, _, err := sharedRecord(location.TableMeshNodes, o); err == nil {
			if d, ok := rec.Value.(location.MeshNodeDescriptor); ok {
				for _, t := range d.PopulationCapacity.SpotTypes {
					out = append(out, s.bucketKey(node, lifecycle, string(t.ObjectKind), t.StableType))
				}
			}
		}
	}
	return out
}

// allocationBuckets returns the ledger buckets an allocation's capacity
// occupies (those rules' ledger changes move): actor and spot when counted,
// and the spot type's.
func (s *Store) allocationBuckets(a location.PlacementAllocation) []string {
	node, lifecycle, c := a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity
	var out []string
	if c.Actors != 0 {
		out = append(out, s.bucketKey(node, lifecycle, rules.BucketActor, ""))
	}
	if c.Spots != 0 {
		out = append(out, s.bucketKey(node, lifecycle, rules.BucketSpot, ""))
	}
	if c.SpotType != nil {
		out = append(out, s.bucketKey(node, lifecycle, string(c.SpotType.ObjectKind), c.SpotType.StableType))
	}
	return out
}

// bucketKey returns the etcd key of a capacity ledger bucket.
func (s *Store) bucketKey(node location.MeshNodeKey, lifecycle int64, name, stableType string) string {
	return s.tableKey(rules.TableLedger, rules.Bucket{Descriptor: node, Lifecycle: lifecycle, Name: name, StableType: stableType}.Key())
}

// Reserve reserves an authority record for a new object (rules.Reserve). The
// reservation id is chosen once per call, so every retry reserves under the
// same id. It implements location.ObjectCreationStore.
func (s *Store) Reserve(ctx context.Context, r location.ReserveRequest) (location.ReserveResult, error) {
	return decide(ctx, s, "Reserve", func() error { return location.ValidateReserve(r) },
		s.reservePrefetch(r),
		func(tx *rules.Tx) (location.ReserveResult, error) { return rules.Reserve(tx, r) })
}

// Commit completes a spot creation (rules.Commit). It implements
// location.ObjectCreationStore.
func (s *Store) Commit(ctx context.Context, r location.CommitRequest) (location.CommitResult, error) {
	return decideAt(ctx, s, "Commit", func(time.Time) error { return location.ValidateCommit(r) },
		s.creationPrefetch(r.Key, r.ReservationID, r.Target),
		func(tx *rules.Tx) (location.CommitResult, error) { return rules.Commit(tx, r) })
}

// CompleteCreation completes an actor creation and publishes its terminal
// (rules.CompleteCreation). The publication window is validated at the
// operation's time. Terminals stay readable until their expiry and are
// purged by the garbage collector afterwards (decision E-11). The operation
// terminal, like the reservation terminal, is expected absent. It implements
// location.ObjectCreationStore.
func (s *Store) CompleteCreation(ctx context.Context, r location.CompleteCreationRequest) (location.CompleteCreationResult, error) {
	prefetch := s.creationPrefetch(r.Key, r.ReservationID, r.Target)
	prefetch.Absent = append(prefetch.Absent, s.tableKey(rules.TableOperationTerminals, rules.OperationKey(r.Completion.Terminal.Operation)))
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
	return decideAt(ctx, s, "AbortCreation", func(time.Time) error { return location.ValidateAbort(r) },
		s.creationPrefetch(r.Key, r.ReservationID, r.Target),
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortCreation(tx, r) })
}
