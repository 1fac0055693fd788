package conformance

import (
	"fmt"
	"sort"
)

// Renaming of store-chosen numbers. A store that does not declare
// ExactNumbers may choose its own lease generations, row generations,
// authority versions, object and owner generations (etcd uses revisions),
// and every store chooses its own reservation ids. The random tester
// compares such a number with the model's through a bijection per
// namespace, built as the sequence runs: the first time the model shows m
// where the store shows s, m ↔ s is recorded; from then on m must always
// come with s and s with m. In an ordered namespace the bijection must also
// keep the order (the generations of one key grow on both stores).
//
// Special values are never renamed: 0 and negatives (failed writes, absent
// tokens), and numbers from hugeNumber up, which the generator uses for
// values no store ever issued.

// hugeNumber is the smallest "never issued" number the generator passes to
// stores; numbers from it up and numbers ≤ 0 are compared exactly.
const hugeNumber int64 = 1 << 40

// specialNumber reports whether v is compared exactly, never renamed.
func specialNumber(v int64) bool { return v <= 0 || v >= hugeNumber }

// Namespaces of renamed numbers.
const (
	nsLease       = "owner-lease generations"
	nsReservation = "creation reservation ids"
)

// nsRowGen is the namespace of one row's generations.
func nsRowGen(table string, key string) string {
	return fmt.Sprintf("row generations of %s %s", table, key)
}

// nsVersion is the namespace of one authority record's store versions.
func nsVersion(key string) string { return "store versions of " + key }

// nsObjectGen is the namespace of one authority record's object generations.
func nsObjectGen(key string) string { return "object generations of " + key }

// nsOwnerGen is the namespace of one authority record's owner generations.
func nsOwnerGen(key string) string { return "authority owner generations of " + key }

// numPair is one renamed number: the model's and the store's.
type numPair struct{ m, s int64 }

// numSpace is the bijection of one numeric namespace.
type numSpace struct {
	fwd, back map[int64]int64
	// sorted holds the pairs by model value (ordered namespaces only).
	sorted []numPair
}

// strSpace is the bijection of one text namespace.
type strSpace struct {
	fwd, back map[string]string
}

// renamer holds every namespace of one sequence run.
type renamer struct {
	// exact: numbers must be equal (the store declares ExactNumbers);
	// reservation ids are renamed even then (they are random).
	exact bool
	nums  map[string]*numSpace
	strs  map[string]*strSpace
}

// newRenamer returns an empty renamer.
func newRenamer(exact bool) *renamer {
	return &renamer{exact: exact, nums: map[string]*numSpace{}, strs: map[string]*strSpace{}}
}

// numSpaceOf returns (creating) the namespace.
func (r *renamer) numSpaceOf(ns string) *numSpace {
	sp, ok := r.nums[ns]
	if !ok {
		sp = &numSpace{fwd: map[int64]int64{}, back: map[int64]int64{}}
		r.nums[ns] = sp
	}
	return sp
}

// strSpaceOf returns (creating) the namespace.
func (r *renamer) strSpaceOf(ns string) *strSpace {
	sp, ok := r.strs[ns]
	if !ok {
		sp = &strSpace{fwd: map[string]string{}, back: map[string]string{}}
		r.strs[ns] = sp
	}
	return sp
}

// bindNum records or checks m ↔ s in ns. It returns the broken rule and a
// description, or "" when the pair is consistent.
func (r *renamer) bindNum(ns string, ordered bool, m, s int64) (rule, detail string) {
	if r.exact {
		if m != s {
			return ruleNumber, fmt.Sprintf("%s: model %d, store %d (the store declares exact numbers)", ns, m, s)
		}
		return "", ""
	}
	if specialNumber(m) || specialNumber(s) {
		if m != s {
			return ruleNumber, fmt.Sprintf("%s: model %d, store %d (0, negative and never-issued values are compared exactly)", ns, m, s)
		}
		return "", ""
	}
	sp := r.numSpaceOf(ns)
	if prev, ok := sp.fwd[m]; ok {
		if prev != s {
			return ruleBijection, fmt.Sprintf("%s: model %d stood for store %d before, now the store shows %d", ns, m, prev, s)
		}
		return "", ""
	}
	if prev, ok := sp.back[s]; ok {
		return ruleBijection, fmt.Sprintf("%s: store %d stood for model %d before, now the model shows %d", ns, s, prev, m)
	}
	if ordered {
		i := sort.Search(len(sp.sorted), func(i int) bool { return sp.sorted[i].m > m })
		if i > 0 && sp.sorted[i-1].s >= s {
			lo := sp.sorted[i-1]
			return ruleOrder, fmt.Sprintf("%s: model %d > %d but store %d ≤ %d", ns, m, lo.m, s, lo.s)
		}
		if i < len(sp.sorted) && sp.sorted[i].s <= s {
			hi := sp.sorted[i]
			return ruleOrder, fmt.Sprintf("%s: model %d < %d but store %d ≥ %d", ns, m, hi.m, s, hi.s)
		}
		sp.sorted = append(sp.sorted, numPair{})
		copy(sp.sorted[i+1:], sp.sorted[i:])
		sp.sorted[i] = numPair{m: m, s: s}
	}
	sp.fwd[m], sp.back[s] = s, m
	return "", ""
}

// bindStr records or checks m ↔ s in ns; rename forces renaming even on an
// exact store (reservation ids). "" is compared exactly.
func (r *renamer) bindStr(ns string, rename bool, m, s string) (rule, detail string) {
	if (r.exact && !rename) || m == "" || s == "" {
		if m != s {
			return ruleNumber, fmt.Sprintf("%s: model %q, store %q", ns, m, s)
		}
		return "", ""
	}
	sp := r.strSpaceOf(ns)
	if prev, ok := sp.fwd[m]; ok {
		if prev != s {
			return ruleBijection, fmt.Sprintf("%s: model %q stood for store %q before, now the store shows %q", ns, m, prev, s)
		}
		return "", ""
	}
	if prev, ok := sp.back[s]; ok {
		return ruleBijection, fmt.Sprintf("%s: store %q stood for model %q before, now the model shows %q", ns, s, prev, m)
	}
	sp.fwd[m], sp.back[s] = s, m
	return "", ""
}

// toStoreNum translates a model number of ns into the store's. Special and
// unknown numbers pass unchanged (the generator passes only numbers the
// model issued, and special ones).
func (r *renamer) toStoreNum(ns string, m int64) int64 {
	if r.exact || specialNumber(m) {
		return m
	}
	if sp, ok := r.nums[ns]; ok {
		if s, ok := sp.fwd[m]; ok {
			return s
		}
	}
	return m
}

// toStoreStr translates a model text of ns into the store's; unknown text
// (bogus values the generator made up) passes unchanged.
func (r *renamer) toStoreStr(ns string, rename bool, m string) string {
	if (r.exact && !rename) || m == "" {
		return m
	}
	if sp, ok := r.strs[ns]; ok {
		if s, ok := sp.fwd[m]; ok {
			return s
		}
	}
	return m
}
