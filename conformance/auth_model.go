package conformance

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// AUTH-223..225: seeded random runs of every authority operation on a
// handful of keys. After each step the runner checks the invariant its
// scenario names: the row state machine (INV-5, INV-6), the ledger identity
// (INV-7, against the relocation reservations and prepared aggregates the
// runner knows to be open), or the per-key version history (INV-1, INV-2).

// authRandomSeeds are the seeds every random scenario runs.
func authRandomSeeds() []uint64 { return []uint64{1, 2, 3, 4} }

// authRandomSteps is the length of one random run.
const authRandomSteps = 150

// authCheck selects the invariant a random run checks.
type authCheck int

// Random-run checks.
const (
	authCheckRows authCheck = iota + 1
	authCheckLedgers
	authCheckVersions
)

// authModelReservation is a creation reservation the runner made.
type authModelReservation struct {
	kind   location.ObjectKind
	id     string
	R      location.ReserveResult
	target location.CreationTarget
}

// authModelRel is a relocation reservation the runner made, with the state
// the store's answers put it in.
type authModelRel struct {
	req   location.RelocationReservationRequest
	state string // reserved, committed, aborted
}

// authModelAgg is an aggregate the runner prepared.
type authModelAgg struct {
	req   location.AggregatePrepareRequest
	state string // prepared, committed, aborted
}

// authModel is one random run's state.
type authModel struct {
	e      *authEnv
	na, nb *authNode
	rng    *rand.Rand
	check  authCheck
	step   int
	keys   []location.AuthorityKey
	ids    map[location.AuthorityKey]authModelReservation // last reservation per key
	rels   []*authModelRel
	aggs   []*authModelAgg
	rows   map[location.AuthorityKey]location.AuthoritySnapshot // after the last step
	seen   map[location.AuthorityKey]map[location.StoreVersion]bool
	// issued are the versions this step's CAS calls returned.
	issued map[location.AuthorityKey]map[location.StoreVersion]bool
	nextID int
}

// authRandomRun runs one seeded random run on fresh nodes of e's store (keys
// and nodes carry the seed, so several runs share one fixture) and checks
// what check selects.
func authRandomRun(e *authEnv, seed uint64, check authCheck) {
	e.c.Helper()
	m := &authModel{
		e:      e,
		na:     e.publishNode(fmt.Sprintf("rnd-a-%d", seed), e.A, fixture.DefaultLimits(), ""),
		nb:     e.publishNode(fmt.Sprintf("rnd-b-%d", seed), e.B, fixture.DefaultLimits(), ""),
		rng:    rand.New(rand.NewPCG(seed, 0x5eed)),
		check:  check,
		ids:    map[location.AuthorityKey]authModelReservation{},
		rows:   map[location.AuthorityKey]location.AuthoritySnapshot{},
		seen:   map[location.AuthorityKey]map[location.StoreVersion]bool{},
		issued: map[location.AuthorityKey]map[location.StoreVersion]bool{},
	}
	for i := 0; i < 4; i++ {
		m.keys = append(m.keys, fixture.KS(fmt.Sprintf("s%d-q%d", seed, i)))
	}
	for i := 0; i < 2; i++ {
		m.keys = append(m.keys, fixture.KA(fmt.Sprintf("s%d-z%d", seed, i)))
	}
	m.observe()
	for m.step = 1; m.step <= authRandomSteps; m.step++ {
		m.randomOp()
		m.observe()
	}
}

// where names the run's position for failure messages.
func (m *authModel) where() string { return fmt.Sprintf("step %d", m.step) }

// node returns NA or NB at random.
func (m *authModel) node() *authNode {
	if m.rng.IntN(2) == 0 {
		return m.na
	}
	return m.nb
}

// other returns the node that is not n.
func (m *authModel) other(n *authNode) *authNode {
	if n == m.na {
		return m.nb
	}
	return m.na
}

// nodeOf returns the fixture node a row is allocated to.
func (m *authModel) nodeOf(s location.AuthoritySnapshot) *authNode {
	if s.Allocation.Descriptor == m.na.Key() {
		return m.na
	}
	return m.nb
}

// version returns the row's current version, or (with some chance, or when
// the row is missing) some other version seen for the key.
func (m *authModel) version(k location.AuthorityKey) location.StoreVersion {
	row, ok := m.rows[k]
	if ok && m.rng.IntN(5) != 0 {
		return row.StoreVersion
	}
	var old []string
	for v := range m.seen[k] {
		old = append(old, string(v))
	}
	if len(old) == 0 {
		return "1"
	}
	sort.Strings(old)
	return location.StoreVersion(old[m.rng.IntN(len(old))])
}

