package etcdstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// removeBatch is how many rows one RemoveAllByOwner transaction removes at
// most; a batch that does not fit the cluster's limits is halved.
const removeBatch = 24

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

// RemoveAllByOwner removes the token's authority records (exact owner token;
// capacity released) and every location row of its owner id (any lease
// generation, with entry-spot claims and stamps), if the token's lease is
// live (03 §2). The owner index lists the rows. This is the store's one
// batched operation (decision E-8): rows go in transactions of at most
// removeBatch rows, authority records first, then the location tables in
// the reference's order; each transaction re-asserts the token's lease
// (CreateRevision of the owner key) and every row it removes. The answer
// counts what was removed; it stops when the lease is lost midway (0 when it
// is not live at the start). On an error, the count removed so far is
// returned with it. It implements location.OwnerCleanup.
func (s *Store) RemoveAllByOwner(ctx context.Context, t location.OwnerToken) (int64, error) {
	const op = "RemoveAllByOwner"
	if err := checkContext(ctx, op); err != nil {
		return 0, err
	}
	entries, err := s.indexEntries(ctx, s.layout.OwnerIndexPrefix(t.OwnerID))
	if err != nil {
		return 0, txn.Unavailable("etcdstore: "+op, err)
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
// deleted alongside and counted.
func (s *Store) removeInBatches(ctx context.Context, op, ownerID string, entries []indexEntry,
	guard func(tx *rules.Tx) bool, remove func(tx *rules.Tx, e indexEntry) (bool, error)) (removed, stale int64, err error) {
	size := removeBatch
	for i := 0; i < len(entries); {
		part := entries[i:min(i+size, len(entries))]
		prefetch := []string{s.layout.OwnerKey(ownerID)}
		for _, e := range part {
			prefetch = append(prefetch, s.tableKey(e.table, e.key))
		}
		res, err := decideWith(ctx, s, op, s.now(), prefetch, func(tx *rules.Tx, v *txn.View) (batchOutcome, []txn.Write, error) {
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
			if errors.Is(err, location.ErrTooLarge) && len(part) > 1 {
				size = max(len(part)/2, 1)
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
	}
	return removed, stale, nil
}
