package keys

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// The etcd key layout (docs/key-layout.md). Every key of a store lives under
// one root prefix that ends with a format version ("/zlink/v1/" by default).
// Below it:
//
//	<root><table>/<table key>            one row of a table (tables are
//	                                     named by their identifier, e.g.
//	                                     "meshNodes", "ledger")
//	<root>owner/<seg(ownerId)>           an owner lease (attached to its
//	                                     etcd lease)
//	<root>stamp/<seg(kind)><seg(mesh)>   a change stamp (mesh "" = the kind's
//	                                     global counter)
//	<root>meshnode-stamp/<seg(mesh)>     a mesh's mesh-node change stamp
//	<root>by-owner/<seg(ownerId)><seg(table)><table key>
//	                                     the owner index: one entry per row
//	                                     the owner id holds
//	<root>marker/<table>                 the write marker of a table, written
//	                                     by transactions that only delete
//	<root>fence/<table>/<bucket>          a delete fence: put by every
//	                                     transaction that deletes a row of
//	                                     the table whose table key hashes
//	                                     to the bucket (0–15)
//	<root>owner-release/<seg(ownerId)><seg(generation)>
//	                                     a release marker: which release
//	                                     ended an owner lease generation, on
//	                                     a short etcd lease of its own
//
// Table keys are the canonical keys of package rules (self-delimiting
// segments, or the raw authority key last), so a table's rows list in byte
// order of their canonical key with a plain prefix range.

// DefaultRoot is the root prefix of the current key format.
const DefaultRoot = "/zlink/v1/"

// Codes of the errors NewLayout and Layout.TablePrefix return.
const (
	// CodeLayoutRoot: the root prefix is empty or does not end with '/'.
	CodeLayoutRoot = "layout.root"
	// CodeLayoutTable: a table name is empty, holds a character other than
	// an ASCII letter or digit, or is reserved.
	CodeLayoutTable = "layout.table"
)

// Reserved first segments below the root: no table may use these names.
const (
	ownerSegment         = "owner/"
	stampSegment         = "stamp/"
	meshNodeStampSegment = "meshnode-stamp/"
	byOwnerSegment       = "by-owner/"
	markerSegment        = "marker/"
	fenceSegment         = "fence/"
	releaseSegment       = "owner-release/"
)

// reservedTable reports whether a table name would collide with a reserved
// segment (the dashed ones cannot: table names have no dash).
func reservedTable(name string) bool {
	switch name + "/" {
	case ownerSegment, stampSegment, markerSegment, fenceSegment:
		return true
	}
	return false
}

// Layout computes the etcd keys of one store. The zero value is not usable;
// build it with NewLayout.
type Layout struct {
	root string
}

// NewLayout returns the layout under root; "" means DefaultRoot. The root
// must end with '/' and should name the format version (for example
// "/prod/zlink/v1/").
func NewLayout(root string) (Layout, error) {
	if root == "" {
		root = DefaultRoot
	}
	if !strings.HasSuffix(root, "/") {
		return Layout{}, shapeError(CodeLayoutRoot, "root prefix %q must end with '/'", root)
	}
	return Layout{root: root}, nil
}

// Root returns the root prefix.
func (l Layout) Root() string { return l.root }

// RootEnd returns the end of the root's key range (exclusive).
func (l Layout) RootEnd() string { return PrefixEnd(l.root) }

// ValidTable checks a table name: one or more ASCII letters or digits, not
// a reserved segment.
func ValidTable(table string) error {
	if table == "" {
		return shapeError(CodeLayoutTable, "table name is empty")
	}
	for i := 0; i < len(table); i++ {
		c := table[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return shapeError(CodeLayoutTable, "table name %q holds %q; only ASCII letters and digits are allowed", table, c)
		}
	}
	if reservedTable(table) {
		return shapeError(CodeLayoutTable, "table name %q is reserved", table)
	}
	return nil
}

// TablePrefix returns the prefix of every row of table: root + table + "/".
// The table name must pass ValidTable (the store checks its tables once).
func (l Layout) TablePrefix(table string) string { return l.root + table + "/" }

// TableKey returns the etcd key of one row.
func (l Layout) TableKey(table, key string) string { return l.root + table + "/" + key }

// SplitTableKey splits an etcd key of a table row into the table name and
// the row's table key; ok is false for any other key.
func (l Layout) SplitTableKey(etcdKey string) (table, key string, ok bool) {
	rest, found := strings.CutPrefix(etcdKey, l.root)
	if !found {
		return "", "", false
	}
	table, key, found = strings.Cut(rest, "/")
	if !found || ValidTable(table) != nil {
		return "", "", false
	}
	return table, key, true
}

// OwnerPrefix returns the prefix of every owner-lease key.
func (l Layout) OwnerPrefix() string { return l.root + ownerSegment }

