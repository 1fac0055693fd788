package conformance

import (
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Random operations on authority records: read, compare-exchange, list.

// randomRelocationIDs are the relocation reservation ids; the first is also
// an aggregate id, so that an aggregate can adopt it.
func randomRelocationIDs() []string { return []string{"rel-1", "rel-2"} }

// authKeySpec is an authority key: an object's, or an invalid text.
type authKeySpec struct {
	obj objRef
	// invalid 1..3 selects an invalid key text instead.
	invalid int
}

// String renders the key.
func (a authKeySpec) String() string {
	if a.invalid > 0 {
		return fmt.Sprintf("%q", a.key(nil))
	}
	return a.obj.String()
}

// key returns the key text.
func (a authKeySpec) key(k *knowledge) location.AuthorityKey {
	switch a.invalid {
	case 1:
		return "zla1:bad"
	case 2:
		return ""
	case 3:
		return "zla1:s:3:g1"
	default:
		return randomObjects()[a.obj.resolve(k)].key()
	}
}

// objRef draws an object reference: often one the model showed active.
func (g *generator) objRef(pActive float64) objRef {
	o := objRef{index: g.n(len(randomObjects()))}
	if g.chance(pActive) {
		o.mode = objActive
	}
	return o
}

// objRefOf draws an object of one kind (objActors or objSpots), often one
// the model showed in state mode.
func (g *generator) objRefOf(only, mode int, p float64) objRef {
	var fits []int
	for i, obj := range randomObjects() {
		if (obj.kind == location.ObjectActor) == (only == objActors) {
			fits = append(fits, i)
		}
	}
	o := objRef{index: fits[g.n(len(fits))], only: only}
	if !g.validOnly && g.chance(0.04) {
		o.index = g.n(len(randomObjects()))
	}
	if g.chance(p) {
		o.mode = mode
	}
	return o
}

// authKeySpec draws a key, rarely an invalid one.
func (g *generator) authKeySpec(pActive float64) authKeySpec {
	if g.bad() {
		return authKeySpec{invalid: 1 + g.n(3)}
	}
	return authKeySpec{obj: g.objRef(pActive)}
}

func genReadAuthority(g *generator) randomOp { return readAuthorityOp(g.authKeySpec(0.3)) }

// readAuthorityOp is ReadAuthority(key).
func readAuthorityOp(k authKeySpec) randomOp {
	return randomOp{name: "ReadAuthority", args: func() string { return k.String() }, run: func(x *runState) {
		key := k.key(x.know)
		x.inputs(key)
		m, s, ok := both(x, func(sd side) (location.AuthorityReadResult, error) { return sd.store.ReadAuthority(x.ctx, key) })
		if !ok {
			return
		}
		x.readResult("", key, &m, &s)
		if x.ok() {
			x.know.learnRead(key, &m)
		}
	}}
}

// Mutation choices of a compare-exchange.
const (
	mutDelete = iota
	mutPreserve
	mutNewOwner
	mutRebind
	mutRestore
)

// mutationSpec is a symbolic compare-exchange mutation.
type mutationSpec struct {
	kind    int
	payload int
	reloc   int
	// wrongTarget and wrongExpected perturb the owner tokens.
	wrongTarget, wrongExpected bool
	// corrupt: 1 preserve with a target owner, 2 newOwner without a fence,
	// 3 an unknown kind, 4 a payload over 1 MiB.
	corrupt int
}

// String renders the mutation.
func (m mutationSpec) String() string {
	out := []string{"delete", "put/preserve", "put/newOwner", "rebindOwnerLease", "restore"}[m.kind]
	if m.kind == mutNewOwner {
		out += " fence=" + randomRelocationIDs()[m.reloc]
	}
	if m.kind != mutDelete {
		out += fmt.Sprintf(" payload#%d", m.payload)
	}
	if m.wrongTarget {
		out += " wrong-target"
	}
	if m.wrongExpected {
		out += " wrong-expected"
	}
	return out + invalidMark(m.corrupt)
}

// latestToken returns owner id's latest token in the model (a never-issued
// generation when it never claimed).
func (k *knowledge) latestToken(ownerID string) location.OwnerToken {
	gens := k.leases[ownerID]
	if len(gens) == 0 {
		return location.OwnerToken{OwnerID: ownerID, LeaseGeneration: NeverIssued + 8}
	}
	return location.OwnerToken{OwnerID: ownerID, LeaseGeneration: gens[len(gens)-1]}
}

// previousToken returns owner id's token before the latest (never issued
// when there is none).
func (k *knowledge) previousToken(ownerID string) location.OwnerToken {
	gens := k.leases[ownerID]
	if len(gens) < 2 {
		return location.OwnerToken{OwnerID: ownerID, LeaseGeneration: NeverIssued + 9}
	}
	return location.OwnerToken{OwnerID: ownerID, LeaseGeneration: gens[len(gens)-2]}
}

// otherOwner returns an owner id other than id.
func otherOwner(id string) string {
	if id == "owner-b" {
		return "owner-a"
	}
	return "owner-b"
}

// randomPayload returns payload 0 or 1, or big() for any other choice.
func randomPayload(choice int, big func() []byte) []byte {
	switch choice {
	case 0:
		return []byte("payload-0")
	case 1:
		return []byte("payload-1")
	default:
		return big()
	}
}

// build returns the model-side mutation for key.
func (m mutationSpec) build(k *knowledge, key location.AuthorityKey, big func() []byte) location.AuthorityMutation {
	cur := k.facts(key).snap
	owner := location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: NeverIssued + 10}
	if cur != nil {
		owner = cur.Owner
	}
	out := location.AuthorityMutation{Payload: randomPayload(m.payload, big)}
	switch m.kind {
	case mutDelete:
		out = location.AuthorityMutation{Kind: location.MutationDelete}
	case mutPreserve:
		out.Kind, out.Transition = location.MutationPut, location.TransitionPreserve
	case mutNewOwner:
		fence := location.RelocationFence(randomRelocationIDs()[m.reloc])
		target := k.latestToken("owner-b")
		if r, ok := k.relocs[string(fence)]; ok {
			target = r.TargetOwner
		}
		if m.wrongTarget {
			target = k.latestToken(otherOwner(target.OwnerID))
		}
		out.Kind, out.Transition, out.TargetOwner, out.RelocationFence = location.MutationPut, location.TransitionNewOwner, &target, &fence
	case mutRebind:
		expected := owner
		if m.wrongExpected {
			expected = k.previousToken(owner.OwnerID)
		}
		target := k.latestToken(owner.OwnerID)
		if m.wrongTarget {
			target = k.previousToken(owner.OwnerID)
		}
		out.Kind, out.ExpectedOwner, out.TargetOwner = location.MutationRebindOwnerLease, &expected, &target
	case mutRestore:
		expected := owner
		if m.wrongExpected {
			expected = k.latestToken(otherOwner(owner.OwnerID))
		}
		out.Kind, out.ExpectedOwner = location.MutationRestore, &expected
	}
	switch m.corrupt {
	case 1:
		t := k.latestToken("owner-a")
		out.Kind, out.Transition, out.TargetOwner, out.RelocationFence = location.MutationPut, location.TransitionPreserve, &t, nil
	case 2:
		t := k.latestToken("owner-b")
		out.Kind, out.Transition, out.TargetOwner, out.RelocationFence = location.MutationPut, location.TransitionNewOwner, &t, nil
	case 3:
		out.Kind = "frobnicate"
	case 4:
		out.Payload = big()
		if out.Kind == location.MutationDelete {
			out.Kind, out.Transition = location.MutationPut, location.TransitionPreserve
		}
	}
	return out
}

