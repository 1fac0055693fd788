package etcdstore

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zlink-systems/zlink-etcd/keys"
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
func (s *Store) commitOf(v *txn.View, call *call, p *rules.Plan) (txn.Commit, error) {
	nonce := v.Nonce()
	writes := lastWrites(p.Writes)
	c := txn.Commit{Writes: call.writeBuf[:0]}
	for _, w := range writes {
		etcdKey := call.etcdKey(s, w.Table, w.Key)
		// The value an indexed row's key holds (the decision read it): its
		// owner is the owner index's entry, its size the new value's likely
		// size.
		isIndexed := indexed(w.Table)
		var (
			old      txn.Observation
			observed bool
		)
		if isIndexed {
			old, observed = v.Get(etcdKey)
		}
		if w.Value == nil {
			c.Writes = append(c.Writes, txn.Delete(etcdKey))
		} else {
			b, rt, err := s.encoder.encodeSized(w.Table, w.Value, w.Generation, nonce, call.now, len(old.Value))
			if err != nil {
				return txn.Commit{}, err
			}
			c.Writes = append(c.Writes, txn.Write{Key: etcdKey, Value: b, Derived: s.decodedForm(w, rt)})
		}
		if !isIndexed {
			continue
		}
		oldOwner, hadOwner, err := observedOwner(w.Table, old, observed)
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
	c.Touch = call.touchBuf[:0]
	for _, st := range p.Stamps {
		c.Touch = appendNew(c.Touch, s.stamps.key(s.layout, stampName{kind: string(st.Kind), mesh: st.Mesh}))
	}
	for _, mesh := range p.MeshNodeStamps {
		c.Touch = appendNew(c.Touch, s.stamps.key(s.layout, stampName{mesh: mesh, meshNode: true}))
	}
	return c, nil
}

// appendNew appends key to keys unless keys holds it already.
func appendNew(keys []string, key string) []string {
	if slices.Contains(keys, key) {
		return keys
	}
	return append(keys, key)
}

// stampKeys remembers the keys of the change stamps a store touched, so
// that a commit does not build them again (a few per mesh; a bounded
// number, beyond which keys are built every time).
type stampKeys struct {
	keys sync.Map // stampName → string
	n    atomic.Int64
}

// maxStampKeys bounds the stamp keys a store remembers.
const maxStampKeys = 4096

// stampName names a change stamp: (kind, mesh), or a mesh's mesh-node
// stamp.
type stampName struct {
	kind, mesh string
	meshNode   bool
}

// key returns the etcd key of the stamp.
func (k *stampKeys) key(l keys.Layout, n stampName) string {
	if v, ok := k.keys.Load(n); ok {
		return v.(string)
	}
	var key string
	if n.meshNode {
		key = l.MeshNodeStampKey(n.mesh)
	} else {
		key = l.StampKey(n.kind, n.mesh)
	}
	if k.n.Load() < maxStampKeys {
		if _, loaded := k.keys.LoadOrStore(n, key); !loaded {
			k.n.Add(1)
		}
	}
	return key
}

// lastWrites returns the writes of a plan with each key once, where it was
// first written, with the value it was written last (a Txn may not write a
// key twice): ws itself when no key repeats.
func lastWrites(ws []rules.Write) []rules.Write {
	if len(ws) < 2 {
		return ws
	}
	type tableKey struct {
		table rules.Table
		key   string
	}
	first := make(map[tableKey]int, len(ws))
	var out []rules.Write
	for i, w := range ws {
		k := tableKey{w.Table, w.Key}
		j, seen := first[k]
		if !seen {
			first[k] = i
			if out != nil {
				first[k] = len(out)
				out = append(out, w)
			}
			continue
		}
		if out == nil {
			// The first repeat: from here on, out holds the writes so far.
			out = append(make([]rules.Write, 0, len(ws)), ws[:i]...)
		}
		out[j] = w
	}
	if out == nil {
		return ws
	}
	return out
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

// observedOwner returns the owner id of o, the value of table t the
// decision observed (ok: present or not) before its own writes (the engine
// guards that observation). The decision decoded that value already: the
// decoded form memoized on the observation answers.
func observedOwner(t rules.Table, o txn.Observation, ok bool) (string, bool, error) {
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
