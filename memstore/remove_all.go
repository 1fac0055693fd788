package memstore

import (
	"context"
	"slices"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// RemoveOwned removes everything an owner holds (03 §2,
// storecore.Store.RemoveAllByOwner) in one decision under the store lock
// (LS-209). The token's lease must be live with exactly its generation,
// else nothing happens and the answer is 0. Then the authority records of
// the exact token go (their capacity is released), followed by every
// location row of the owner id — whatever lease generation wrote it
// — table by table in the reference's order (rules.LocationTables).
// Each removed row moves its stamps once (rules.RemoveLocationRow). The
// answer counts authority records and rows; on an error nothing is
// removed. It implements storecore.Backend.
func (b backend) RemoveOwned(ctx context.Context, t location.OwnerToken) (int64, error) {
	s := b.s
	var removed int64
	err := b.Decide(ctx, storecore.NewCall(storecore.Op{Name: "RemoveAllByOwner"}, func(tx *rules.Tx) error {
		removed = 0
		if g, live := tx.Source().LiveLease(t.OwnerID); !live || g != t.LeaseGeneration {
			return nil
		}
		for _, key := range sortedKeysWhere(s.tables[rules.TableAuthority], func(v any) bool {
			row, ok := v.(rules.AuthorityRow)
			return ok && row.Owner == t
		}) {
			if err := rules.RemoveAuthorityRow(tx, location.AuthorityKey(key)); err != nil {
				return err
			}
			removed++
		}
		for _, table := range rules.LocationTables() {
			for _, key := range sortedKeysWhere(s.tables[table], func(v any) bool {
				owner, ok := rules.RowOwnerID(v)
				return ok && owner == t.OwnerID
			}) {
				if err := rules.RemoveLocationRow(tx, table, key); err != nil {
					return err
				}
				removed++
			}
		}
		return nil
	}))
	if err != nil {
		return 0, err
	}
	return removed, nil
}

// sortedKeysWhere returns, in byte order, the keys of the table whose values
// keep accepts. Called with s.mu held.
func sortedKeysWhere(rows map[string]rules.Record, keep func(any) bool) []string {
	var keys []string
	for key, rec := range rows {
		if keep(rec.Value) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}
