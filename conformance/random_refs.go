package conformance

import (
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The random tester's small key space and the symbolic references its
// operations carry. A reference is resolved when the operation runs, against
// what the model said so far (knowledge), so that a sequence keeps its
// meaning when the shrinker drops operations from it.

// The key space.
const (
	// randomClaimTTL is the owner-lease TTL of claims and renewals: far
	// longer than a sequence's clock steps, so that leases end only through
	// Fixture.ExpireOwnerLease (etcd leases do not follow the fake clock).
	randomClaimTTL = 10 * time.Minute
	// randomClockBudget bounds the clock steps of one sequence, well inside
	// randomClaimTTL.
	randomClockBudget = 4 * time.Minute
	// randomBogusVersion is a store version no store issues.
	randomBogusVersion = location.StoreVersion("999999999999")
	// randomBogusReservation is a reservation id no store issues.
	randomBogusReservation = "00000000-0000-4000-8000-000000000000"
	// randomBogusToken is a continuation token no store decodes (not
	// starting with a digit: memstore's tokens are decimal offsets).
	randomBogusToken = "not-a-token"
)

// randomOwners are the owner ids; index len-1 is an owner that never
// claims.
func randomOwners() []string { return []string{"owner-a", "owner-b", "owner-c", "ghost"} }

// randomMeshes are the mesh names.
func randomMeshes() []string { return []string{"m1", "m2"} }

// randomNodeKeys are the mesh nodes the authority side places objects on.
func randomNodeKeys() []location.MeshNodeKey {
	return []location.MeshNodeKey{
		{MeshName: "m1", RID: "node-a"}, {MeshName: "m1", RID: "node-b"},
		{MeshName: "m2", RID: "node-a"}, {MeshName: "m2", RID: "Node-c"},
	}
}

// randomChannels are the client-server and fanout channel names.
func randomChannels() []string { return []string{"c1", "c2"} }

// randomTransferIDs are the transfer ids.
func randomTransferIDs() []string {
	return []string{"01234567-89ab-cdef-0123-456789abcdef", "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"}
}

// randomObject is one object the authority side creates: its kind, global
// id and stable type.
type randomObject struct {
	kind       location.ObjectKind
	id         string
	stableType string
}

// key is the object's authority key.
func (o randomObject) key() location.AuthorityKey {
	k, err := location.EncodeAuthorityKey(o.kind, o.id)
	if err != nil {
		return location.AuthorityKey("invalid:" + o.id)
	}
	return k
}

// creationKey is the object's creation key.
func (o randomObject) creationKey() location.ObjectCreationKey {
	return location.ObjectCreationKey{Kind: o.kind, GlobalID: o.id}
}

// String names the object.
func (o randomObject) String() string { return fmt.Sprintf("%s %s (%s)", o.kind, o.id, o.stableType) }

// randomObjects are the objects; g1 is also an entry spot id of some mesh
// nodes (an entry claim blocks its reservation).
func randomObjects() []randomObject {
	return []randomObject{
		{location.ObjectUserSpot, "g1", "room"},
		{location.ObjectUserSpot, "g2", "hall"},
		{location.ObjectInstanceSpot, "g3", "shard"},
		{location.ObjectActor, "p1", "player"},
		{location.ObjectActor, "p2", "player"},
	}
}

// Picks of a symbolic reference.
const (
	pickLatest   = iota // the latest value seen
	pickOlder           // the value before the latest
	pickZero            // 0 (or empty)
	pickHuge            // a value no store issued
	pickNegative        // -1
)

// pickText renders a pick: texts are in pick order (latest, older, zero,
// huge, negative); a pick past the last text renders as the last.
func pickText(pick int, texts ...string) string { return texts[min(pick, len(texts)-1)] }

// leaseRef is a symbolic owner-lease generation: the latest or an older
// generation of an owner's claims, or a special value.
type leaseRef struct {
	owner int
	pick  int
}

// String renders the reference.
func (l leaseRef) String() string {
	name := randomOwners()[l.owner]
	return pickText(l.pick, "gen("+name+")", "prev("+name+")", "0", "huge", "-1")
}

// resolve returns the model's generation; a generation that was never
// issued resolves to a huge value.
func (l leaseRef) resolve(k *knowledge) int64 {
	gens := k.leases[randomOwners()[l.owner]]
	switch l.pick {
	case pickLatest:
		if len(gens) > 0 {
			return gens[len(gens)-1]
		}
		return NeverIssued + 1
	case pickOlder:
		if len(gens) > 1 {
			return gens[len(gens)-2]
		}
		return NeverIssued + 2
	case pickZero:
		return 0
	case pickHuge:
		return NeverIssued + 3
	default:
		return -1
	}
}

// tokenRef is a symbolic owner token: an owner id and a lease reference.
type tokenRef struct {
	owner int
	gen   leaseRef
}

// String renders the token: tok(x) for x's latest token.
func (t tokenRef) String() string {
	if t.gen.owner == t.owner && t.gen.pick == pickLatest {
		return "tok(" + randomOwners()[t.owner] + ")"
	}
	return fmt.Sprintf("{%s %s}", randomOwners()[t.owner], t.gen)
}

// resolve returns the model's token.
func (t tokenRef) resolve(k *knowledge) location.OwnerToken {
	return location.OwnerToken{OwnerID: randomOwners()[t.owner], LeaseGeneration: t.gen.resolve(k)}
}

// rowGenRef is a symbolic row generation of one row key.
type rowGenRef struct{ pick int }

// String renders the reference.
func (r rowGenRef) String() string {
	return pickText(r.pick, "rowgen", "first-rowgen", "0", "huge")
}

// resolve returns the model's generation for namespace ns.
func (r rowGenRef) resolve(k *knowledge, ns string) int64 {
	gens := k.rowGens[ns]
	switch r.pick {
	case pickLatest:
		if len(gens) > 0 {
			return gens[len(gens)-1]
		}
		return NeverIssued + 4
	case pickOlder:
		if len(gens) > 0 {
			return gens[0]
		}
		return NeverIssued + 5
	case pickZero:
		return 0
	default:
		return NeverIssued + 6
	}
}

// versionRef is a symbolic store version of one authority key.
type versionRef struct{ pick int }

// String renders the reference.
func (v versionRef) String() string {
	return pickText(v.pick, "ver", "prev-ver", `""`, "bogus-ver")
}

// resolve returns the model's version of key.
func (v versionRef) resolve(k *knowledge, key location.AuthorityKey) location.StoreVersion {
	f := k.facts(key)
	switch v.pick {
	case pickLatest:
		if f.snap != nil {
			return f.snap.StoreVersion
		}
		if len(f.versions) > 0 {
			return f.versions[len(f.versions)-1]
		}
		return randomBogusVersion
	case pickOlder:
		if len(f.versions) > 1 {
			return f.versions[len(f.versions)-2]
		}
		return randomBogusVersion
	case pickZero:
		return ""
	default:
		return randomBogusVersion
	}
}

// reservationRef is a symbolic creation reservation of one key.
type reservationRef struct{ pick int }

// String renders the reference.
func (r reservationRef) String() string {
	return pickText(r.pick, "rsv", "prev-rsv", "bogus-rsv")
}

// resolve returns the model's reservation of key: its id and target (the
// target of a bogus reservation is the zero target).
func (r reservationRef) resolve(k *knowledge, key location.AuthorityKey) reservationFact {
	rs := k.reservations[key]
	switch {
	case r.pick == pickLatest && len(rs) > 0:
		return rs[len(rs)-1]
	case r.pick == pickOlder && len(rs) > 1:
		return rs[len(rs)-2]
	default:
		return reservationFact{id: randomBogusReservation}
	}
}

// Perturbations of a target reference.
const (
	targetAsIs      = iota // the node's current incarnation and owner
	targetLifecycle        // lifecycle generation + 1
	targetOldLease         // the owner's previous lease
	targetOtherOwn         // another owner's latest token
)

// targetRef is a symbolic creation target: a mesh node as the model last
// stored it, maybe perturbed.
type targetRef struct {
	node int
	// live picks the node-th node the model holds, falling back to the
	// fixed node when it holds none.
	live    bool
	perturb int
}

// String renders the reference.
func (t targetRef) String() string {
	k := randomNodeKeys()[t.node]
	s := fmt.Sprintf("node(%s/%s)", k.MeshName, k.RID)
	if t.live {
		s = fmt.Sprintf("live-node#%d|%s/%s", t.node, k.MeshName, k.RID)
	}
	switch t.perturb {
	case targetLifecycle:
		s += "+lifecycle"
	case targetOldLease:
		s += "+old-lease"
	case targetOtherOwn:
		s += "+other-owner"
	}
	return s
}

// resolve returns the model's target.
func (t targetRef) resolve(k *knowledge) location.CreationTarget {
	key := randomNodeKeys()[t.node]
	if t.live {
		var live []location.MeshNodeKey
		for _, n := range randomNodeKeys() {
			if k.nodeLive[n] {
				live = append(live, n)
			}
		}
		if len(live) > 0 {
			key = live[t.node%len(live)]
		}
	}
	owners := randomOwners()
	target := location.CreationTarget{MeshName: key.MeshName, NodeRID: key.RID, NodeLifecycleGeneration: 1}
	if d, ok := k.nodes[key]; ok {
		target.NodeLifecycleGeneration = d.LifecycleGeneration
		target.Owner = d.Owner()
	} else {
		target.Owner = tokenRef{owner: t.node % 2, gen: leaseRef{owner: t.node % 2}}.resolve(k)
	}
	switch t.perturb {
	case targetLifecycle:
		target.NodeLifecycleGeneration++
	case targetOldLease:
		for i, o := range owners {
			if o == target.Owner.OwnerID {
				target.Owner.LeaseGeneration = leaseRef{owner: i, pick: pickOlder}.resolve(k)
			}
		}
	case targetOtherOwn:
		other := 2
		if target.Owner.OwnerID == owners[2] {
			other = 0
		}
		target.Owner = tokenRef{owner: other, gen: leaseRef{owner: other}}.resolve(k)
	}
	return target
}
