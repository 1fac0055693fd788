package conformance

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// A Renamer relates the numbers a store under test chooses to the numbers a
// model of the store (memstore) chooses for the same history, so that the
// two can be compared although they differ: etcd issues revisions where the
// reference issues dense counters, and every store draws its own random
// reservation ids.
//
// Numbers and texts live in namespaces (NSLease, NSRowGeneration(…), …). The
// first time the model shows m where the store shows s, m ↔ s is recorded;
// from then on m must always come with s and s with m (a bijection per
// namespace). In an ordered namespace the bijection must also keep the order:
// the generations of one key grow on both stores. Special numbers (0,
// negatives, and numbers from NeverIssued up, which no store issues) are
// never renamed, only compared exactly.
//
// An exact renamer (NewRenamer(true), for stores that claim DenseCounters)
// renames nothing but reservation ids, which are random on every store.
//
// The conformance random tester uses a Renamer to compare each result of a
// store with the model's; a linearizability checker can keep one per
// explored state with Clone. A Renamer is not safe for concurrent use,
// except that any number of goroutines may Clone and read one renamer that
// nobody changes.
type Renamer struct {
	exact bool
	nums  map[string]*numSpace
	strs  map[string]*space[string]
}

// NeverIssued is the smallest number no store issues: the random tester
// passes numbers from it up where a caller would pass a number the store
// never gave out. Such numbers, 0 and negatives are compared exactly.
const NeverIssued int64 = 1 << 40

// SpecialNumber reports whether v is compared exactly, never renamed.
func SpecialNumber(v int64) bool { return v <= 0 || v >= NeverIssued }

// unboundNumber maps a store number that the renaming has not bound to a
// number the model never issues, so that it matches nothing.
func unboundNumber(s int64) int64 { return 2*NeverIssued + s }

// unboundText marks a store text the renaming has not bound.
const unboundText = "unbound:"

// Namespaces of renamed numbers.
const (
	// NSLease holds owner-lease generations (ordered).
	NSLease = "owner-lease generations"
	// NSReservation holds creation reservation ids, renamed by every
	// renamer.
	NSReservation = "creation reservation ids"
)

// NSRowGeneration is the namespace of the generations of one row (ordered),
// named by its table and a text of its key.
func NSRowGeneration(table, key string) string {
	return fmt.Sprintf("row generations of %s %s", table, key)
}

// NSVersion is the namespace of one authority record's store versions.
func NSVersion(key string) string { return "store versions of " + key }

// NSObjectGeneration is the namespace of one authority record's object
// generations (ordered).
func NSObjectGeneration(key string) string { return "object generations of " + key }

// NSOwnerGeneration is the namespace of one authority record's owner
// generations (ordered).
func NSOwnerGeneration(key string) string { return "authority owner generations of " + key }

// Rules a binding can break (RenameMismatch.Rule).
const (
	// RenameRuleNumber: a number or text compared exactly differs (an exact
	// renamer, or a special number).
	RenameRuleNumber = "number"
	// RenameRuleBijection: a number stood for another one before.
	RenameRuleBijection = "bijection"
	// RenameRuleOrder: a number breaks the order of its namespace.
	RenameRuleOrder = "order"
)

// RenameMismatch is a pair of numbers (or texts) that breaks the renaming.
type RenameMismatch struct {
	// Rule is RenameRuleNumber, RenameRuleBijection or RenameRuleOrder.
	Rule string
	// Namespace is the pair's namespace.
	Namespace string
	// Detail says in words what broke, both numbers included.
	Detail string
}

// Error implements error.
func (m *RenameMismatch) Error() string { return m.Detail }

// renameRule returns the rule of a RenameMismatch, or "".
func renameRule(err error) string {
	var m *RenameMismatch
	if errors.As(err, &m) {
		return m.Rule
	}
	return ""
}

// numPair is one renamed number: the model's and the store's.
type numPair struct{ m, s int64 }

// space is the bijection of one namespace. shared is set once two renamers
// hold the space (Clone): from then on neither changes it in place.
type space[K comparable] struct {
	shared    atomic.Bool
	fwd, back map[K]K
}

// newSpace returns an empty space, or a copy of from.
func newSpace[K comparable](from *space[K]) *space[K] {
	if from == nil {
		return &space[K]{fwd: map[K]K{}, back: map[K]K{}}
	}
	return &space[K]{fwd: maps.Clone(from.fwd), back: maps.Clone(from.back)}
}

