package integration

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The workload: a small universe (three owners, three mesh nodes of mesh
// "m" owned one each, four spots of mesh "play", four user-spot objects)
// so that clients collide often. Clients pick calls at random from what
// every client learnt so far (tokens, authority snapshots): the numbers
// they pass are always ones a store answered, possibly stale.

const (
	workloadMesh = "m"
	spotMesh     = "play"
	leaseTTL     = 5 * time.Minute
)

// workloadOwners are the owner ids; owner i owns mesh node i.
func workloadOwners() []string { return []string{"o1", "o2", "o3"} }

// workloadNodes are the mesh nodes' routing ids.
func workloadNodes() []location.RoutingID { return []location.RoutingID{"n1", "n2", "n3"} }

// workloadSpots are the spot ids.
func workloadSpots() []string { return []string{"s1", "s2", "s3", "s4"} }

// workloadObjects are the user-spot objects created through Reserve.
func workloadObjects() []string { return []string{"u1", "u2", "u3", "u4"} }

// knowledge is what the clients learnt from answers, shared by all.
type knowledge struct {
	mu     sync.Mutex
	tokens map[string]location.OwnerToken
	snaps  map[location.AuthorityKey]location.AuthoritySnapshot
}

// newKnowledge returns empty knowledge.
func newKnowledge() *knowledge {
	return &knowledge{tokens: map[string]location.OwnerToken{}, snaps: map[location.AuthorityKey]location.AuthoritySnapshot{}}
}

// learn takes the tokens and snapshots out of an answered call.
func (k *knowledge) learn(c call, res any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	snap := func(key location.AuthorityKey, s *location.AuthoritySnapshot) {
		if s != nil && key != "" {
			k.snaps[key] = *s
		}
	}
	read := func(key location.AuthorityKey, r *location.AuthorityReadResult) {
		if r != nil {
			if r.Kind == location.KindMissing {
				delete(k.snaps, key)
			}
			snap(key, r.Snapshot)
		}
	}
	switch r := res.(type) {
	case location.OwnerLeaseClaimResult:
		if r.Kind == location.KindClaimed {
			k.tokens[c.owner] = r.Token
		}
	case location.OwnerLeaseReadResult:
		if r.Kind == location.KindFound {
			k.tokens[c.owner] = r.Token
		}
	case location.ReserveResult:
		key := location.AuthorityKey(authKeyOf(c.reserve.Key))
		snap(key, r.Creating)
		read(key, r.Current)
	case location.CommitResult:
		snap(location.AuthorityKey(authKeyOf(c.commit.Key)), r.Ready)
	case location.CompareExchangeResult:
		snap(c.authKey, r.Stored)
		if r.Kind == location.KindDeleted {
			delete(k.snaps, c.authKey)
		}
		read(c.authKey, r.Current)
	case location.AuthorityReadResult:
		read(c.authKey, &r)
	case location.AuthorityScanResult:
		for _, e := range r.Items {
			k.snaps[e.Key] = e.Snapshot
		}
	}
}

// token returns the last token seen for owner (zero when none).
func (k *knowledge) token(owner string) (location.OwnerToken, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.tokens[owner]
	return t, ok
}

// snapshot returns the last snapshot seen of key.
func (k *knowledge) snapshot(key location.AuthorityKey) (location.AuthoritySnapshot, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.snaps[key]
	return s, ok
}

// generator draws calls for one client.
type generator struct {
	rnd  *rand.Rand
	know *knowledge
	turn int
}

// pickOf picks one of xs.
func pickOf[T any](g *generator, xs []T) T { return xs[g.rnd.IntN(len(xs))] }

// withToken is the call then makes with a known token of owner, or a claim
// call when none is known.
func (g *generator) withToken(owner string, then func(tok location.OwnerToken) call) call {
	t, ok := g.know.token(owner)
	if !ok {
		return call{kind: opClaim, owner: owner, ttl: leaseTTL}
	}
	return then(t)
}

// meshNode is node i's descriptor written with tok.
func meshNode(i int, tok location.OwnerToken, revision int64, state location.RuntimeState) location.MeshNodeDescriptor {
	capacity := location.PopulationCapacity{Limit: 2}
	return location.MeshNodeDescriptor{
		MeshName: workloadMesh, RID: workloadNodes()[i], LifecycleGeneration: 1, DescriptorRevision: revision,
		Endpoint: fmt.Sprintf("tcp://127.0.0.1:%d", 7300+i), ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity: location.Population{Actors: capacity, Spots: capacity,
			SpotTypes: []location.SpotTypeCapacity{{ObjectKind: location.ObjectUserSpot, StableType: "room", PopulationCapacity: capacity}}},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights:        map[string]int64{"orders": 100},
		ApplicationVersion:    1,
		SpotTypes:             []string{"room"},
		ObjectCapabilities:    []location.ObjectCapability{{ObjectKind: location.ObjectUserSpot, StableType: "room", Policy: location.PolicyRecreate, Limit: 10}},
		State:                 state,
		SecurityIdentity:      "cluster-a",
		OwnerID:               tok.OwnerID,
		LeaseGeneration:       tok.LeaseGeneration,
	}
}

// spotRow is a user spot of mesh "play" owned by tok.
func spotRow(id string, tok location.OwnerToken, node location.RoutingID) location.SpotLocation {
	return location.SpotLocation{MeshName: spotMesh, SpotID: id, SpotGeneration: 1, SpotType: "game",
		OwnerNodeRID: node, OwnerNodeGeneration: 1, SpotKind: location.SpotUser,
		OwnerID: tok.OwnerID, LeaseGeneration: tok.LeaseGeneration}
}

// objectKey is the creation key of object id.
func objectKey(id string) location.ObjectCreationKey {
	return location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: id}
}

