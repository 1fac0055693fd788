package etcdstore

import (
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// commitOf translates a decision's plan into the engine's commit:
//
//   - every row write becomes a guarded put or delete of its table key (the
//     last write of a key wins: a Txn may not write a key twice), its value
//     encoded with the run's nonce;
//   - rows of the location tables and authority rows keep the owner index
//     (decision Q12): an entry per (owner id, table, key), put when a row is
//     created or changes owner id and deleted when it is deleted or leaves
//     the owner id — unguarded, since the row's own guard orders them;
//   - change stamps and mesh-node stamps are touched once per commit
//     (decision E-5);
//   - the scan revision has no counterpart: scan cursors are pinned to a
//     revision instead.
func (s *Store) commitOf(v *txn.View, p *rules.Plan, now time.Time) (txn.Commit, error) {
	nonce := v.Nonce()
	type tableKey struct {
		table rules.Table
		key   string
	}
	var order []tableKey
	last := map[tableKey]rules.Write{}
	for _, w := range p.Writes {
		k := tableKey{w.Table, w.Key}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = w
	}
	var c txn.Commit
	for _, k := range order {
		w := last[k]
		etcdKey := s.layout.TableKey(string(w.Table), w.Key)
		if w.Value == nil {
			c.Writes = append(c.Writes, txn.Delete(etcdKey))
		} else {
			b, err := encodeValue(w.Table, w.Value, w.Generation, nonce, now)
			if err != nil {
				return txn.Commit{}, err
			}
			c.Writes = append(c.Writes, txn.Write{Key: etcdKey, Value: b, Derived: s.decodedForm(w.Table, w.Value, w.Generation)})
		}
		if !indexed(w.Table) {
			continue
		}
		oldOwner, hadOwner, err := s.observedOwner(v, w.Table, etcdKey)
		if err != nil {
			return txn.Commit{}, err
		}
		newOwner, hasOwner := ownerOf(w.Table, w.Value)
		if hadOwner && (!hasOwner || oldOwner != newOwner) {
			c.Unguarded = append(c.Unguarded, txn.Delete(s.layout.OwnerIndexKey(oldOwner, string(w.Table), w.Key)))
		}
		if hasOwner && (!hadOwner || oldOwner != newOwner) {
			c.Unguarded = append(c.Unguarded, txn.Put(s.layout.OwnerIndexKey(newOwner, string(w.Table), w.Key), indexValue(nonce)))
		}
	}
	seen := map[string]bool{}
	touch := func(key string) {
		if !seen[key] {
			seen[key] = true
			c.Touch = append(c.Touch, key)
		}
	}
	for _, st := range p.Stamps {
		touch(s.layout.StampKey(string(st.Kind), st.Mesh))
	}
	for _, mesh := range p.MeshNodeStamps {
		touch(s.layout.MeshNodeStampKey(mesh))
	}
	return c, nil
}

// indexed reports whether rows of t are in the owner index: the owned
// tables (rules.TableSpec.Owned), that is the location tables and the
// authority table.
func indexed(t rules.Table) bool {
	spec, ok := rules.Lookup(t)
	return ok && spec.Owned()
}

// ownerOf returns the owner id of a value of an owned table t.
func ownerOf(t rules.Table, value any) (string, bool) {
	spec, ok := rules.Lookup(t)
	if !ok {
		return "", false
	}
	return spec.OwnerID(value)
}

// observedOwner returns the owner id of the value the decision observed at
// etcdKey before its own writes (the engine guards that observation). The
// decision decoded that value already: the decoded form memoized on the
// observation answers.
func (s *Store) observedOwner(v *txn.View, t rules.Table, etcdKey string) (string, bool, error) {
	o, ok := v.Get(etcdKey)
	if !ok {
		return "", false, nil
	}
	rec, _, err := sharedRecord(t, o)
	if err != nil {
		return "", false, fmt.Errorf("owner index: %w", err)
	}
	owner, ok := ownerOf(t, rec.Value)
	return owner, ok, nil
}
