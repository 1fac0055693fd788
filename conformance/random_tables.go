package conformance

import (
	"context"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The location tables as the random operations see them. Each table is
// described once (a rowTable, beside the spec its rows are built from);
// the operations below are written once for all of them.

// rowTable is what the random operations need to know of one location
// table: R is its row (or descriptor) type, K its key.
type rowTable[R, K any] struct {
	// name is the table in the store's method names: Update<name>,
	// Remove<name>, Resolve<name>, List<name>s.
	name string
	key  func(*R) K
	// ns is the generation namespace of a key's rows.
	ns func(K) string
	// owner points at a row's owner id and at the number that each store
	// is passed in its own numbers: the owner's lease generation, or the
	// row's own generation when rowGen is set (peers, routes).
	owner  func(*R) (id *string, number *int64)
	rowGen bool
	// last is where the knowledge keeps the row last stored.
	last   func(*knowledge) **R
	update func(location.Store, context.Context, R, location.WriteIntent) (location.WriteResult, error)
}

// rowSpec is a symbolic row: rendered in reports, built when its operation
// runs.
type rowSpec[R any] interface {
	fmt.Stringer
	build(k *knowledge) R
}

// token is a row's owner token: its owner id and its number.
func (t rowTable[R, K]) token(r *R) location.OwnerToken {
	id, n := t.owner(r)
	return location.OwnerToken{OwnerID: *id, LeaseGeneration: *n}
}

// number points at a row's number.
func (t rowTable[R, K]) number(r *R) *int64 {
	_, n := t.owner(r)
	return n
}

// pass returns the row with its number in a side's numbers.
func (t rowTable[R, K]) pass(sd side, row R) R {
	n := t.number(&row)
	if t.rowGen {
		*n = sd.rowGen(t.ns(t.key(&row)), *n)
	} else {
		*n = sd.lease(*n)
	}
	return row
}

// compare compares a row of the model with the store's: the number is
// renamed (a row generation in its key's namespace, which the model's row
// teaches), the rest must be the same.
func (t rowTable[R, K]) compare(x *runState, path string, m, s R) {
	mn, sn := t.number(&m), t.number(&s)
	if t.rowGen {
		ns := t.ns(t.key(&m))
		x.num(ns, true, path+".Generation", *mn, *sn)
		x.know.learnRowGen(ns, *mn)
	} else {
		x.lease(path+".LeaseGeneration", *mn, *sn)
	}
	*mn, *sn = 0, 0
	x.same(path, m, s)
}

// updateOp is Update<Table>(row, intent), the row built from spec.
func (t rowTable[R, K]) updateOp(spec rowSpec[R], intent location.WriteIntent) randomOp {
	return randomOp{name: "Update" + t.name, args: func() string { return fmt.Sprintf("%s, %s", spec, intent) }, run: func(x *runState) {
		row := spec.build(x.know)
		ns := t.ns(t.key(&row))
		x.inputs(row, intent)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			return t.update(sd.store, x.ctx, t.pass(sd, row), intent)
		})
		if !ok {
			return
		}
		x.writeResult("", ns, m, s)
		if x.ok() && m.Status == location.Stored {
			if t.rowGen {
				x.know.learnRowGen(ns, m.Generation)
				*t.number(&row) = m.Generation
			}
			*t.last(x.know) = &row
		}
	}}
}

// removeOp is Remove<Table>(key, token) of a table whose rows carry their
// owner's token: a status. last names the row last stored, and its token,
// instead; args renders the other arguments.
func (t rowTable[R, K]) removeOp(key K, tok tokenRef, last bool, args func() string, remove func(location.Store, context.Context, K, location.OwnerToken) (location.WriteStatus, error)) randomOp {
	return randomOp{name: "Remove" + t.name, args: func() string { return lastArgs(last, args()) }, run: func(x *runState) {
		key, tok := key, tok.resolve(x.know)
		if r := *t.last(x.know); last && r != nil {
			key, tok = t.key(r), t.token(r)
		}
		x.inputs(key, tok)
		m, s, ok := both(x, func(sd side) (location.WriteStatus, error) {
			return remove(sd.store, x.ctx, key, sd.token(tok))
		})
		if ok {
			x.kind("", m, s)
		}
	}}
}

// removeGenOp is Remove<Table>(key, {owner, row generation}) of a table
// whose rows carry their own generation: a write result. last names the
// row last stored, with its owner and generation, instead.
func (t rowTable[R, K]) removeGenOp(key K, owner int, gen rowGenRef, last bool, args func() string, remove func(location.Store, context.Context, K, location.OwnerToken) (location.WriteResult, error)) randomOp {
	return randomOp{name: "Remove" + t.name, args: func() string { return lastArgs(last, args()) }, run: func(x *runState) {
		key, ns := key, t.ns(key)
		tok := location.OwnerToken{OwnerID: randomOwners()[owner], LeaseGeneration: gen.resolve(x.know, ns)}
		if r := *t.last(x.know); last && r != nil {
			key, ns, tok = t.key(r), t.ns(t.key(r)), t.token(r)
		}
		x.inputs(key, tok)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			o := tok
			o.LeaseGeneration = sd.rowGen(ns, o.LeaseGeneration)
			return remove(sd.store, x.ctx, key, o)
		})
		if ok {
			x.writeResult("", ns, m, s)
		}
	}}
}

// resolveOp is Resolve<Table>(key); last names the row last stored
// instead.
func (t rowTable[R, K]) resolveOp(key K, last bool, args func() string, resolve func(location.Store, context.Context, K) (*R, error)) randomOp {
	return randomOp{name: "Resolve" + t.name, args: func() string { return lastArgs(last, args()) }, run: func(x *runState) {
		key := key
		if r := *t.last(x.know); last && r != nil {
			key = t.key(r)
		}
		x.inputs(key)
		m, s, ok := both(x, func(sd side) (*R, error) { return resolve(sd.store, x.ctx, key) })
		if ok && x.present("row", m == nil, s == nil) {
			t.compare(x, "row", *m, *s)
		}
	}}
}

// listOp is List<Table>s(filter, pages), filter built when the operation
// runs; args renders the filter.
func listOp[R, K, F any](t rowTable[R, K], args string, filter func() F, p pageSpec, list func(location.Store, context.Context, F, location.PageRequest) (location.Page[R], error)) randomOp {
	return randomOp{name: "List" + t.name + "s", args: func() string { return args + ", " + p.String() }, run: func(x *runState) {
		f := filter()
		x.inputs(f, p)
		listPages(x, p, func(sd side, req location.PageRequest) (location.Page[R], error) {
			return list(sd.store, x.ctx, f, req)
		}, func(path string, m, s R) { t.compare(x, path, m, s) })
	}}
}

// lastArgs renders the arguments of an operation that may name the row
// last written instead of its own.
func lastArgs(last bool, own string) string {
	if last {
		return "last written, else " + own
	}
	return own
}

// invalidMark renders a spec's corruption (nothing for a valid spec).
func invalidMark(corrupt int) string {
	if corrupt > 0 {
		return fmt.Sprintf(" INVALID#%d", corrupt)
	}
	return ""
}

// optionalPick is choices[i], or nil (the field left out) when i is
// negative.
func optionalPick[T any](i int, choices ...T) *T {
	if i < 0 {
		return nil
	}
	return &choices[i]
}
