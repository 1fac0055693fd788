package integration

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// The renaming of store-chosen numbers (the conformance random tester's
// idea, rebuilt here because its renamer is internal to that package).
// etcdstore chooses its own lease generations (CreateRevisions), row
// generations (revision + 1), store versions (ModRevisions) and authority
// generations, and both stores choose random reservation ids. The model's
// number m and the store's number s are bound m ↔ s the first time they meet
// in an output; from then on they must always meet. Ordered namespaces also
// keep the order (a later generation is greater on both stores). Inputs
// carry the store's numbers (the clients only know those) and are
// translated back to the model's before the model runs them.
//
// A renaming belongs to one linearization: it lives in the porcupine state
// and is copied on every step that binds something.

// specialNumber reports whether v is compared exactly, never renamed: 0 and
// negatives (failed writes, absent tokens) and values from 2^40 up (numbers
// that no store issued).
func specialNumber(v int64) bool { return v <= 0 || v >= 1<<40 }

// Namespaces.
const (
	nsLease       = "lease"
	nsReservation = "reservation"
)

// Namespaces of one row's generations, and of one authority record's
// versions, object generations and owner generations.
func nsRowGen(table, key string) string { return "rowgen " + table + " " + key }
func nsVersion(key string) string       { return "version " + key }
func nsObjectGen(key string) string     { return "objgen " + key }
func nsOwnerGen(key string) string      { return "ownergen " + key }

// number is one renamed value found in an output (or input): an integer or,
// with str set, a text.
type number struct {
	ns      string
	ordered bool
	str     bool
	i       int64
	s       string
}

// pairs is one integer namespace: model → store and back, and the pairs by
// model value for ordered namespaces.
type pairs struct {
	fwd, back map[int64]int64
	sorted    [][2]int64
}

// texts is one text namespace.
type texts struct {
	fwd, back map[string]string
}

// renaming is the bijection of every namespace of one linearization.
type renaming struct {
	ints map[string]*pairs
	strs map[string]*texts
}

// newRenaming returns an empty renaming.
func newRenaming() *renaming {
	return &renaming{ints: map[string]*pairs{}, strs: map[string]*texts{}}
}

// clone copies the renaming (namespaces are copied when written: clone is
// shallow and bind copies the namespace it changes).
func (r *renaming) clone() *renaming {
	return &renaming{ints: maps.Clone(r.ints), strs: maps.Clone(r.strs)}
}

// bind records or checks one pair; it returns a description of the
// inconsistency, or "".
func (r *renaming) bind(m, s number) string {
	if m.ns != s.ns || m.str != s.str {
		return fmt.Sprintf("namespaces differ: %s / %s", m.ns, s.ns)
	}
	if m.str {
		return r.bindStr(m.ns, m.s, s.s)
	}
	return r.bindInt(m.ns, m.ordered, m.i, s.i)
}

// bindInt binds integers; see bind.
func (r *renaming) bindInt(ns string, ordered bool, m, s int64) string {
	if specialNumber(m) || specialNumber(s) {
		if m != s {
			return fmt.Sprintf("%s: model %d, store %d", ns, m, s)
		}
		return ""
	}
	sp := r.ints[ns]
	if sp != nil {
		if prev, ok := sp.fwd[m]; ok {
			if prev != s {
				return fmt.Sprintf("%s: model %d stood for store %d, now %d", ns, m, prev, s)
			}
			return ""
		}
		if prev, ok := sp.back[s]; ok {
			return fmt.Sprintf("%s: store %d stood for model %d, now %d", ns, s, prev, m)
		}
	}
	var sorted [][2]int64
	if sp != nil {
		sorted = sp.sorted
	}
	i := sort.Search(len(sorted), func(i int) bool { return sorted[i][0] > m })
	if ordered {
		if i > 0 && sorted[i-1][1] >= s {
			return fmt.Sprintf("%s: model %d > %d but store %d <= %d", ns, m, sorted[i-1][0], s, sorted[i-1][1])
		}
		if i < len(sorted) && sorted[i][1] <= s {
			return fmt.Sprintf("%s: model %d < %d but store %d >= %d", ns, m, sorted[i][0], s, sorted[i][1])
		}
	}
	next := &pairs{fwd: map[int64]int64{m: s}, back: map[int64]int64{s: m}}
	if sp != nil {
		next.fwd, next.back = maps.Clone(sp.fwd), maps.Clone(sp.back)
		next.fwd[m], next.back[s] = s, m
	}
	next.sorted = slices.Insert(slices.Clone(sorted), i, [2]int64{m, s})
	r.ints[ns] = next
	return ""
}

// bindStr binds texts; see bind.
func (r *renaming) bindStr(ns, m, s string) string {
	if m == "" || s == "" {
		if m != s {
			return fmt.Sprintf("%s: model %q, store %q", ns, m, s)
		}
		return ""
	}
	sp := r.strs[ns]
	if sp != nil {
		if prev, ok := sp.fwd[m]; ok {
			if prev != s {
				return fmt.Sprintf("%s: model %q stood for store %q, now %q", ns, m, prev, s)
			}
			return ""
		}
		if prev, ok := sp.back[s]; ok {
			return fmt.Sprintf("%s: store %q stood for model %q, now %q", ns, s, prev, m)
		}
	}
	next := &texts{fwd: map[string]string{m: s}, back: map[string]string{s: m}}
	if sp != nil {
		next.fwd, next.back = maps.Clone(sp.fwd), maps.Clone(sp.back)
		next.fwd[m], next.back[s] = s, m
	}
	r.strs[ns] = next
	return ""
}

// modelInt translates a store number into the model's; special and unbound
// numbers pass unchanged (unbound ones are numbers no output showed in this
// linearization: the model will answer as for an unknown number).
func (r *renaming) modelInt(ns string, s int64) int64 {
	if specialNumber(s) {
		return s
	}
	if sp := r.ints[ns]; sp != nil {
		if m, ok := sp.back[s]; ok {
			return m
		}
	}
	return unboundNumber(s)
}

// unboundNumber maps a store number that this linearization has not bound
// to a number the model never issues, so that it matches nothing.
func unboundNumber(s int64) int64 { return 1<<41 + s }

// modelStr translates a store text into the model's.
func (r *renaming) modelStr(ns, s string) string {
	if s == "" {
		return s
	}
	if sp := r.strs[ns]; sp != nil {
		if m, ok := sp.back[s]; ok {
			return m
		}
	}
	return "unbound:" + s
}

// key is a canonical text of the renaming (for state equality).
func (r *renaming) key() string {
	var b []byte
	for _, ns := range slices.Sorted(maps.Keys(r.ints)) {
		b = fmt.Appendf(b, "%s%v;", ns, r.ints[ns].sorted)
	}
	for _, ns := range slices.Sorted(maps.Keys(r.strs)) {
		sp := r.strs[ns]
		for _, m := range slices.Sorted(maps.Keys(sp.fwd)) {
			b = fmt.Appendf(b, "%s:%s=%s;", ns, m, sp.fwd[m])
		}
	}
	return string(b)
}
