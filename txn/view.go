package txn

import clientv3 "go.etcd.io/etcd/client/v3"

// GuardKind says what a commit re-asserts about an observed key.
type GuardKind int

// Guard kinds.
const (
	// GuardMod re-asserts the key's ModRevision (its absence when it was
	// absent): nothing changed the key since it was observed.
	GuardMod GuardKind = iota + 1
	// GuardCreate re-asserts only the key's CreateRevision (its absence when
	// it was absent): the same incarnation of the key still exists. Owner
	// keys are guarded this way, so that lease renewals (which rewrite the
	// owner key) do not fail the writes of their owner.
	GuardCreate
)

// View is what one decision sees: observations of keys, read at one
// revision or taken from the engine's cache. A decision reads only through
// its View; the View records which keys were consulted (each becomes a guard
// of the commit) and which were asked for but not held (misses, which the
// engine fetches before running the decision again).
type View struct {
	obs map[string]Observation
	// remembered are the keys seen absent whose absence this operation did
	// not read itself: taken from the engine's cache, or assumed
	// (Prefetch.Absent). (A present key's provenance does not matter.)
	remembered map[string]bool
	// consistent reports that every observation comes from one read at
	// revision rev, so that a decision that writes nothing may answer
	// without a verifying transaction.
	consistent bool
	rev        int64

	guards  map[string]GuardKind
	order   []string // guarded keys in first-use order
	misses  []string
	missSet map[string]bool
	nonce   string
	// issued are the absent keys this run issued a generation from
	// (Revision), each with the revision its absence was read at: the
	// commit asserts that their delete fences have not moved since.
	issued map[string]int64

	// then, puts, cmps and gets are room for the Then operations, put
	// keys, compares and Else operations of the transaction built from the
	// view (Engine.build),
	// kept for the operations that reuse the View: nothing refers to them
	// once the transaction is sent and settled.
	then []clientv3.Op
	puts []string
	cmps []clientv3.Cmp
	gets []clientv3.Op
}

// newView returns an empty view.
func newView() *View {
	return &View{obs: map[string]Observation{}}
}

// reset empties v for another operation, keeping its maps' room.
func (v *View) reset() {
	clear(v.obs)
	clear(v.remembered)
	v.consistent, v.rev = false, 0
	v.begin("")
	clear(v.then)
	clear(v.puts)
	clear(v.cmps)
	clear(v.gets)
	v.then, v.puts, v.cmps, v.gets = v.then[:0], v.puts[:0], v.cmps[:0], v.gets[:0]
}

// begin resets the per-run records for a new run of the decision.
func (v *View) begin(nonce string) {
	// The records are cleared, not made anew: most operations run once,
	// and most runs miss nothing and issue nothing (those maps are made on
	// first use).
	if v.guards == nil {
		v.guards = make(map[string]GuardKind, len(v.obs))
	} else {
		clear(v.guards)
	}
	v.order = v.order[:0]
	v.misses = v.misses[:0]
	clear(v.missSet)
	v.nonce = nonce
	clear(v.issued)
}

// add records an observation this operation read.
func (v *View) add(o Observation) {
	v.obs[o.Key] = o
	delete(v.remembered, o.Key)
	if o.Revision > v.rev {
		v.rev = o.Revision
	}
}

// remember records an observation this operation did not read itself (from
// the cache, or an assumed absence).
func (v *View) remember(o Observation) {
	v.add(o)
	if o.Present {
		return
	}
	if v.remembered == nil {
		v.remembered = map[string]bool{}
	}
	v.remembered[o.Key] = true
}

func (v *View) guard(key string, kind GuardKind) {
	prev, ok := v.guards[key]
	if !ok {
		v.order = append(v.order, key)
	}
	if !ok || kind == GuardMod && prev != GuardMod {
		v.guards[key] = kind
	}
}

func (v *View) miss(key string) {
	if !v.missSet[key] {
		if v.missSet == nil {
			v.missSet = map[string]bool{}
		}
		v.missSet[key] = true
		v.misses = append(v.misses, key)
	}
}

// Get returns the observation of key and whether the key exists. A key the
// view does not hold is recorded as a miss and reads as absent; the engine
// fetches it and runs the decision again.
func (v *View) Get(key string) (Observation, bool) {
	o, ok := v.obs[key]
	if !ok {
		v.miss(key)
		return Observation{Key: key}, false
	}
	v.guard(key, GuardMod)
	return o, o.Present
}

// Owner returns the CreateRevision of an owner key (0 when absent) and
// whether it exists; the commit re-asserts only the CreateRevision
// (GuardCreate).
func (v *View) Owner(key string) (createRevision int64, present bool) {
	o, ok := v.obs[key]
	if !ok {
		v.miss(key)
		return 0, false
	}
	v.guard(key, GuardCreate)
	return o.CreateRevision, o.Present
}

// Revision returns the revision at which key was observed: a generation
// issued for the key as Revision(key)+1 is greater than every generation
// any earlier write of the key carried (decision E-3), because the commit
// proves the key unchanged since (the key is guarded as by Get).
//
// For an absent key, unchanged is not enough: the key may have been
// created (with the same generation) and deleted again between the read and
// the commit, which the absence guard (CreateRevision = 0) cannot see. So
// the commit also asserts that the key's delete fence (Options.DeleteFence)
// has not moved since the absence was read. A key the view does not hold is
// a miss (and answers 0), and so is a key whose absence the view only
// remembers (cached or assumed): a generation is only issued from an
// absence this operation read itself, at a known revision.
func (v *View) Revision(key string) int64 {
	o, ok := v.obs[key]
	if !ok || !o.Present && v.remembered[key] {
		v.miss(key)
		return 0
	}
	v.guard(key, GuardMod)
	if !o.Present {
		if v.issued == nil {
			v.issued = map[string]int64{}
		}
		v.issued[key] = o.Revision
	}
	return o.Revision
}

// ReadRevision returns the highest revision of the view's observations.
func (v *View) ReadRevision() int64 { return v.rev }

// Nonce returns this run's write nonce: every value the run's Commit writes
// must contain it.
func (v *View) Nonce() string { return v.nonce }

// Consistent reports whether every observation comes from one read.
func (v *View) Consistent() bool { return v.consistent }