// intent draws a write intent.
func (g *generator) intent() location.WriteIntent {
	switch r := g.rnd.IntN(20); {
	case r < 11:
		return location.IntentNewClaim
	case r < 17:
		return location.IntentRenew
	default:
		return location.IntentTakeover
	}
}

// next draws the next call. About one call in eight reads or writes what
// auto-connect reads (mesh-node lists and owner liveness above, peer rows
// and their lists), which the stores answer from their watch caches.
func (g *generator) next() call {
	owners := workloadOwners()
	oi := g.rnd.IntN(len(owners))
	owner := owners[oi]
	switch r := g.rnd.IntN(110); {
	case r < 8:
		return call{kind: opClaim, owner: owner, ttl: leaseTTL}
	case r < 12:
		return g.withToken(owner, func(tok location.OwnerToken) call {
			return call{kind: opRenew, token: tok, ttl: leaseTTL}
		})
	case r < 14:
		return g.withToken(owner, func(tok location.OwnerToken) call {
			return call{kind: opRelease, token: tok}
		})
	case r < 18:
		return call{kind: opReadLease, owner: owner}
	case r < 20:
		return call{kind: opExpire, owner: owner}
	case r < 30:
		return g.withToken(owner, func(tok location.OwnerToken) call {
			state := location.StateServing
			if g.rnd.IntN(8) == 0 {
				state = location.StateDraining
			}
			return call{kind: opUpdateMeshNode, desc: meshNode(oi, tok, int64(1+g.rnd.IntN(3)), state), intent: g.intent()}
		})
	case r < 34:
		return call{kind: opListMeshNodes, mesh: workloadMesh}
	case r < 46:
		return g.withToken(owner, func(tok location.OwnerToken) call {
			return call{kind: opUpdateSpot, spot: spotRow(pickOf(g, workloadSpots()), tok, workloadNodes()[oi]), intent: g.intent()}
		})
	case r < 50:
		return g.withToken(owner, func(tok location.OwnerToken) call {
			return call{kind: opRemoveSpot, spotKey: location.SpotKey{MeshName: spotMesh, SpotID: pickOf(g, workloadSpots())}, token: tok}
		})
	case r < 55:
		return call{kind: opResolveSpot, spotKey: location.SpotKey{MeshName: spotMesh, SpotID: pickOf(g, workloadSpots())}}
	case r < 58:
		return call{kind: opListSpots, mesh: spotMesh}
	case r < 68:
		return g.withToken(owner, func(tok location.OwnerToken) call {
			return call{kind: opReserve, reserve: location.ReserveRequest{
				Key: objectKey(pickOf(g, workloadObjects())),
				Intent: location.CreationIntent{StableType: "room", RequestContentReference: "req",
					RequestSHA256: make([]byte, 32), RequestEncodedSize: 1},
				Target:          location.CreationTarget{MeshName: workloadMesh, NodeRID: workloadNodes()[oi], NodeLifecycleGeneration: 1, Owner: tok},
				CreatingPayload: []byte("creating"),
				Capacity:        location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: "room", Count: 1}},
			}}
		})
	case r < 86:
		return g.authorityCall()
	case r < 93:
		return call{kind: opReadAuthority, authKey: location.AuthorityKey(authKeyOf(objectKey(pickOf(g, workloadObjects()))))}
	case r < 100:
		return call{kind: opListAuthority}
	case r < 104:
		return call{kind: opUpdatePeer, peer: peerRow(oi, owner), intent: g.intent()}
	case r < 107:
		return call{kind: opListPeers, mesh: workloadMesh}
	default:
		return call{kind: opReadLiveness, owners: workloadOwners()}
	}
}