// activeSpots lists the active user_spot/room rows.
func (m *authModel) activeSpots() []location.AuthorityKey {
	var out []location.AuthorityKey
	for _, k := range m.keys[:4] {
		if row, ok := m.rows[k]; ok && row.Allocation.State == location.AllocationActive {
			out = append(out, k)
		}
	}
	return out
}

// authPick returns a random element, or false for an empty list.
func authPick[T any](m *authModel, xs []T) (T, bool) {
	var zero T
	if len(xs) == 0 {
		return zero, false
	}
	return xs[m.rng.IntN(len(xs))], true
}

// fresh returns a new unique name.
func (m *authModel) fresh(prefix string) string {
	m.nextID++
	return fmt.Sprintf("%s%d", prefix, m.nextID)
}

// randomOp performs one random operation and records what its answer means
// for the relocation reservations and aggregates.
func (m *authModel) randomOp() {
	e, c := m.e, m.e.c
	c.Helper()
	switch m.rng.IntN(14) {
	case 0, 1: // reserve a spot or an actor
		k, _ := authPick(m, m.keys)
		kind, id, err := location.DecodeAuthorityKey(k)
		require.NoError(c, err)
		n := m.node()
		var req location.ReserveRequest
		if kind == location.ObjectActor {
			req = fixture.ActorRequest(id, n.Target())
		} else {
			req = fixture.SpotRequest(location.ObjectUserSpot, id, n.Target(), "room")
		}
		res := e.reserve(req)
		if res.Kind == location.KindReserved {
			m.ids[k] = authModelReservation{kind: kind, id: id, R: res, target: n.Target()}
		}
	case 2: // commit a spot reservation
		r, ok := m.reservation(location.ObjectUserSpot)
		if !ok {
			return
		}
		req := fixture.CommitRequest(r.id, r.R, r.target)
		if m.rng.IntN(4) == 0 {
			req.ExpectedStoreVersion = m.version(fixture.KS(r.id))
		}
		e.commit(req)
	case 3: // complete an actor reservation
		r, ok := m.reservation(location.ObjectActor)
		if !ok {
			return
		}
		state := []location.TerminalState{location.TerminalCreated, location.TerminalCreated, location.TerminalRejected, location.TerminalFailed}[m.rng.IntN(4)]
		op := location.OperationIdentity{SourceNodeRID: "rnd", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: uint64(m.step)}}
		e.complete(fixture.CompleteRequest(r.id, r.R, r.target, state, fixture.P(op, authDeadline())))
	case 4: // abort a reservation
		var all []authModelReservation
		for _, k := range m.keys {
			if r, ok := m.ids[k]; ok {
				all = append(all, r)
			}
		}
		r, ok := authPick(m, all)
		if !ok {
			return
		}
		e.abort(fixture.AbortRequest(r.kind, r.id, r.R, r.target))
	case 5, 6: // preserve
		k, _ := authPick(m, m.keys)
		m.cas(k, fixture.Preserve(m.fresh("p")))
	case 7: // restore for the row's owner
		k, _ := authPick(m, m.keys)
		owner := e.A
		if row, ok := m.rows[k]; ok {
			owner = row.Owner
		}
		m.cas(k, fixture.Restore(m.fresh("r"), owner))
	case 8: // delete
		k, _ := authPick(m, m.keys)
		m.cas(k, fixture.Delete())
	case 9: // reserve relocation capacity
		k, ok := authPick(m, m.activeSpots())
		if !ok {
			return
		}
		row := m.rows[k]
		from := m.nodeOf(row)
		req := fixture.RelRequest(m.fresh("rel"), k, &row, from.Desc, m.other(from).Desc, fixture.VS("room"))
		if res := e.reserveRel(req); res.Kind == location.KindReserved {
			m.rels = append(m.rels, &authModelRel{req: req, state: "reserved"})
		}
	case 10: // newOwner with a relocation reservation
		rel, ok := authPick(m, m.rels)
		if !ok {
			return
		}
		v := rel.req.ExpectedStoreVersion
		if m.rng.IntN(3) == 0 {
			v = m.version(rel.req.AuthorityKey)
		}
		if r := m.casAt(rel.req.AuthorityKey, v, fixture.NewOwner(m.fresh("n"), rel.req.TargetOwner, rel.req.ReservationID)); r.Kind == location.KindStored {
			require.Equal(c, "reserved", rel.state, "%s: newOwner consumed a %s reservation", m.where(), rel.state)
			rel.state = "committed"
		}
	case 11: // abort a relocation reservation
		rel, ok := authPick(m, m.rels)
		if !ok {
			return
		}
		if k := e.abortRel(rel.req.ReservationID); k == location.KindAborted {
			require.Equal(c, "reserved", rel.state, "%s: abortRelocationCapacity aborted a %s reservation", m.where(), rel.state)
			rel.state = "aborted"
		}
	case 12: // prepare an aggregate moving one or two spots to NB
		spots := m.activeSpots()
		if len(spots) == 0 {
			return
		}
		m.rng.Shuffle(len(spots), func(i, j int) { spots[i], spots[j] = spots[j], spots[i] })
		n := 1 + m.rng.IntN(min(2, len(spots)))
		var parts []fixture.Part
		for _, k := range spots[:n] {
			row := m.rows[k]
			parts = append(parts, fixture.NewOwnerPart(k, &row))
		}
		req := fixture.AGG(m.nb.Desc, m.fresh("agg"), 1, parts, fixture.VSpots(location.ObjectUserSpot, "room", int64(n)))
		if res := e.prepare(req); res.Kind == location.KindPrepared {
			m.aggs = append(m.aggs, &authModelAgg{req: req, state: "prepared"})
		}
	default: // commit or abort an aggregate
		agg, ok := authPick(m, m.aggs)
		if !ok {
			return
		}
		f := authAggFence(agg.req.AggregateID, agg.req.AggregateGeneration)
		if m.rng.IntN(2) == 0 {
			if e.commitAgg(f) == location.KindCommitted {
				require.Equal(c, "prepared", agg.state, "%s: committed a %s aggregate", m.where(), agg.state)
				agg.state = "committed"
			}
		} else if e.abortAgg(f) == location.KindAborted {
			require.Equal(c, "prepared", agg.state, "%s: aborted a %s aggregate", m.where(), agg.state)
			agg.state = "aborted"
		}
	}
}