// mutationSpec draws a mutation.
func (g *generator) mutationSpec() mutationSpec {
	m := mutationSpec{
		kind:          pick(g, mutDelete, mutPreserve, mutPreserve, mutNewOwner, mutNewOwner, mutRebind, mutRestore),
		payload:       g.n(2),
		reloc:         g.n(2),
		wrongTarget:   g.chance(0.1),
		wrongExpected: g.chance(0.1),
	}
	if g.bad() {
		m.corrupt = 1 + g.n(4)
	}
	return m
}

func genCompareExchange(g *generator) randomOp {
	return compareExchangeOp(g.authKeySpec(0.7), g.versionRef(), g.mutationSpec())
}

// compareExchangeOp is CompareExchangeAuthority(key, expected, mutation).
func compareExchangeOp(k authKeySpec, v versionRef, mut mutationSpec) randomOp {
	return randomOp{name: "CompareExchangeAuthority", args: func() string { return fmt.Sprintf("%s, %s, %s", k, v, mut) }, run: func(x *runState) {
		key := k.key(x.know)
		expected := v.resolve(x.know, key)
		mutation := mut.build(x.know, key, x.bigPayload)
		x.inputs(key, expected, mutation)
		m, s, ok := both(x, func(sd side) (location.CompareExchangeResult, error) {
			c := mutation
			c.TargetOwner, c.ExpectedOwner = sd.tokenPtr(c.TargetOwner), sd.tokenPtr(c.ExpectedOwner)
			return sd.store.CompareExchangeAuthority(x.ctx, key, sd.version(key, expected), c)
		})
		if !ok {
			return
		}
		x.kind(".Kind", m.Kind, s.Kind)
		x.snapshot(".Stored", key, m.Stored, s.Stored)
		x.str(NSVersion(string(key)), ".DeletedVersion", string(m.DeletedVersion), string(s.DeletedVersion))
		x.instant(".StoreNow", m.StoreNow, s.StoreNow)
		x.readResult(".Current", key, m.Current, s.Current)
		if !x.ok() {
			return
		}
		switch m.Kind {
		case location.KindStored:
			x.know.learnSnapshot(key, m.Stored)
		case location.KindDeleted:
			x.know.learnVersion(key, m.DeletedVersion)
			x.know.learnSnapshot(key, nil)
		default:
			x.know.learnRead(key, m.Current)
		}
	}}
}

