package etcdstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// What every removal batch holds besides its rows: the owner key's compare
// (and its read back in the Else branch), the change stamps it touches, and
// room to spare; in operations and (generously) in request bytes.
const (
	removalReserveOps   = 4
	removalReserveBytes = 4096
)

// ledgerValueBytes bounds the size of a capacity ledger bucket's value.
const ledgerValueBytes = 256

// batchOutcome is the result of one removal batch.
type batchOutcome struct {
	removed int64
	// stale counts the owner-index entries deleted because their row is
	// gone or belongs to another owner id.
	stale int64
	// stop: the guard that every batch needs no longer holds (the owner's
	// lease is not live, or for the collector, came back).
	stop bool
}

// RemoveOwned removes the token's authority records (exact owner token;
// capacity released) and every location row of its owner id (any lease
// generation, with entry-spot claims and stamps), if the token's lease is
// live (03 §2, storecore.Store.RemoveAllByOwner). The owner index lists the
// rows. This is the store's one batched operation (decision E-8): rows go
// in transactions as large as the cluster's limits allow (nextBatch),
// authority records first, then the location tables in the reference's
// order (sweepOrder); each transaction re-asserts the token's lease
// (CreateRevision of the owner key) and every row it removes. The answer
// counts what was removed; it stops when the lease is lost midway (0 when
// it is not live at the start). On an error, the count removed so far is
// returned with it. It implements storecore.Backend.
func (b backend) RemoveOwned(ctx context.Context, t location.OwnerToken) (int64, error) {
	const op = "RemoveAllByOwner"
	s := b.s
	entries, err := s.indexEntries(ctx, t.OwnerID)
	if err != nil {
		return 0, txn.Unavailable("read the owner index", err)
	}
	owned := func(tx *rules.Tx, e indexEntry) (bool, error) {
		rec, ok := tx.Get(e.table, e.key)
		if !ok {
			return false, nil
		}
		if row, isAuth := rec.Value.(rules.AuthorityRow); isAuth {
			if row.Owner != t {
				return false, nil
			}
			return true, rules.RemoveAuthorityRow(tx, location.AuthorityKey(e.key))
		}
		if owner, ok := rules.RowOwnerID(rec.Value); !ok || owner != t.OwnerID {
			return false, nil
		}
		return true, rules.RemoveLocationRow(tx, e.table, e.key)
	}
	live := func(tx *rules.Tx) bool {
		g, ok := tx.Source().LiveLease(t.OwnerID)
		return ok && g == t.LeaseGeneration
	}
	removed, _, err := s.removeInBatches(ctx, op, t.OwnerID, entries, live, owned)
	return removed, err
}

