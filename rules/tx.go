package rules

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Source is a backend's consistent view of its state for one decision.
// Every method must answer from the same point in time.
type Source interface {
	// Now is the decision's time; the Tx calls it once.
	Now() time.Time
	// Get returns the record stored under (t, key).
	Get(t Table, key string) (Record, bool)
	// LiveLease returns the generation of ownerID's owner lease and whether
	// that lease is live.
	LiveLease(ownerID string) (generation int64, live bool)
	// NextGeneration returns the row generation that a create or takeover of
	// (t, key) assigns: memstore's per-key counters (mesh nodes restart at 1,
	// anomaly A-04), etcdstore's read revision + 1 (decision E-3).
	NextGeneration(t Table, key string) int64
	// CanIssue reports whether the authority counters can issue the given
	// numbers of store versions, object generations and owner generations.
	CanIssue(versions, objectGenerations, ownerGenerations int64) bool
	// IssueVersion issues a fresh store version. A backend whose versions are
	// only known at commit (etcd revisions) returns a placeholder and replaces
	// it in the result after the commit.
	IssueVersion() location.StoreVersion
	// IssueObjectGeneration issues a fresh object generation for key.
	IssueObjectGeneration(key location.AuthorityKey) int64
	// IssueOwnerGeneration issues a fresh authority owner generation for key.
	IssueOwnerGeneration(key location.AuthorityKey) int64
	// NewReservationID returns a fresh lower-case UUID v4 text.
	NewReservationID() string
}

// SharedSource is a Source that can also answer a read with a record it
// shares (a decoded value it keeps), sparing the copy Get makes.
type SharedSource interface {
	Source
	// GetShared is Get, except that the record may be shared: the caller
	// must not modify anything it references.
	GetShared(t Table, key string) (Record, bool)
}

// Write is one planned change: Value nil deletes the key.
type Write struct {
	Table      Table
	Key        string
	Value      any
	Generation int64
	// Owned marks a Value that nothing outside the plan refers to (a deep
	// copy the decision made for the write, PutOwned), apart from parts it
	// may share with a record the decision read shared (GetShared), which
	// nobody modifies: a backend may keep it as it is instead of copying
	// it.
	Owned bool
}

// StampCounter names one change-stamp counter: (Kind, Mesh), Mesh "" being
// the kind's global counter.
type StampCounter struct {
	Kind location.ScopeKind
	Mesh string
}

