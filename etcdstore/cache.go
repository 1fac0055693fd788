package etcdstore

import (
	"slices"
	"strings"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// The watch cache's state (docs/caching.md): the rows of the tables it
// serves, decoded once when they arrive, grouped so that a change copies
// only its group. A group is the rows that share their first key segments
// (a mesh's descriptors; a mesh's peers of one auto-connect type); its
// rows are an immutable slice in key order, replaced (never modified) on
// every change, so that a reader holds a consistent group without a lock
// and a continuation token can still read the version it started from
// (the last cacheHistory versions of each group are kept). Mesh-node
// entries also hold the capacity ledger buckets of their descriptor key,
// so that a mesh's rows and their capacity usage change together.
//
// Every method here is called with the cache's lock held (writes: Lock).

// cacheHistory is how many earlier versions of a group stay readable by
// continuation tokens (a listing's later pages read the version of its
// first page: this many changes of the group may come in between).
const cacheHistory = 16

// cacheEntry is one row key of a group: the decoded row and, for mesh
// nodes, the ledger buckets of the descriptor key. Entries are immutable.
type cacheEntry struct {
	// key is the row's table key.
	key string
	// row is the decoded row (rules.Record.Value), shared: never modified;
	// nil when the key has no row (mesh nodes: ledger buckets only).
	row any
	// err is why the row's stored value could not be decoded (a list that
	// meets it reads etcd, which reports the error).
	err error
	// ledger holds the capacity ledger buckets of a mesh-node descriptor
	// key, by bucket table key (shared, replaced on change); ledgerErr is
	// the first undecodable bucket.
	ledger    map[string]rules.LedgerEntry
	ledgerErr error
	// rowBytes and ledgerBytes are the stored bytes (keys and values).
	rowBytes, ledgerBytes int64
	// projected memoizes the entry's projection by a list (mesh nodes:
	// capacity from its ledger), computed by the first list that needs it.
	projected atomic.Pointer[projection]
}

// projection is an entry's row as a list operation projects it (shared:
// callers get copies).
type projection struct {
	op  string
	row any
}

// copyFrom makes e a copy of old without its memoized projection (e is
// about to change).
func (e *cacheEntry) copyFrom(old *cacheEntry) {
	e.key, e.row, e.err = old.key, old.row, old.err
	e.ledger, e.ledgerErr = old.ledger, old.ledgerErr
	e.rowBytes, e.ledgerBytes = old.rowBytes, old.ledgerBytes
}

// empty reports whether the entry holds nothing.
func (e *cacheEntry) empty() bool {
	return e.row == nil && e.err == nil && len(e.ledger) == 0 && e.ledgerErr == nil
}

// groupVersion is an earlier version of a group's rows and the revisions
// it was current for: [from, until).
type groupVersion struct {
	rows        []*cacheEntry
	from, until int64
}

// cacheGroup is one group of a table.
type cacheGroup struct {
	// rows is the current version, current since revision from.
	rows []*cacheEntry
	from int64
	// history holds earlier versions, oldest first.
	history []groupVersion
	// bornAt, when set, is the revision of the change that made the group:
	// it was empty before (0: not known, the group was loaded).
	bornAt int64
}

// at returns the group's rows as of revision rev, when the cache knows
// them: the current version from its revision on, an earlier one, or none
// before the group was made (a missing group has no rows). The caller
// checks that rev is neither before the table was loaded nor beyond what
// the cache has applied.
func (g *cacheGroup) at(rev int64) ([]*cacheEntry, bool) {
	if g == nil {
		return nil, true
	}
	if rev >= g.from {
		return g.rows, true
	}
	for _, v := range slices.Backward(g.history) {
		if v.from <= rev && rev < v.until {
			return v.rows, true
		}
	}
	if rev < g.bornAt {
		return nil, true
	}
	return nil, false
}

// replace makes rows the group's current version from revision rev.
func (g *cacheGroup) replace(rows []*cacheEntry, rev int64) {
	if g.from > 0 && g.from < rev {
		g.history = append(g.history, groupVersion{rows: g.rows, from: g.from, until: rev})
		if len(g.history) > cacheHistory {
			g.history = slices.Delete(g.history, 0, len(g.history)-cacheHistory)
		}
	}
	g.rows, g.from = rows, max(g.from, rev)
}

// find returns the index of key in rows and whether it is there.
func find(rows []*cacheEntry, key string) (int, bool) {
	return slices.BinarySearchFunc(rows, key, func(e *cacheEntry, k string) int { return strings.Compare(e.key, k) })
}

// cacheTable is the cached state of one table.
type cacheTable struct {
	table rules.Table
	// depth is the number of leading key segments of a group.
	depth  int
	groups map[string]*cacheGroup
	// ranges are the watched ranges the table's state comes from (its own
	// rows; for mesh nodes, the ledger too).
	ranges []*cacheRange
}

// groupKey returns the group of a table key: its first depth segments.
func (t *cacheTable) groupKey(key string) (string, bool) {
	parts, err := keys.DecodeSegments(key)
	if err != nil || len(parts) < t.depth {
		return "", false
	}
	return keys.Segments(parts[:t.depth]...), true
}

// component is the part of a table's entries a range fills.
type component int

const (
	// componentRow: the rows of the table.
	componentRow component = iota
	// componentLedger: the capacity ledger buckets of mesh-node entries.
	componentLedger
)

// entryKey returns the key of the entry a range's table key belongs to:
// the key itself for rows, the descriptor's key (the bucket key's first
// two segments, rules.Bucket.Key) for ledger buckets.
func entryKey(c component, key string) (string, bool) {
	if c == componentRow {
		return key, true
	}
	parts, err := keys.DecodeSegments(key)
	if err != nil || len(parts) < 2 {
		return "", false
	}
	return keys.Segments(parts[0], parts[1]), true
}

// change applies one put (kv set) or deletion (kv nil) of a range's table
// key at revision rev and returns the change in stored bytes.
func (t *cacheTable) change(c component, key string, kv *mvccpb.KeyValue, rev int64, loaded bool) int64 {
	ek, ok := entryKey(c, key)
	if !ok {
		return 0
	}
	gk, ok := t.groupKey(ek)
	if !ok {
		return 0
	}
	g := t.groups[gk]
	if g == nil {
		if kv == nil {
			return 0
		}
		g = &cacheGroup{}
		if loaded {
			g.bornAt = rev
		}
		t.groups[gk] = g
	}
	i, found := find(g.rows, ek)
	e := &cacheEntry{key: ek}
	if found {
		e.copyFrom(g.rows[i])
	}
	before := e.rowBytes + e.ledgerBytes
	switch c {
	case componentRow:
		e.row, e.err, e.rowBytes = nil, nil, 0
		if kv != nil {
			e.rowBytes = int64(len(kv.Key) + len(kv.Value))
			rec, err := decodeFresh(t.table, observed(kv))
			e.row, e.err = rec.Value, err
		}
	case componentLedger:
		ledger := make(map[string]rules.LedgerEntry, len(e.ledger)+1)
		for k, v := range e.ledger {
			ledger[k] = v
		}
		delete(ledger, key)
		if kv != nil {
			rec, err := decodeFresh(rules.TableLedger, observed(kv))
			if u, ok := rec.Value.(rules.LedgerEntry); ok && err == nil {
				ledger[key] = u
			} else if e.ledgerErr == nil {
				e.ledgerErr = err
			}
		}
		e.ledger = ledger
		e.ledgerBytes = ledgerBytes(ledger)
	}
	rows := slices.Clone(g.rows)
	switch {
	case e.empty() && found:
		rows = slices.Delete(rows, i, i+1)
	case e.empty():
	case found:
		rows[i] = e
	default:
		rows = slices.Insert(rows, i, e)
	}
	g.replace(rows, rev)
	return e.rowBytes + e.ledgerBytes - before
}

// ledgerBytes estimates the stored bytes of a ledger: a bucket's key and
// its small value.
func ledgerBytes(ledger map[string]rules.LedgerEntry) int64 {
	var n int64
	for k := range ledger {
		n += int64(len(k)) + 64
	}
	return n
}

// reload replaces the part c of the table by kvs (a range read at revision
// rev, table keys cut at cut bytes) and returns the table's stored bytes.
// Every group becomes current from rev at the earliest; earlier versions
// are forgotten (what was missed is not known).
func (t *cacheTable) reload(c component, kvs []*mvccpb.KeyValue, cut int, rev int64) int64 {
	for gk, g := range t.groups {
		var rows []*cacheEntry
		for _, old := range g.rows {
			var e cacheEntry
			e.copyFrom(old)
			if c == componentRow {
				e.row, e.err, e.rowBytes = nil, nil, 0
			} else {
				e.ledger, e.ledgerErr, e.ledgerBytes = nil, nil, 0
			}
			if !e.empty() {
				rows = append(rows, &e)
			}
		}
		g.rows, g.history, g.from = rows, nil, max(g.from, rev)
		if len(rows) == 0 {
			delete(t.groups, gk)
		}
	}
	for _, kv := range kvs {
		t.change(c, string(kv.Key)[cut:], kv, rev, false)
	}
	var total int64
	for _, g := range t.groups {
		g.history = nil
		for _, e := range g.rows {
			total += e.rowBytes + e.ledgerBytes
		}
	}
	return total
}

// observed is a stored key-value as the decoder takes it.
func observed(kv *mvccpb.KeyValue) txn.Observation {
	return txn.Observation{Key: string(kv.Key), Present: true, Value: kv.Value, ModRevision: kv.ModRevision,
		CreateRevision: kv.CreateRevision, Version: kv.Version}
}
