package conformance

import (
	"fmt"
	"slices"

	"github.com/zlink-systems/zlink-etcd/location"
)

// What the random tester learned from the model's results while a sequence
// runs, in the model's numbers. Symbolic arguments (random_refs.go) resolve
// against it: "the latest lease generation of owner-a", "the latest version
// of zla1:s:2:g1", "the target of the latest reservation".

// knowledge is the model-side facts of one sequence run.
type knowledge struct {
	// leases are the generations issued per owner id, in order.
	leases map[string][]int64
	// nodes are the last stored descriptor per mesh-node key; nodeLive says
	// whether the model holds the row now, and nodeEpoch counts its
	// incarnations (the model restarts mesh-node generations at 1 after a
	// removal, a relational store does not, so each incarnation is its own
	// namespace).
	nodes     map[location.MeshNodeKey]location.MeshNodeDescriptor
	nodeLive  map[location.MeshNodeKey]bool
	nodeEpoch map[location.MeshNodeKey]int
	// rowGens are the row generations seen per namespace, in order.
	rowGens map[string][]int64
	// auth are the authority records seen.
	auth map[location.AuthorityKey]*authFacts
	// reservations are the creation reservations issued per key, in order.
	reservations map[location.AuthorityKey][]reservationFact
	// relocs are the relocation requests the model reserved, per id.
	relocs map[string]location.RelocationReservationRequest
	// The rows last stored per table (row generations filled in), which
	// removes and resolves may name; lastTransfer is the transfer record
	// last stored.
	lastPeer     *location.PeerLocation
	lastSpot     *location.SpotLocation
	lastActor    *location.ActorLocation
	lastRoute    *location.RouteLocation
	lastCS       *location.ClientServerDescriptor
	lastFP       *location.FanoutPublisherDescriptor
	lastTransfer *location.ActorTransferRecord
	// lastAggregate is the fence of the aggregate last prepared.
	lastAggregate *location.AggregateFence
}

// authFacts is what was seen of one authority record.
type authFacts struct {
	// versions are the store versions seen, in order, without repeats.
	versions []location.StoreVersion
	// snap is the latest snapshot seen; nil when the record was last seen
	// missing or deleted.
	snap *location.AuthoritySnapshot
}

// reservationFact is one creation reservation and the target it named.
type reservationFact struct {
	id     string
	target location.CreationTarget
}

// newKnowledge returns empty knowledge.
func newKnowledge() *knowledge {
	return &knowledge{
		leases:       map[string][]int64{},
		nodes:        map[location.MeshNodeKey]location.MeshNodeDescriptor{},
		nodeLive:     map[location.MeshNodeKey]bool{},
		nodeEpoch:    map[location.MeshNodeKey]int{},
		rowGens:      map[string][]int64{},
		auth:         map[location.AuthorityKey]*authFacts{},
		reservations: map[location.AuthorityKey][]reservationFact{},
		relocs:       map[string]location.RelocationReservationRequest{},
	}
}

// learnLease records an issued owner lease.
func (k *knowledge) learnLease(t location.OwnerToken) {
	if !slices.Contains(k.leases[t.OwnerID], t.LeaseGeneration) {
		k.leases[t.OwnerID] = append(k.leases[t.OwnerID], t.LeaseGeneration)
	}
}

// learnRowGen records a row generation of namespace ns.
func (k *knowledge) learnRowGen(ns string, g int64) {
	if g > 0 && !slices.Contains(k.rowGens[ns], g) {
		k.rowGens[ns] = append(k.rowGens[ns], g)
	}
}

// meshNodeNS is the generation namespace of the mesh-node row's current
// incarnation.
func (k *knowledge) meshNodeNS(key location.MeshNodeKey) string {
	return NSRowGeneration("meshNodes", fmt.Sprintf("%s/%s incarnation %d", key.MeshName, key.RID, k.nodeEpoch[key]))
}

// meshNodeWriting is called before a mesh-node write is compared: a write
// to a key the model does not hold starts a new incarnation.
func (k *knowledge) meshNodeWriting(key location.MeshNodeKey) {
	if !k.nodeLive[key] {
		k.nodeEpoch[key]++
	}
}

// facts returns (creating) the facts of an authority key.
func (k *knowledge) facts(key location.AuthorityKey) *authFacts {
	f, ok := k.auth[key]
	if !ok {
		f = &authFacts{}
		k.auth[key] = f
	}
	return f
}

// learnVersion records a store version of key.
func (k *knowledge) learnVersion(key location.AuthorityKey, v location.StoreVersion) {
	f := k.facts(key)
	if v != "" && !slices.Contains(f.versions, v) {
		f.versions = append(f.versions, v)
	}
}

// learnSnapshot records a snapshot of key (nil: the record is gone).
func (k *knowledge) learnSnapshot(key location.AuthorityKey, s *location.AuthoritySnapshot) {
	if s == nil {
		k.facts(key).snap = nil
		return
	}
	c := *s
	k.learnVersion(key, c.StoreVersion)
	k.facts(key).snap = &c
}

// learnRead records an authority read result of key.
func (k *knowledge) learnRead(key location.AuthorityKey, r *location.AuthorityReadResult) {
	if r == nil {
		return
	}
	k.learnSnapshot(key, r.Snapshot)
}

// Modes of an object reference.
const (
	objAny      = iota // the object named by the index
	objActive          // the index-th object the model last showed active
	objReserved        // the index-th object the model last showed reserved
)

// objRef is a symbolic authority object: a fixed one, or one the model
// last showed in a given state (falling back to the fixed one).
type objRef struct {
	index int
	mode  int
	// only limits an active or reserved pick to actors (objActors) or
	// spots (objSpots); 0 allows both.
	only int
}

// Kind limits of an object reference.
const (
	objActors = 1
	objSpots  = 2
)

// String renders the reference.
func (o objRef) String() string {
	kind := []string{"", " actor", " spot"}[o.only]
	switch o.mode {
	case objActive:
		return fmt.Sprintf("active%s#%d|%s", kind, o.index, randomObjects()[o.index].id)
	case objReserved:
		return fmt.Sprintf("reserved%s#%d|%s", kind, o.index, randomObjects()[o.index].id)
	default:
		return randomObjects()[o.index].String()
	}
}

// resolve returns the object's index in randomObjects.
func (o objRef) resolve(k *knowledge) int {
	if o.mode == objAny {
		return o.index
	}
	var fits []int
	for i, obj := range randomObjects() {
		snap := k.facts(obj.key()).snap
		if snap == nil {
			continue
		}
		reserved := snap.Allocation.State == location.AllocationReserved
		isActor := obj.kind == location.ObjectActor
		if o.only == objActors && !isActor || o.only == objSpots && isActor {
			continue
		}
		if reserved == (o.mode == objReserved) {
			fits = append(fits, i)
		}
	}
	if len(fits) == 0 {
		return o.index % len(randomObjects())
	}
	return fits[o.index%len(fits)]
}
