package etcdstore

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// backend is the store's side of storecore.Backend: decisions as guarded
// transactions (package txn), lists as range reads at one revision, owner
// leases as etcd leases (package leasemap).
type backend struct{ s *Store }

// Name implements storecore.Backend.
func (backend) Name() string { return "etcdstore" }

// Now implements storecore.Backend.
func (b backend) Now() time.Time { return b.s.now() }

// Leases implements storecore.Backend: the owner-lease map.
func (b backend) Leases() storecore.Leases { return b.s.leases }

// Decide runs one decision (architecture.md, "How a write flows"): the
// rules decision over a source built on the engine's View, run as often as
// the engine needs (misses, failed guards), always with the same time and
// reservation ids; its plan as one guarded transaction (txn.RunWith); a
// decision that plans nothing answers from its read (or after verifying a
// cached view). The call's read set is read first, in one round trip,
// unless the cache holds all of it. After a commit, the store versions the
// decision issued become the commit's revision. It implements
// storecore.Backend.
func (b backend) Decide(ctx context.Context, c *storecore.Call) error {
	s := b.s
	op := s.calls.get(s, s.now())
	defer s.calls.put(op)
	var prefetch txn.Prefetch
	if rs, ok := c.Reads(op.peek); ok {
		prefetch = s.prefetch(op, rs)
	}
	_, out, err := decide(ctx, s, c.Op.Name, op, prefetch, func(tx *rules.Tx, _ *txn.View) (struct{}, []txn.Write, error) {
		return struct{}{}, nil, c.Run(tx)
	})
	if err != nil {
		return err
	}
	if out.Written && c.Result != nil {
		s.replaceVersions(c.Result, out.Revision)
	}
	return nil
}

// decide runs a decision whose run may also return unguarded writes of
// keys outside the tables (owner-index clean-up), added to the commit. It
// returns the result of the run that was applied (or wrote nothing) and
// the engine's outcome. Errors are not prefixed (storecore.Store does it).
func decide[R any](ctx context.Context, s *Store, op string, c *call, prefetch txn.Prefetch, run func(tx *rules.Tx, v *txn.View) (R, []txn.Write, error)) (R, txn.Outcome, error) {
	return txn.RunWith(ctx, s.engine, op, prefetch, func(v *txn.View) (R, txn.Commit, error) {
		var zero R
		src, tx := c.run(s, v)
		r, extra, err := run(tx, v)
		if err == nil {
			err = src.err
		}
		if err != nil {
			return zero, txn.Commit{}, err
		}
		commit, err := s.commitOf(v, c, tx.Plan())
		commit.Unguarded = append(commit.Unguarded, extra...)
		return r, commit, err
	})
}

// prefetch returns the etcd keys of a read set (memoized in c).
func (s *Store) prefetch(c *call, rs storecore.ReadSet) txn.Prefetch {
	p := txn.Prefetch{Keys: c.prefetchBuf[:0]}
	for _, r := range rs.Refs {
		p.Keys = append(p.Keys, c.etcdKey(s, r.Table, r.Key))
	}
	for _, r := range rs.Absent {
		p.Absent = append(p.Absent, c.etcdKey(s, r.Table, r.Key))
	}
	return p
}

// refKey returns the etcd key of what a storecore.Ref names: a table row,
// or an owner key.
func (s *Store) refKey(r storecore.Ref) string {
	if r.IsLease() {
		return s.layout.OwnerKey(r.Key)
	}
	return s.tableKey(r.Table, r.Key)
}

// peek answers a read-set hint from the engine's cache (storecore.Peek): the
// decoded row when the cache holds it present, shared with the cache. c
// memoizes the row's etcd key (the read set and the runs need it again).
func (s *Store) peek(c *call, t rules.Table, key string) (rules.Record, bool) {
	o, ok := s.engine.Cached(c.etcdKey(s, t, key))
	if !ok || !o.Present {
		return rules.Record{}, false
	}
	rec, _, err := sharedRecord(t, o)
	if err != nil {
		return rules.Record{}, false
	}
	return rec, true
}

// replaceVersions replaces every pendingVersion inside *res (res is a
// pointer; through structs, pointers, slices and interfaces) by the store
// version of revision rev, skipping what cannot hold a store version (and
// formatting the version only when *res may hold one).
func (s *Store) replaceVersions(res any, rev int64) {
	val := reflect.ValueOf(res).Elem()
	if val.Kind() != reflect.Interface && !s.versionTypes.of(val.Type()).may {
		return
	}
	s.versionTypes.walk(val, versionOf(rev))
}

// versionTypes remembers, per type, whether a value of it may hold a
// location.StoreVersion that replaceVersions would set (results hold byte
// slices, times and counts that need no walk), and for a struct which of
// its fields may.
type versionTypes struct {
	types sync.Map // reflect.Type → *versionType
}

// versionType is what versionTypes remembers of one type.
type versionType struct {
	// may: a value of the type may hold a settable StoreVersion.
	may bool
	// fields are the indices of a struct's fields that may.
	fields []int
}

// storeVersionType is the type replaceVersions sets.
var storeVersionType = reflect.TypeFor[location.StoreVersion]()

// of returns what is remembered of type t.
func (vt *versionTypes) of(t reflect.Type) *versionType {
	if m, ok := vt.types.Load(t); ok {
		return m.(*versionType)
	}
	m := &versionType{may: mayHoldVersion(t, map[reflect.Type]bool{})}
	if m.may && t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldVersion(f.Type, map[reflect.Type]bool{}) {
				m.fields = append(m.fields, i)
			}
		}
	}
	vt.types.Store(t, m)
	return m
}

// mayHoldVersion answers versionType.may; visiting marks the types being
// visited (a recursive type is assumed to hold one).
func mayHoldVersion(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if t == storeVersionType || t.Kind() == reflect.Interface || visiting[t] {
		return true
	}
	visiting[t] = true
	defer delete(visiting, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		return mayHoldVersion(t.Elem(), visiting)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldVersion(f.Type, visiting) {
				return true
			}
		}
	}
	return false
}

// walk replaces every pendingVersion inside val by v.
func (vt *versionTypes) walk(val reflect.Value, v location.StoreVersion) {
	switch val.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !val.IsNil() {
			if e := val.Elem(); e.Kind() == reflect.Interface || vt.of(e.Type()).may {
				vt.walk(e, v)
			}
		}
	case reflect.Struct:
		for _, i := range vt.of(val.Type()).fields {
			if f := val.Field(i); f.CanSet() {
				vt.walk(f, v)
			}
		}
	case reflect.Slice:
		if val.Len() > 0 && vt.of(val.Type().Elem()).may {
			for i := range val.Len() {
				vt.walk(val.Index(i), v)
			}
		}
	case reflect.String:
		if val.Type() == storeVersionType && val.CanSet() &&
			location.StoreVersion(val.String()) == pendingVersion {
			val.SetString(string(v))
		}
	}
}

// tableKey returns the etcd key of a row.
func (s *Store) tableKey(t rules.Table, key string) string { return s.layout.TableKey(string(t), key) }