// removeInBatches removes the rows of entries in guarded batches: each batch
// is one decision that first checks guard (a false guard ends the sweep with
// nothing written by that batch), then lets remove plan each row's removal
// (reporting whether it removed it). Stale index entries of the batch are
// deleted alongside and counted. Each row is decoded once: the staleness
// check, the removal and the owner index share the decoded form memoized
// on the row's observation.
//
// Batches are sized by nextBatch's estimate. A batch the engine refuses as
// too large (which it does before sending anything; the retry finds the
// rows in the engine's cache) is retried smaller, and the estimate is scaled
// by how far it was off for the rest of the sweep.
func (s *Store) removeInBatches(ctx context.Context, op, ownerID string, entries []indexEntry,
	guard func(tx *rules.Tx) bool, remove func(tx *rules.Tx, e indexEntry) (bool, error)) (removed, stale int64, err error) {
	scale, most := 1.0, len(entries)
	for i := 0; i < len(entries); {
		part := entries[i : i+min(s.nextBatch(entries[i:], scale), most)]
		prefetch := []string{s.layout.OwnerKey(ownerID)}
		for _, e := range part {
			prefetch = append(prefetch, s.tableKey(e.table, e.key))
		}
		res, _, err := decide(ctx, s, op, newCall(s.now()), txn.Prefetch{Keys: prefetch}, func(tx *rules.Tx, v *txn.View) (batchOutcome, []txn.Write, error) {
			if !guard(tx) {
				return batchOutcome{stop: true}, nil, nil
			}
			var out batchOutcome
			var extra []txn.Write
			for _, e := range part {
				stale, err := s.staleEntry(v, e)
				if err != nil {
					return batchOutcome{}, nil, err
				}
				if stale {
					extra = append(extra, txn.Delete(e.indexKey))
					out.stale++
					continue
				}
				ok, err := remove(tx, e)
				if err != nil {
					return batchOutcome{}, nil, err
				}
				if ok {
					out.removed++
				}
			}
			return out, extra, nil
		})
		if err != nil {
			var tooLarge *txn.TooLargeError
			if errors.As(err, &tooLarge) && len(part) > 1 {
				scale *= max(overshoot(tooLarge), 1.05)
				most = len(part) - 1
				continue
			}
			return removed, stale, fmt.Errorf("%w (%d removed before the error)", err, removed)
		}
		if res.stop {
			break
		}
		removed += res.removed
		stale += res.stale
		i += len(part)
		most = len(entries)
	}
	return removed, stale, nil
}

// nextBatch returns how many of entries (at least one) the next removal
// transaction takes: as many as fit the cluster's operation and request
// size limits by removalCost's estimate, multiplied by scale. The delete
// fences the rows move (one per table and bucket) count once per batch.
func (s *Store) nextBatch(entries []indexEntry, scale float64) int {
	limits := s.engine.Limits()
	maxOps, maxBytes := float64(limits.MaxOps()), float64(limits.MaxBytes())
	ops, bytes := removalReserveOps, removalReserveBytes
	fences := map[string]bool{}
	for i, e := range entries {
		o, b := s.removalCost(e)
		fence := s.layout.DeleteFenceKey(s.tableKey(e.table, e.key))
		if !fences[fence] {
			o, b = o+1, b+txn.KeyCost(fence)+txn.NonceLength
		}
		if i > 0 && (float64(ops+o)*scale > maxOps || float64(bytes+b)*scale > maxBytes) {
			return i
		}
		ops, bytes = ops+o, bytes+b
		fences[fence] = true
	}
	return len(entries)
}

// removalCost estimates what removing e's row adds to a transaction: the
// operations of its largest branch (compares, Else reads, or writes) and
// the request bytes.
//
//   - authority record: the record and up to three capacity ledger buckets
//     are compared and read back; the record and the index entry are
//     deleted, the buckets rewritten (5 writes);
//   - mesh-node descriptor: the row and its entry-spot claim are compared,
//     read back and deleted, the index entry deleted, the mesh-node stamp
//     and the claim's delete fence touched (5 writes);
//   - any other row: the row compared, read back and deleted, the index
//     entry deleted (2 writes).
//
// Change stamps shared by the batch's rows are in removalReserveOps; rows
// of many meshes touch more of them, which the caller's scaling absorbs.
func (s *Store) removalCost(e indexEntry) (ops, bytes int) {
	row, index := txn.KeyCost(s.tableKey(e.table, e.key)), txn.KeyCost(e.indexKey)
	switch e.table {
	case rules.TableAuthority:
		return 5, 4*2*row + row + index + 3*(row+ledgerValueBytes)
	case location.TableMeshNodes:
		return 5, 2*3*row + index + row + row + txn.NonceLength
	}
	return 2, 3*row + index
}

// overshoot is how far a refused transaction exceeded its limits (its
// largest ratio of size to limit).
func overshoot(e *txn.TooLargeError) float64 {
	s, l := e.Shape, e.Limits
	return max(float64(max(s.Compares, s.Then, s.Else))/float64(l.MaxOps()), float64(s.Bytes)/float64(l.MaxBytes()))
}
