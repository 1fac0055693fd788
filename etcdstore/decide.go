package etcdstore

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// decide runs one operation (architecture.md, "How a write flows"):
//
//  1. the context: an ended context is returned, wrapped, before anything;
//  2. validate (may be nil): bad input, before anything is read;
//  3. the rules decision over a source built on the engine's View, run as
//     often as the engine needs (misses, failed guards), always with the
//     same time and reservation ids;
//  4. its plan as one guarded transaction (txn.Run); a decision that plans
//     nothing answers from its read (or after verifying a cached view).
//
// prefetch names the keys the decision is expected to read. After a commit,
// the store versions the decision issued become the commit's revision.
func decide[R any](ctx context.Context, s *Store, op string, validate func() error, prefetch []string, run func(tx *rules.Tx) (R, error)) (R, error) {
	var v func(time.Time) error
	if validate != nil {
		v = func(time.Time) error { return validate() }
	}
	return decideAt(ctx, s, op, v, txn.Prefetch{Keys: prefetch}, run)
}

// decideAt is decide for inputs whose validation depends on the operation's
// time, and for prefetches with keys expected to be absent.
func decideAt[R any](ctx context.Context, s *Store, op string, validate func(now time.Time) error, prefetch txn.Prefetch, run func(tx *rules.Tx) (R, error)) (R, error) {
	var zero R
	if err := checkContext(ctx, op); err != nil {
		return zero, err
	}
	now := s.now()
	if validate != nil {
		if err := validate(now); err != nil {
			return zero, fmt.Errorf("etcdstore: %s: %w", op, err)
		}
	}
	return decideWith(ctx, s, op, now, prefetch, func(tx *rules.Tx, _ *txn.View) (R, []txn.Write, error) {
		r, err := run(tx)
		return r, nil, err
	})
}

// decideWith is the core of decide: run may also return unguarded writes of
// keys outside the tables (owner-index clean-up), added to the commit.
func decideWith[R any](ctx context.Context, s *Store, op string, now time.Time, prefetch txn.Prefetch, run func(tx *rules.Tx, v *txn.View) (R, []txn.Write, error)) (R, error) {
	var zero R
	c := &call{now: now}
	res, out, err := txn.RunWith(ctx, s.engine, op, prefetch, func(v *txn.View) (R, txn.Commit, error) {
		src := s.newSource(v, c)
		tx := rules.NewTx(src)
		r, extra, err := run(tx, v)
		if err == nil {
			err = src.err
		}
		if err != nil {
			return zero, txn.Commit{}, err
		}
		commit, err := s.commitOf(v, tx.Plan(), c.now)
		commit.Unguarded = append(commit.Unguarded, extra...)
		return r, commit, err
	})
	if err != nil {
		return zero, opError(op, err)
	}
	if out.Written {
		replaceVersions(&res, versionOf(out.Revision))
	}
	return res, nil
}

// opError prefixes an error of txn.Run with the package and op; txn names
// op itself in the errors of etcd requests, which then get only the
// package.
func opError(op string, err error) error {
	if strings.HasPrefix(err.Error(), op+": ") {
		return fmt.Errorf("etcdstore: %w", err)
	}
	return fmt.Errorf("etcdstore: %s: %w", op, err)
}

// replaceVersions replaces every pendingVersion inside *res (through
// structs, pointers, slices and interfaces) by v.
func replaceVersions[R any](res *R, v location.StoreVersion) {
	walkVersions(reflect.ValueOf(res).Elem(), v)
}

func walkVersions(val reflect.Value, v location.StoreVersion) {
	switch val.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !val.IsNil() {
			walkVersions(val.Elem(), v)
		}
	case reflect.Struct:
		for i := range val.NumField() {
			if f := val.Field(i); f.CanSet() {
				walkVersions(f, v)
			}
		}
	case reflect.Slice:
		for i := range val.Len() {
			walkVersions(val.Index(i), v)
		}
	case reflect.String:
		if val.Type() == reflect.TypeFor[location.StoreVersion]() && val.CanSet() &&
			location.StoreVersion(val.String()) == pendingVersion {
			val.SetString(string(v))
		}
	}
}

// ownerKeys returns the owner keys of the given owner ids, for prefetching.
func (s *Store) ownerKeys(ownerIDs ...string) []string {
	out := make([]string, 0, len(ownerIDs))
	for _, id := range ownerIDs {
		out = append(out, s.layout.OwnerKey(id))
	}
	return out
}

// tableKey returns the etcd key of a row.
func (s *Store) tableKey(t rules.Table, key string) string { return s.layout.TableKey(string(t), key) }
