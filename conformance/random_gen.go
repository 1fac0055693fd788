package conformance

import (
	"math/rand/v2"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The generator: a sequence is a pure function of its seed, its length
// bound and the harness's capabilities, so that a printed seed rebuilds it.

// generator draws operations and their symbolic arguments.
type generator struct {
	r    *rand.Rand
	caps Capabilities
	// clockLeft is how far the clock may still be stepped.
	clockLeft time.Duration
	// validOnly suppresses invalid inputs (the preamble).
	validOnly bool
}

// generateSequence returns the sequence of a seed: a preamble that sets up
// owners, nodes and objects (most of the time), then random operations,
// maxOps/4..maxOps in all.
func generateSequence(seed int64, maxOps int, caps Capabilities) []randomOp {
	g := &generator{
		r:         rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		caps:      caps,
		clockLeft: randomClockBudget,
	}
	n := maxOps/4 + g.n(maxOps-maxOps/4+1)
	seq := g.preamble()
	table := g.table()
	total := 0
	for _, e := range table {
		total += e.weight
	}
	for len(seq) < n {
		w := g.n(total)
		for _, e := range table {
			if w < e.weight {
				seq = append(seq, e.gen(g))
				break
			}
			w -= e.weight
		}
	}
	return seq[:n]
}

// opGen is one entry of the operation table: its area and weight.
type opGen struct {
	area   int
	weight int
	gen    func(g *generator) randomOp
}

// Areas of the operation table. Each sequence focuses on two of them (their
// weights grow), so that it goes deep into a few tables instead of touching
// every table once.
const (
	areaLeases = iota
	areaMeshNodes
	areaChannels
	areaPeers
	areaSpots
	areaActors
	areaRoutes
	areaTransfers
	areaAuthority
	areaCreation
	areaMoves
	areaCount
)

// focusBoost multiplies the weights of a sequence's focus areas.
const focusBoost = 6

// table is the operation mix.
func (g *generator) table() []opGen {
	t := []opGen{
		// Owner leases, harness actions, clean-up and stamps.
		{areaLeases, 4, genClaim}, {areaLeases, 2, genReadLease}, {areaLeases, 3, genRenew}, {areaLeases, 2, genRelease},
		{areaLeases, 2, genExpire}, {areaLeases, 4, genClockStep}, {areaLeases, 1, genRemoveAllByOwner}, {areaLeases, 3, genChangeStamp},
		// Descriptors.
		{areaMeshNodes, 4, genUpdateMeshNode}, {areaMeshNodes, 2, genRemoveMeshNode}, {areaMeshNodes, 2, genListMeshNodes},
		{areaChannels, 3, clientServerTable().genUpdate}, {areaChannels, 1, clientServerTable().genRemove}, {areaChannels, 1, clientServerTable().genList},
		{areaChannels, 3, fanoutTable().genUpdate}, {areaChannels, 1, fanoutTable().genRemove}, {areaChannels, 1, fanoutTable().genList},
		// Rows.
		{areaPeers, 3, genUpdatePeer}, {areaPeers, 1, genRemovePeer}, {areaPeers, 1, genListPeers},
		{areaSpots, 4, spotTable().genUpdate}, {areaSpots, 1, spotTable().genRemove}, {areaSpots, 1, spotTable().genResolve}, {areaSpots, 1, genListSpots},
		{areaActors, 3, actorTable().genUpdate}, {areaActors, 1, actorTable().genRemove}, {areaActors, 1, actorTable().genResolve}, {areaActors, 1, genListActors},
		{areaRoutes, 3, genUpdateRoute}, {areaRoutes, 1, genRemoveRoute}, {areaRoutes, 1, genResolveRoute}, {areaRoutes, 1, genListRoutes},
		// Actor transfers.
		{areaTransfers, 2, genPrepareTransfer}, {areaTransfers, 1, genCommitTransfer}, {areaTransfers, 1, genActivateTransfer},
		{areaTransfers, 1, genAbortTransfer}, {areaTransfers, 1, genTakeOverTransfer}, {areaTransfers, 1, genResolveTransfer},
		// Authority records.
		{areaAuthority, 3, genReadAuthority}, {areaAuthority, 4, genCompareExchange}, {areaAuthority, 2, genListAuthorities},
		{areaCreation, 5, genReserve}, {areaCreation, 3, genCommit}, {areaCreation, 3, genCompleteCreation},
		{areaCreation, 1, genReadTerminal}, {areaCreation, 2, genAbortCreation},
		{areaMoves, 3, genReserveRelocation}, {areaMoves, 1, genAbortRelocation},
		{areaMoves, 3, genPrepareAggregate}, {areaMoves, 2, genCommitAggregate}, {areaMoves, 1, genAbortAggregate},
	}
	if g.caps.MeshNodeChangeStamp {
		t = append(t, opGen{areaMeshNodes, 1, genMeshNodeChangeStamp})
	}
	focus := map[int]bool{g.n(areaCount): true, g.n(areaCount): true}
	for i := range t {
		if focus[t[i].area] {
			t[i].weight *= focusBoost
		}
	}
	return t
}

// preamble sets the scene most of the time: two or three owners claim,
// some of them publish server nodes, and a few objects are created.
func (g *generator) preamble() []randomOp {
	if !g.chance(0.85) {
		return nil
	}
	g.validOnly = true
	defer func() { g.validOnly = false }()
	owners := 2 + g.n(2)
	var seq []randomOp
	for o := 0; o < owners; o++ {
		seq = append(seq, claimOp(randomOwners()[o], randomClaimTTL))
	}
	for node := range randomNodeKeys() {
		if g.chance(0.7) {
			spec := g.meshNodeSpec()
			spec.node = node
			spec.token = tokenRef{owner: node % owners, gen: leaseRef{owner: node % owners}}
			spec.client, spec.draining, spec.corrupt = false, false, 0
			seq = append(seq, meshNodeOp(spec, location.IntentNewClaim))
		}
	}
	for i, n := 0, 1+g.n(3); i < n; i++ {
		spec := g.reserveSpec()
		seq = append(seq, reserveOp(spec))
		if g.chance(0.9) {
			obj := objRef{index: spec.object}
			if randomObjects()[spec.object].kind == location.ObjectActor {
				c := g.completeSpec()
				c.object, c.reservation, c.version, c.kind, c.deadline = obj, reservationRef{pickLatest}, versionRef{pickLatest}, location.TerminalCreated, deadlineLater
				seq = append(seq, completeOp(c))
			} else {
				c := g.commitSpec()
				c.object, c.reservation, c.version = obj, reservationRef{pickLatest}, versionRef{pickLatest}
				seq = append(seq, commitOp(c))
			}
		}
	}
	return seq
}

// n draws 0..k-1.
func (g *generator) n(k int) int { return g.r.IntN(k) }

// chance is true with probability p.
func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

// bad decides whether this input is made invalid.
func (g *generator) bad() bool { return !g.validOnly && g.chance(0.07) }

// ownerIndex draws an owner, rarely the one that never claims.
func (g *generator) ownerIndex() int {
	if g.chance(0.04) {
		return len(randomOwners()) - 1
	}
	return g.n(3)
}

// leaseRefOf draws a lease reference to owner's claims.
func (g *generator) leaseRefOf(owner int) leaseRef {
	pick := drawWeighted(g, g.validOnly, []weighted[int]{{pickLatest, 78}, {pickOlder, 10}, {pickHuge, 4}, {pickZero, 4}, {pickNegative, 4}})
	return leaseRef{owner: owner, pick: pick}
}

// tokenRef draws an owner token, mostly an owner's own latest one.
func (g *generator) tokenRef() tokenRef {
	owner := g.ownerIndex()
	genOwner := owner
	if !g.validOnly && g.chance(0.08) {
		genOwner = g.n(3)
	}
	return tokenRef{owner: owner, gen: g.leaseRefOf(genOwner)}
}

// intent draws a write intent, rarely an invalid one.
func (g *generator) intent() location.WriteIntent {
	if g.bad() {
		return []location.WriteIntent{0, 4, -1}[g.n(3)]
	}
	return drawWeighted(g, false, []weighted[location.WriteIntent]{{location.IntentNewClaim, 45}, {location.IntentRenew, 37}, {location.IntentTakeover, 18}})
}

// rowGenRef draws a row-generation reference.
func (g *generator) rowGenRef() rowGenRef {
	return rowGenRef{drawWeighted(g, false, []weighted[int]{{pickLatest, 70}, {pickOlder, 12}, {pickZero, 12}, {pickHuge, 6}})}
}

// versionRef draws a store-version reference.
func (g *generator) versionRef() versionRef {
	return versionRef{drawWeighted(g, g.validOnly, []weighted[int]{{pickLatest, 80}, {pickOlder, 10}, {pickZero, 5}, {pickHuge, 5}})}
}

// reservationRef draws a reservation reference.
func (g *generator) reservationRef() reservationRef {
	return reservationRef{drawWeighted(g, g.validOnly, []weighted[int]{{pickLatest, 82}, {pickOlder, 10}, {pickHuge, 8}})}
}

// targetRef draws a target reference, mostly unperturbed.
func (g *generator) targetRef() targetRef {
	t := targetRef{node: g.n(len(randomNodeKeys())), live: g.chance(0.8)}
	if !g.validOnly && g.chance(0.15) {
		t.perturb = 1 + g.n(3)
	}
	return t
}

// weighted is a choice and its weight in percent.
type weighted[T any] struct {
	value   T
	percent int
}

// drawWeighted draws one of choices by weight (their percents add up to
// 100). When first is set (valid-only sequences) the first choice is taken;
// the draw is made either way, so that later draws do not depend on it.
func drawWeighted[T any](g *generator, first bool, choices []weighted[T]) T {
	w := g.n(100)
	if first {
		return choices[0].value
	}
	for _, c := range choices[:len(choices)-1] {
		if w < c.percent {
			return c.value
		}
		w -= c.percent
	}
	return choices[len(choices)-1].value
}

// pick returns one of the values.
func pick[T any](g *generator, values ...T) T { return values[g.n(len(values))] }