// peerRow is node i's route-mesh router peer row, written by owner (row
// generation 0: a renewal matches any).
func peerRow(i int, owner string) location.PeerLocation {
	rid := workloadNodes()[i]
	return location.PeerLocation{AutoConnectType: location.AutoConnectRouteMesh, MeshName: workloadMesh, NodeRID: &rid,
		Role: location.PeerRoleRouter, Endpoint: fmt.Sprintf("tcp://127.0.0.1:%d", 7300+i), Weight: 100, OwnerID: owner}
}

// authorityCall draws a commit, an abort or a compare-exchange of a known
// record (a read when none is known).
func (g *generator) authorityCall() call {
	k := objectKey(pickOf(g, workloadObjects()))
	key := location.AuthorityKey(authKeyOf(k))
	s, ok := g.know.snapshot(key)
	if !ok {
		return call{kind: opReadAuthority, authKey: key}
	}
	target := location.CreationTarget{MeshName: s.Allocation.Descriptor.MeshName, NodeRID: s.Allocation.Descriptor.RID,
		NodeLifecycleGeneration: s.Allocation.DescriptorLifecycleGeneration, Owner: s.Owner}
	if s.PendingCreation != nil {
		if g.rnd.IntN(3) == 0 {
			return call{kind: opAbort, abort: location.AbortRequest{Key: k, ReservationID: s.PendingCreation.ReservationID,
				ExpectedStoreVersion: s.StoreVersion, Target: target}}
		}
		return call{kind: opCommit, commit: location.CommitRequest{Key: k, ReservationID: s.PendingCreation.ReservationID,
			ExpectedStoreVersion: s.StoreVersion, Target: target, ReadyPayload: []byte("ready")}}
	}
	if g.rnd.IntN(6) == 0 {
		return call{kind: opCAS, authKey: key, version: s.StoreVersion, mut: location.AuthorityMutation{Kind: location.MutationDelete}}
	}
	return call{kind: opCAS, authKey: key, version: s.StoreVersion, mut: location.AuthorityMutation{
		Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: fmt.Appendf(nil, "p%d", g.rnd.IntN(100))}}
}

// nextSpotRace draws from the racy workload of the checker tests: client i
// acts for owner i%2; it claims its lease, then alternately claims spot s1
// and removes its own row, so that both clients keep racing for the row.
func (g *generator) nextSpotRace(client int) call {
	owner := workloadOwners()[client%2]
	return g.withToken(owner, func(tok location.OwnerToken) call {
		g.turn++
		if g.turn%2 == 0 {
			return call{kind: opRemoveSpot, spotKey: location.SpotKey{MeshName: spotMesh, SpotID: "s1"}, token: tok}
		}
		return call{kind: opUpdateSpot, spot: spotRow("s1", tok, workloadNodes()[0]), intent: location.IntentNewClaim}
	})
}
