package etcdstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// The owner index (decision Q12): <root>by-owner/<seg(ownerId)><seg(table)>
// <table key>, one entry per row of a location table or authority record
// held by the owner id, written in the same transaction as the row is
// created, changes owner id or is deleted (renewals do not touch it). It lets
// RemoveAllByOwner and the garbage collector find an owner's rows in
// O(their number).

// indexEntry is one owner-index entry.
type indexEntry struct {
	ownerID  string
	table    rules.Table
	key      string // the row's table key
	indexKey string // the entry's etcd key
}

// sweepOrder ranks tables in the order an owner's rows are removed
// (rules.OwnedTables): authority records first, then the location tables in
// the reference's order (03 §2).
func sweepOrder(t rules.Table) int {
	owned := rules.OwnedTables()
	for i, ot := range owned {
		if t == ot {
			return i
		}
	}
	return len(owned)
}

// indexBatch is how many owner-index keys one keys-only range request reads
// (about 100 bytes each).
const indexBatch = 16384

// indexEntries lists the owner-index entries of ownerID ("": of every
// owner), sorted by owner id, then sweep order, then key.
func (s *Store) indexEntries(ctx context.Context, ownerID string) ([]indexEntry, error) {
	var out []indexEntry
	rev, err := Scan(ctx, s.kv, s.layout, ScanOwnerIndex(ownerID), ScanOptions{Batch: indexBatch}, func(e Entry) error {
		out = append(out, indexEntry{ownerID: e.OwnerID, table: e.Table, key: e.TableKey, indexKey: e.Key})
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.engine.NoteRevision(rev)
	slices.SortStableFunc(out, func(a, b indexEntry) int {
		return cmp.Or(cmp.Compare(a.ownerID, b.ownerID), cmp.Compare(sweepOrder(a.table), sweepOrder(b.table)), cmp.Compare(a.key, b.key))
	})
	return out, nil
}

// staleEntry reports whether an index entry no longer matches its row (the
// row is gone or belongs to another owner id); v observes the row.
func (s *Store) staleEntry(v *txn.View, e indexEntry) (bool, error) {
	o, ok := v.Get(s.tableKey(e.table, e.key))
	if !ok {
		return true, nil
	}
	rec, _, err := sharedRecord(e.table, o)
	if err != nil {
		return false, err
	}
	owner, ok := ownerOf(e.table, rec.Value)
	return !ok || owner != e.ownerID, nil
}
