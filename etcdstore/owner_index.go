package etcdstore

import (
	"cmp"
	"context"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
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

// indexEntries lists the owner-index entries under prefix (one owner's, or
// all), sorted by owner id, then sweep order, then key.
func (s *Store) indexEntries(ctx context.Context, prefix string) ([]indexEntry, error) {
	end := keys.PrefixEnd(prefix)
	start, rev := prefix, int64(0)
	var out []indexEntry
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(indexBatch), clientv3.WithKeysOnly()}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.kv.Get(ctx, start, opts...)
		if err != nil {
			return nil, err
		}
		s.engine.NoteRevision(resp.Header.Revision)
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			owner, table, key, ok := s.layout.SplitOwnerIndexKey(string(kv.Key))
			if ok {
				out = append(out, indexEntry{ownerID: owner, table: rules.Table(table), key: key, indexKey: string(kv.Key)})
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
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
