package etcdstore

import (
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// pendingVersion is the store version a decision issues before its commit
// has a revision; backend.Decide replaces it in the result by the commit's
// revision (decision E-4: a record's version is its ModRevision). It cannot
// be a real version (those are decimal).
const pendingVersion location.StoreVersion = "pending-version"

// call is what stays the same across the runs of one operation's decision:
// its time and the reservation ids it issued.
type call struct {
	now            time.Time
	reservationIDs []string
	// keys are etcd keys the operation computed (etcdKey), so that each is
	// built once: a row's key is needed by the read set, every run's reads
	// and the commit.
	keys   []callKey
	keyBuf [4]callKey
	// prefetchBuf holds the read set's keys, and writeBuf and touchBuf the
	// commit's writes and touched keys, of most operations (a commit is
	// built anew by each run, and only the last run's is sent after the
	// run that built it).
	prefetchBuf [4]string
	writeBuf    [2]txn.Write
	touchBuf    [4]string
	// src and tx are the source and the rules transaction of the current
	// run of the decision, in the call's allocation (runs are sequential).
	src source
	tx  rules.Tx
	// peek is Store.peek through this call's keys, for the read set
	// (storecore.Call.Reads); bound once per call the pool makes, so that
	// a decision does not make a function value.
	peek storecore.Peek
}

// callKey is one memoized etcd key: of a row (table, key), or of an owner
// key (table "", key the owner id).
type callKey struct {
	table     rules.Table
	key, etcd string
}

// maxCallKeys bounds the keys a call memoizes (a removal batch reads
// hundreds, each once).
const maxCallKeys = 16

// newCall returns the call of an operation at time now.
func newCall(now time.Time) *call {
	c := &call{now: now}
	c.keys = c.keyBuf[:0]
	return c
}

// callPool recycles the calls of decisions (Backend.Decide): a call is
// about a kilobyte, most of it room for small plans, read sets and
// commits, and every write makes one.
type callPool struct{ p sync.Pool }

// get returns a call of an operation of s at time now.
func (cp *callPool) get(s *Store, now time.Time) *call {
	c, ok := cp.p.Get().(*call)
	if !ok {
		c = newCall(now)
		c.peek = func(t rules.Table, key string) (rules.Record, bool) { return s.peek(c, t, key) }
		return c
	}
	c.now = now
	c.keys = c.keyBuf[:0]
	return c
}

// put recycles c once its operation is over. Nothing refers to a call
// then: what its decision produced (the result, the written values, their
// decoded forms, the keys) are allocations of their own, and its View is
// recycled by the engine. Its bound peek stays (the pool is its store's).
func (cp *callPool) put(c *call) {
	*c = call{peek: c.peek}
	cp.p.Put(c)
}

// etcdKey returns the etcd key of row (t, key), or of ownerID's owner key
// when t is "".
func (c *call) etcdKey(s *Store, t rules.Table, key string) string {
	for _, k := range c.keys {
		if k.table == t && k.key == key {
			return k.etcd
		}
	}
	var e string
	if t == "" {
		e = s.layout.OwnerKey(key)
	} else {
		e = s.layout.TableKey(string(t), key)
	}
	if len(c.keys) < maxCallKeys {
		c.keys = append(c.keys, callKey{table: t, key: key, etcd: e})
	}
	return e
}

// source is the rules.SharedSource of one run of a decision: the engine's View,
// read through the store's key layout and value codec.
//
//   - LiveLease is the owner key's existence; its generation the key's
//     CreateRevision (decision E-2), re-asserted at commit (GuardCreate).
//   - NextGeneration and the authority generations are the revision the key
//     was observed at, plus one (decisions E-3, E-4).
//   - Versions are issued as pendingVersion; CanIssue is always true
//     (revisions do not run out).
type source struct {
	s    *Store
	v    *txn.View
	call *call
	ids  int   // reservation ids issued by this run
	err  error // the first undecodable value met
}

// run starts a run of the operation's decision over v: its source and its
// rules transaction, reset.
func (c *call) run(s *Store, v *txn.View) (*source, *rules.Tx) {
	c.src = source{s: s, v: v, call: c}
	c.tx.Reset(&c.src)
	return &c.src, &c.tx
}

// Now is the operation's time.
func (src *source) Now() time.Time { return src.call.now }

// Get reads (t, key) through the view: the caller's own record.
func (src *source) Get(t rules.Table, key string) (rules.Record, bool) {
	rec, shared, ok := src.read(t, key)
	if ok && shared {
		spec, _ := rules.Lookup(t) // only values of known tables are shared
		rec.Value = spec.Clone(rec.Value)
	}
	return rec, ok
}

// GetShared reads (t, key) through the view, sharing the decoded value the
// observation keeps (rules.SharedSource).
func (src *source) GetShared(t rules.Table, key string) (rules.Record, bool) {
	rec, _, ok := src.read(t, key)
	return rec, ok
}

// read reads (t, key) through the view and decodes it (sharedRecord); an
// undecodable value reads as absent and is remembered in src.err.
func (src *source) read(t rules.Table, key string) (rec rules.Record, shared, ok bool) {
	o, ok := src.v.Get(src.call.etcdKey(src.s, t, key))
	if !ok {
		return rules.Record{}, false, false
	}
	rec, shared, err := sharedRecord(t, o)
	if err != nil {
		if src.err == nil {
			src.err = err
		}
		return rules.Record{}, false, false
	}
	return rec, shared, true
}

// Compile-time check: decisions may share what the source decoded.
var _ rules.SharedSource = (*source)(nil)

// LiveLease reports whether ownerID's owner key exists, and its generation.
func (src *source) LiveLease(ownerID string) (int64, bool) {
	return src.v.Owner(src.call.etcdKey(src.s, "", ownerID))
}

// NextGeneration is the key's observation revision + 1.
func (src *source) NextGeneration(t rules.Table, key string) int64 {
	return src.v.Revision(src.call.etcdKey(src.s, t, key)) + 1
}

// CanIssue is always true: etcd revisions do not run out in practice.
func (src *source) CanIssue(int64, int64, int64) bool { return true }

// IssueVersion returns the placeholder that the commit revision replaces.
func (src *source) IssueVersion() location.StoreVersion { return pendingVersion }

// IssueObjectGeneration is the authority key's observation revision + 1.
func (src *source) IssueObjectGeneration(key location.AuthorityKey) int64 {
	return src.NextGeneration(rules.TableAuthority, string(key))
}

// IssueOwnerGeneration is the authority key's observation revision + 1.
func (src *source) IssueOwnerGeneration(key location.AuthorityKey) int64 {
	return src.NextGeneration(rules.TableAuthority, string(key))
}

// NewReservationID returns a fresh UUID v4; the i-th id of every run of one
// operation is the same, so that a retried decision reserves under the id
// its first run chose (and a lost response can be resolved by it).
func (src *source) NewReservationID() string {
	if src.ids == len(src.call.reservationIDs) {
		src.call.reservationIDs = append(src.call.reservationIDs, newUUID())
	}
	id := src.call.reservationIDs[src.ids]
	src.ids++
	return id
}

// newUUID returns a random lower-case UUID v4 text.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