// OwnerKey returns the owner-lease key of ownerID.
func (l Layout) OwnerKey(ownerID string) string {
	return prefixedSegments(l.root, ownerSegment, ownerID)
}

// OwnerIDOfKey returns the owner id of an owner-lease key; ok is false for
// any other key.
func (l Layout) OwnerIDOfKey(etcdKey string) (string, bool) {
	rest, found := strings.CutPrefix(etcdKey, l.OwnerPrefix())
	if !found {
		return "", false
	}
	parts, err := DecodeSegments(rest)
	if err != nil || len(parts) != 1 {
		return "", false
	}
	return parts[0], true
}

// StampPrefix returns the prefix of every change-stamp key.
func (l Layout) StampPrefix() string { return l.root + stampSegment }

// StampKey returns the key of the change stamp (kind, mesh); mesh "" is the
// kind's global counter.
func (l Layout) StampKey(kind, mesh string) string {
	return prefixedSegments(l.root, stampSegment, kind, mesh)
}

// MeshNodeStampKey returns the key of a mesh's mesh-node change stamp.
func (l Layout) MeshNodeStampKey(mesh string) string {
	return prefixedSegments(l.root, meshNodeStampSegment, mesh)
}

// ByOwnerPrefix returns the prefix of every owner-index entry.
func (l Layout) ByOwnerPrefix() string { return l.root + byOwnerSegment }

// OwnerIndexPrefix returns the prefix of ownerID's owner-index entries.
func (l Layout) OwnerIndexPrefix(ownerID string) string {
	return prefixedSegments(l.root, byOwnerSegment, ownerID)
}

// OwnerIndexKey returns the owner-index entry of one row held by ownerID.
func (l Layout) OwnerIndexKey(ownerID, table, key string) string {
	return l.root + byOwnerSegment + Segments(ownerID, table) + key
}

// SplitOwnerIndexKey splits an owner-index key into the owner id, the table
// and the row's table key; ok is false for any other key.
func (l Layout) SplitOwnerIndexKey(etcdKey string) (ownerID, table, key string, ok bool) {
	rest, found := strings.CutPrefix(etcdKey, l.ByOwnerPrefix())
	if !found {
		return "", "", "", false
	}
	ownerID, rest, ok = cutSegment(rest)
	if !ok {
		return "", "", "", false
	}
	table, key, ok = cutSegment(rest)
	if !ok || ValidTable(table) != nil {
		return "", "", "", false
	}
	return ownerID, table, key, true
}

// MarkerKey returns the write-marker key of a table.
func (l Layout) MarkerKey(table string) string { return l.root + markerSegment + table }

// FenceBuckets is how many delete fences each table has. It is part of the
// key format: every store of one root must hash rows to the same fences.
const FenceBuckets = 16

// DeleteFenceKey returns the delete fence of an etcd key:
// <root>fence/<table>/<bucket> for a table row, the bucket being the FNV-1a
// hash of the row's table key (folded) modulo FenceBuckets; "" for any
// other key.
// Every transaction that deletes a row puts its fence, so that a
// transaction that saw the row absent at some revision can assert that no
// row of the bucket was deleted since (a guard on the row alone cannot see
// a create and delete in between).
func (l Layout) DeleteFenceKey(etcdKey string) string {
	table, key, ok := l.SplitTableKey(etcdKey)
	if !ok {
		return ""
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key)) // never fails
	// FNV's low bits barely mix the last bytes (rows that differ in one
	// digit would share few buckets): fold the high bits in.
	x := h.Sum32()
	x ^= x >> 16
	x ^= x >> 8
	return l.root + fenceSegment + table + "/" + strconv.Itoa(int(x%FenceBuckets))
}

// ReleaseMarkerKey returns the key that a release of ownerID's lease of the
// given generation writes beside deleting the owner key, so that a release
// whose response was lost can tell whether its own delete ended the
// generation.
func (l Layout) ReleaseMarkerKey(ownerID string, generation int64) string {
	return l.root + releaseSegment + Segments(ownerID, strconv.FormatInt(generation, 10))
}

// cutSegment splits the first "<len>:<bytes>" segment off s.
func cutSegment(s string) (part, rest string, ok bool) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if i > 0 && s[0] == '0' {
			return "", "", false
		}
		n = n*10 + int(s[i]-'0')
		if n > len(s) {
			return "", "", false
		}
		i++
	}
	if i == 0 || i == len(s) || s[i] != ':' {
		return "", "", false
	}
	i++
	if n > len(s)-i {
		return "", "", false
	}
	return s[i : i+n], s[i+n:], true
}

// PrefixEnd returns the smallest key greater than every key that starts
// with prefix (etcd's range end for a prefix); "\x00" stands for "no end"
// when prefix is all 0xff bytes or empty.
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}