// Plan is everything a decision wants to change, in order.
type Plan struct {
	Writes []Write
	// Stamps lists the change-stamp counters to increment, once per entry
	// (an entry may repeat when several rows change).
	Stamps []StampCounter
	// MeshNodeStamps lists meshes whose mesh-node change stamp moves, once per
	// entry.
	MeshNodeStamps []string
	// ScanRevisionBumped reports an authority row-map change (memstore
	// expires scan cursors on it).
	ScanRevisionBumped bool
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool {
	return len(p.Writes) == 0 && len(p.Stamps) == 0 && len(p.MeshNodeStamps) == 0 && !p.ScanRevisionBumped
}

type tableKey struct {
	table Table
	key   string
}

// Tx is one decision's view: reads go through the Source, overlaid with the
// decision's own writes; writes are recorded in a Plan.
type Tx struct {
	src  Source
	now  time.Time
	plan Plan
	// overlay holds the latest write of each key this decision wrote, in
	// first-write order; overlayIndex indexes it once it is large.
	overlay      []overlayEntry
	overlayIndex map[tableKey]int
	// The first writes and stamps of a decision (most write one row and
	// two stamps, a mesh node's also its mesh-node stamp) live in the Tx
	// itself instead of allocations of their own.
	overlayBuf        [2]overlayEntry
	writesBuf         [2]Write
	stampsBuf         [2]StampCounter
	meshNodeStampsBuf [1]string
}

// overlayEntry is the latest write of one key by the decision.
type overlayEntry struct {
	key     tableKey
	rec     Record
	deleted bool
}

// overlayIndexed is the overlay size from which it is indexed by a map.
const overlayIndexed = 8

// NewTx starts a decision over src.
func NewTx(src Source) *Tx {
	tx := &Tx{}
	tx.Reset(src)
	return tx
}

// Reset starts a new decision over src in tx, as NewTx does, reusing tx's
// memory (the previous decision's Plan is gone).
func (tx *Tx) Reset(src Source) {
	*tx = Tx{src: src, now: location.Millis(src.Now())}
}

// Now is the decision's time (millisecond precision, UTC).
func (tx *Tx) Now() time.Time { return tx.now }

// Source returns the underlying source.
func (tx *Tx) Source() Source { return tx.src }

// Plan returns the recorded changes.
func (tx *Tx) Plan() *Plan { return &tx.plan }

// written returns the overlay entry of k, or nil.
func (tx *Tx) written(k tableKey) *overlayEntry {
	if tx.overlayIndex != nil {
		if i, ok := tx.overlayIndex[k]; ok {
			return &tx.overlay[i]
		}
		return nil
	}
	for i := range tx.overlay {
		if tx.overlay[i].key == k {
			return &tx.overlay[i]
		}
	}
	return nil
}

// overwrite records the latest write of k.
func (tx *Tx) overwrite(k tableKey, rec Record, deleted bool) {
	if e := tx.written(k); e != nil {
		e.rec, e.deleted = rec, deleted
		return
	}
	if tx.overlay == nil {
		tx.overlay = tx.overlayBuf[:0]
	}
	tx.overlay = append(tx.overlay, overlayEntry{key: k, rec: rec, deleted: deleted})
	switch {
	case tx.overlayIndex != nil:
		tx.overlayIndex[k] = len(tx.overlay) - 1
	case len(tx.overlay) >= overlayIndexed:
		tx.overlayIndex = make(map[tableKey]int, 2*len(tx.overlay))
		for i, e := range tx.overlay {
			tx.overlayIndex[e.key] = i
		}
	}
}

// Get reads (t, key), seeing this decision's own writes.
func (tx *Tx) Get(t Table, key string) (Record, bool) {
	if e := tx.written(tableKey{t, key}); e != nil {
		if e.deleted {
			return Record{}, false
		}
		return e.rec, true
	}
	return tx.src.Get(t, key)
}

// GetShared is Get for a caller that only looks at the record: it may be
// shared with the source (SharedSource) or with this decision's own
// writes, so the caller must not modify anything it references, nor return
// or write it.
func (tx *Tx) GetShared(t Table, key string) (Record, bool) {
	if e := tx.written(tableKey{t, key}); e != nil {
		if e.deleted {
			return Record{}, false
		}
		return e.rec, true
	}
	if ss, ok := tx.src.(SharedSource); ok {
		return ss.GetShared(t, key)
	}
	return tx.src.Get(t, key)
}

// Put plans a write of value under (t, key) with a row generation.
func (tx *Tx) Put(t Table, key string, value any, generation int64) {
	tx.overwrite(tableKey{t, key}, Record{Value: value, Generation: generation}, false)
	tx.addWrite(Write{Table: t, Key: key, Value: value, Generation: generation})
}

// PutOwned is Put of a value that nothing else refers to: a deep copy made
// for this write, that the decision neither keeps nor returns (Write.Owned),
// or a copy of a shared record (GetShared) whose changed parts are the
// decision's own.
func (tx *Tx) PutOwned(t Table, key string, value any, generation int64) {
	tx.overwrite(tableKey{t, key}, Record{Value: value, Generation: generation}, false)
	tx.addWrite(Write{Table: t, Key: key, Value: value, Generation: generation, Owned: true})
}

// Delete plans the removal of (t, key).
func (tx *Tx) Delete(t Table, key string) {
	tx.overwrite(tableKey{t, key}, Record{}, true)
	tx.addWrite(Write{Table: t, Key: key})
}

// addWrite appends w to the plan.
func (tx *Tx) addWrite(w Write) {
	if tx.plan.Writes == nil {
		tx.plan.Writes = tx.writesBuf[:0]
	}
	tx.plan.Writes = append(tx.plan.Writes, w)
}

// addStamp appends c to the plan.
func (tx *Tx) addStamp(c StampCounter) {
	if tx.plan.Stamps == nil {
		tx.plan.Stamps = tx.stampsBuf[:0]
	}
	tx.plan.Stamps = append(tx.plan.Stamps, c)
}

// Bump plans the reference's Bump(kind, mesh): the (kind, mesh) counter and
// the kind's global counter; with no mesh, or an empty mesh name, only the
// global counter moves, once (anomaly A-39 fixed).
func (tx *Tx) Bump(kind location.LocationKind, mesh *string) {
	k := kind.Scope()
	if mesh != nil && *mesh != "" {
		tx.addStamp(StampCounter{Kind: k, Mesh: *mesh})
	}
	tx.addStamp(StampCounter{Kind: k})
}

// BumpMeshNodeStamp plans a move of the mesh's mesh-node change stamp.
func (tx *Tx) BumpMeshNodeStamp(mesh string) {
	if tx.plan.MeshNodeStamps == nil {
		tx.plan.MeshNodeStamps = tx.meshNodeStampsBuf[:0]
	}
	tx.plan.MeshNodeStamps = append(tx.plan.MeshNodeStamps, mesh)
}

// BumpScanRevision records an authority row-map change.
func (tx *Tx) BumpScanRevision() { tx.plan.ScanRevisionBumped = true }