// conflict reports how m ↔ s contradicts the space's bindings ("" when it
// does not), and whether the pair is bound already.
func (sp *space[K]) conflict(m, s K) (detail string, bound bool) {
	if sp == nil {
		return "", false
	}
	if prev, ok := sp.fwd[m]; ok {
		if prev != s {
			return fmt.Sprintf("model %v stood for store %v before, now the store shows %v", m, prev, s), true
		}
		return "", true
	}
	if prev, ok := sp.back[s]; ok {
		return fmt.Sprintf("store %v stood for model %v before, now the model shows %v", s, prev, m), true
	}
	return "", false
}

// translate looks v up model → store (toStore) or store → model.
func (sp *space[K]) translate(v K, toStore bool) (K, bool) {
	if sp == nil {
		var zero K
		return zero, false
	}
	if toStore {
		x, ok := sp.fwd[v]
		return x, ok
	}
	x, ok := sp.back[v]
	return x, ok
}

// numSpace is a numeric namespace; sorted holds its pairs by model number.
type numSpace struct {
	*space[int64]
	sorted []numPair
}

// NewRenamer returns an empty renamer; exact renames only reservation ids.
func NewRenamer(exact bool) *Renamer {
	return &Renamer{exact: exact, nums: map[string]*numSpace{}, strs: map[string]*space[string]{}}
}

// Clone returns a renamer with the same bindings that changes independently
// of r. It is cheap: namespaces are copied only when one side changes them.
func (r *Renamer) Clone() *Renamer {
	for _, sp := range r.nums {
		sp.shared.Store(true)
	}
	for _, sp := range r.strs {
		sp.shared.Store(true)
	}
	return &Renamer{exact: r.exact, nums: maps.Clone(r.nums), strs: maps.Clone(r.strs)}
}

// numSpace returns ns's numeric space, or nil.
func (r *Renamer) numSpace(ns string) *space[int64] {
	if sp, ok := r.nums[ns]; ok {
		return sp.space
	}
	return nil
}

// writableNum returns ns's space, created or copied so that r may change it.
func (r *Renamer) writableNum(ns string) *numSpace {
	sp, ok := r.nums[ns]
	switch {
	case !ok:
		sp = &numSpace{space: newSpace[int64](nil)}
	case sp.shared.Load():
		sp = &numSpace{space: newSpace(sp.space), sorted: slices.Clone(sp.sorted)}
	default:
		return sp
	}
	r.nums[ns] = sp
	return sp
}

// writableStr returns ns's space, created or copied so that r may change it.
func (r *Renamer) writableStr(ns string) *space[string] {
	sp, ok := r.strs[ns]
	switch {
	case !ok:
		sp = newSpace[string](nil)
	case sp.shared.Load():
		sp = newSpace(sp)
	default:
		return sp
	}
	r.strs[ns] = sp
	return sp
}

// mismatch builds a RenameMismatch.
func mismatch(rule, ns, format string, args ...any) error {
	return &RenameMismatch{Rule: rule, Namespace: ns, Detail: ns + ": " + fmt.Sprintf(format, args...)}
}

// BindNumber records or checks m ↔ s in ns, the model's number m and the
// store's s. It returns nil when the pair is consistent with every earlier
// one, else a *RenameMismatch (and records nothing).
func (r *Renamer) BindNumber(ns string, ordered bool, m, s int64) error {
	if r.exact {
		if m != s {
			return mismatch(RenameRuleNumber, ns, "model %d, store %d (the store declares exact numbers)", m, s)
		}
		return nil
	}
	if SpecialNumber(m) || SpecialNumber(s) {
		if m != s {
			return mismatch(RenameRuleNumber, ns, "model %d, store %d (0, negative and never-issued values are compared exactly)", m, s)
		}
		return nil
	}
	if detail, bound := r.numSpace(ns).conflict(m, s); detail != "" {
		return mismatch(RenameRuleBijection, ns, "%s", detail)
	} else if bound {
		return nil
	}
	var sorted []numPair
	if sp, ok := r.nums[ns]; ok {
		sorted = sp.sorted
	}
	i := sort.Search(len(sorted), func(i int) bool { return sorted[i].m > m })
	if ordered {
		if i > 0 && sorted[i-1].s >= s {
			lo := sorted[i-1]
			return mismatch(RenameRuleOrder, ns, "model %d > %d but store %d ≤ %d", m, lo.m, s, lo.s)
		}
		if i < len(sorted) && sorted[i].s <= s {
			hi := sorted[i]
			return mismatch(RenameRuleOrder, ns, "model %d < %d but store %d ≥ %d", m, hi.m, s, hi.s)
		}
	}
	sp := r.writableNum(ns)
	sp.sorted = slices.Insert(sp.sorted, i, numPair{m: m, s: s})
	sp.fwd[m], sp.back[s] = s, m
	return nil
}