// reservation picks a recorded reservation of the kind.
func (m *authModel) reservation(kind location.ObjectKind) (authModelReservation, bool) {
	var all []authModelReservation
	for _, k := range m.keys {
		if r, ok := m.ids[k]; ok && (r.kind == location.ObjectActor) == (kind == location.ObjectActor) {
			all = append(all, r)
		}
	}
	return authPick(m, all)
}

// cas runs a CAS with a current or stale version.
func (m *authModel) cas(k location.AuthorityKey, mut location.AuthorityMutation) location.CompareExchangeResult {
	return m.casAt(k, m.version(k), mut)
}

// casAt runs a CAS and checks the version rules of AUTH-225: a successful
// CAS presented the version last returned for the key, and its new version
// (stored or deleted) was never seen for the key.
func (m *authModel) casAt(k location.AuthorityKey, v location.StoreVersion, mut location.AuthorityMutation) location.CompareExchangeResult {
	c := m.e.c
	c.Helper()
	r := m.e.cas(k, v, mut)
	var issued location.StoreVersion
	switch r.Kind {
	case location.KindStored:
		issued = r.Stored.StoreVersion
	case location.KindDeleted:
		issued = r.DeletedVersion
	default:
		return r
	}
	if m.check == authCheckVersions {
		row, ok := m.rows[k]
		require.True(c, ok, "%s: CAS on a missing row succeeded", m.where())
		require.Equal(c, row.StoreVersion, v, "%s: a successful CAS presented a version that was not the last one (INV-2)", m.where())
		require.False(c, m.seen[k][issued], "%s: version %q issued twice for %s (INV-1)", m.where(), issued, k)
	}
	authAddVersion(m.issued, k, issued)
	return r
}

// authAddVersion adds v to k's set in sets.
func authAddVersion(sets map[location.AuthorityKey]map[location.StoreVersion]bool, k location.AuthorityKey, v location.StoreVersion) {
	if sets[k] == nil {
		sets[k] = map[location.StoreVersion]bool{}
	}
	sets[k][v] = true
}

