package memstore

import (
	"context"
	"slices"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// RemoveAllByOwner removes everything an owner holds (03 §2) in one step
// under the store lock (LS-209). The token's lease must be live with exactly
// its generation, else nothing happens and the answer is 0. Then the
// authority records of the exact token go (their capacity is released),
// followed by every location row of the owner id — whatever lease generation
// wrote it — table by table in the reference's order: mesh nodes
// (with their entry-spot claims), peers, spots, actors, routes, client
// servers, fanout publishers. Each removed row moves its stamps once
// (rules.RemoveLocationRow). The answer counts authority records and rows.
// The lease itself, row generation counters and transfers are untouched.
func (s *Store) RemoveAllByOwner(ctx context.Context, t location.OwnerToken) (int64, error) {
	return decide(ctx, s, "RemoveAllByOwner", nil, func(tx *rules.Tx) (int64, error) {
		if g, live := tx.Source().LiveLease(t.OwnerID); !live || g != t.LeaseGeneration {
			return 0, nil
		}
		var removed int64
		for _, key := range sortedKeysWhere(s.tables[rules.TableAuthority], func(v any) bool {
			row, ok := v.(rules.AuthorityRow)
			return ok && row.Owner == t
		}) {
			if err := rules.RemoveAuthorityRow(tx, location.AuthorityKey(key)); err != nil {
				return 0, err
			}
			removed++
		}
		for _, table := range rules.LocationTables() {
			for _, key := range sortedKeysWhere(s.tables[table], func(v any) bool {
				owner, ok := rules.RowOwnerID(v)
				return ok && owner == t.OwnerID
			}) {
				if err := rules.RemoveLocationRow(tx, table, key); err != nil {
					return 0, err
				}
				removed++
			}
		}
		return removed, nil
	})
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