// textRenamed reports whether texts of ns are renamed (else compared
// exactly).
func (r *Renamer) textRenamed(ns string) bool { return !r.exact || ns == NSReservation }

// BindText records or checks m ↔ s in the text namespace ns (store versions,
// reservation ids); "" is compared exactly. It returns nil or a
// *RenameMismatch, as BindNumber.
func (r *Renamer) BindText(ns string, m, s string) error {
	if !r.textRenamed(ns) || m == "" || s == "" {
		if m != s {
			return mismatch(RenameRuleNumber, ns, "model %q, store %q", m, s)
		}
		return nil
	}
	if detail, bound := r.strs[ns].conflict(m, s); detail != "" {
		return mismatch(RenameRuleBijection, ns, "%s", detail)
	} else if bound {
		return nil
	}
	sp := r.writableStr(ns)
	sp.fwd[m], sp.back[s] = s, m
	return nil
}

// ToStoreNumber translates a model number of ns into the store's. Special
// and unbound numbers pass unchanged.
func (r *Renamer) ToStoreNumber(ns string, m int64) int64 {
	if s, ok := r.numSpace(ns).translate(m, true); ok && !r.exact && !SpecialNumber(m) {
		return s
	}
	return m
}

// ToStoreText translates a model text of ns into the store's; "" and unbound
// texts pass unchanged.
func (r *Renamer) ToStoreText(ns string, m string) string {
	if s, ok := r.strs[ns].translate(m, true); ok && r.textRenamed(ns) && m != "" {
		return s
	}
	return m
}

// ToModelNumber translates a store number of ns into the model's. Special
// numbers pass unchanged; an unbound number becomes a number the model never
// issued, so that it matches nothing there.
func (r *Renamer) ToModelNumber(ns string, s int64) int64 {
	if r.exact || SpecialNumber(s) {
		return s
	}
	if m, ok := r.numSpace(ns).translate(s, false); ok {
		return m
	}
	return unboundNumber(s)
}

// ToModelText translates a store text of ns into the model's; "" passes
// unchanged and an unbound text becomes one the model never issued.
func (r *Renamer) ToModelText(ns string, s string) string {
	if !r.textRenamed(ns) || s == "" {
		return s
	}
	if m, ok := r.strs[ns].translate(s, false); ok {
		return m
	}
	return unboundText + s
}

// Key is a canonical text of every binding: two renamers with the same
// bindings have the same key.
func (r *Renamer) Key() string {
	var b strings.Builder
	for _, ns := range slices.Sorted(maps.Keys(r.nums)) {
		fmt.Fprintf(&b, "%s%v;", ns, r.nums[ns].sorted)
	}
	for _, ns := range slices.Sorted(maps.Keys(r.strs)) {
		sp := r.strs[ns]
		for _, m := range slices.Sorted(maps.Keys(sp.fwd)) {
			fmt.Fprintf(&b, "%s:%s=%s;", ns, m, sp.fwd[m])
		}
	}
	return b.String()
}

// String renders the numeric bindings for reports: each namespace with its
// (model, store) pairs by model number, namespaces in order.
func (r *Renamer) String() string {
	var parts []string
	for _, ns := range slices.Sorted(maps.Keys(r.nums)) {
		pairs := make([]string, len(r.nums[ns].sorted))
		for i, p := range r.nums[ns].sorted {
			pairs[i] = fmt.Sprintf("%d→%d", p.m, p.s)
		}
		parts = append(parts, ns+" "+strings.Join(pairs, " "))
	}
	return strings.Join(parts, "; ")
}