// observe scans every row and checks the selected invariant against the
// previous observation.
func (m *authModel) observe() {
	c := m.e.c
	c.Helper()
	mine := map[location.AuthorityKey]bool{}
	for _, k := range m.keys {
		mine[k] = true
	}
	now := map[location.AuthorityKey]location.AuthoritySnapshot{}
	for _, it := range m.e.scanAll("") {
		if mine[it.Key] {
			now[it.Key] = it.Snapshot
		}
	}
	// Every version of a key, as observed or returned by a CAS; a row whose
	// version changed shows a version never seen for its key before this
	// step (a CAS of this step may have returned it).
	for k, after := range now {
		if before, was := m.rows[k]; was && before.StoreVersion == after.StoreVersion {
			continue
		}
		if m.check == authCheckVersions && !m.issued[k][after.StoreVersion] {
			require.False(c, m.seen[k][after.StoreVersion], "%s: %s shows version %q again (INV-1)", m.where(), k, after.StoreVersion)
		}
		authAddVersion(m.seen, k, after.StoreVersion)
	}
	for k, vs := range m.issued {
		for v := range vs {
			authAddVersion(m.seen, k, v)
		}
	}
	m.issued = map[location.AuthorityKey]map[location.StoreVersion]bool{}
	switch m.check {
	case authCheckRows:
		for _, k := range m.keys {
			before, was := m.rows[k]
			after, is := now[k]
			if is {
				reserved := after.Allocation.State == location.AllocationReserved
				require.Equal(c, reserved, after.PendingCreation != nil, "%s: %s pendingCreation iff reserved (INV-6)", m.where(), k)
			}
			if was && is && before.Allocation.State == location.AllocationActive {
				require.Equal(c, location.AllocationActive, after.Allocation.State, "%s: %s went active → reserved (INV-5)", m.where(), k)
			}
			if !was && is {
				require.Equal(c, location.AllocationReserved, after.Allocation.State, "%s: %s appeared already active (INV-5)", m.where(), k)
			}
		}
	case authCheckLedgers:
		for _, n := range []*authNode{m.na, m.nb} {
			require.Equal(c, m.expectedUsage(n, now), m.e.U(n), "%s: U(%s) is not the ledger identity (INV-7)", m.where(), n.Desc.RID)
		}
	}
	m.rows = now
}

// expectedUsage recomputes INV-7 for node n: active and reserved rows
// allocated there, plus the open relocation reservations and prepared
// aggregates targeting it.
func (m *authModel) expectedUsage(n *authNode, rows map[location.AuthorityKey]location.AuthoritySnapshot) authUsage {
	var u authUsage
	add := func(cv location.CapacityVector, active bool) {
		pick := func(s *authSlot, v int64) {
			if active {
				s.Active += v
			} else {
				s.Reserved += v
			}
		}
		pick(&u.Actors, cv.Actors)
		pick(&u.Spots, cv.Spots)
		if st := cv.SpotType; st != nil {
			switch {
			case st.ObjectKind == location.ObjectUserSpot && st.StableType == "room":
				pick(&u.Room, st.Count)
			case st.ObjectKind == location.ObjectUserSpot && st.StableType == "hall":
				pick(&u.Hall, st.Count)
			case st.ObjectKind == location.ObjectInstanceSpot && st.StableType == "shard":
				pick(&u.Shard, st.Count)
			}
		}
	}
	for _, row := range rows {
		if row.Allocation.Descriptor == n.Key() && row.Allocation.DescriptorLifecycleGeneration == n.Desc.LifecycleGeneration {
			add(row.Allocation.Capacity, row.Allocation.State == location.AllocationActive)
		}
	}
	for _, rel := range m.rels {
		if rel.state == "reserved" && rel.req.TargetDescriptor == n.Key() {
			add(rel.req.Capacity, false)
		}
	}
	for _, agg := range m.aggs {
		if agg.state == "prepared" && agg.req.TargetDescriptor == n.Key() {
			add(agg.req.Capacity, false)
		}
	}
	return u
}

// auth223 AUTH-223 Row state machine.
func auth223(c *Case) {
	e := newAuthEnv(c)
	for _, seed := range authRandomSeeds() {
		authRandomRun(e, seed, authCheckRows)
	}
}

// auth224 AUTH-224 Ledger identity.
func auth224(c *Case) {
	e := newAuthEnv(c)
	for _, seed := range authRandomSeeds() {
		authRandomRun(e, seed, authCheckLedgers)
	}
}

// auth225 AUTH-225 Per-key version history.
func auth225(c *Case) {
	e := newAuthEnv(c)
	for _, seed := range authRandomSeeds() {
		authRandomRun(e, seed, authCheckVersions)
	}
}