// scanSpec is a symbolic ListAuthorities scan.
type scanSpec struct {
	prefix int
	limit  int
	mode   int
}

// randomScanPrefixes are the scan prefixes.
func randomScanPrefixes() []string {
	return []string{"", "zla1:", "zla1:s:", "zla1:a:", string(randomObjects()[0].key()), "zz"}
}

// String renders the scan.
func (s scanSpec) String() string {
	return fmt.Sprintf("prefix %q, limit %d, %s", randomScanPrefixes()[s.prefix], s.limit, pageModeName(s.mode))
}

func genListAuthorities(g *generator) randomOp {
	s := scanSpec{prefix: g.n(len(randomScanPrefixes())), limit: pick(g, 1, 1, 2, 3, 1000), mode: g.pageSpec().mode}
	if g.bad() {
		s.limit = pick(g, 0, 1001)
	}
	return listAuthoritiesOp(s)
}

// listAuthoritiesOp is ListAuthorities(prefix, cursor, limit), following
// the cursors at once.
func listAuthoritiesOp(sc scanSpec) randomOp {
	return randomOp{name: "ListAuthorities", args: func() string { return sc.String() }, run: func(x *runState) {
		prefix := randomScanPrefixes()[sc.prefix]
		x.inputs(prefix, sc.limit, sc.mode)
		mCur, sCur := "", ""
		if sc.mode == pageBogus {
			mCur, sCur = randomBogusToken, randomBogusToken
		}
		for page := 1; page <= 64; page++ {
			m, s, ok := both(x, func(sd side) (location.AuthorityScanResult, error) {
				cur := mCur
				if sd.isStore {
					cur = sCur
				}
				return sd.store.ListAuthorities(x.ctx, prefix, cur, sc.limit)
			})
			if !ok {
				return
			}
			path := fmt.Sprintf("page %d", page)
			x.kind(path+".Kind", m.Kind, s.Kind)
			if !x.count(path+".Items", len(m.Items), len(s.Items)) {
				return
			}
			for i := range m.Items {
				ip := fmt.Sprintf("%s.Items[%d]", path, i)
				x.same(ip+".Key", m.Items[i].Key, s.Items[i].Key)
				mi, si := m.Items[i].Snapshot, s.Items[i].Snapshot
				x.snapshot(ip+".Snapshot", m.Items[i].Key, &mi, &si)
				if x.ok() {
					x.know.learnSnapshot(m.Items[i].Key, &mi)
				}
			}
			x.token(path+".NextCursor", m.NextCursor, s.NextCursor)
			if !x.ok() || m.NextCursor == "" || sc.mode == pageFirst {
				return
			}
			mCur, sCur = m.NextCursor, s.NextCursor
		}
	}}
}
