package etcdstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
)

// claim claims an owner lease of one minute and returns its token.
func (f *fixture) claim(t *testing.T, ownerID string) location.OwnerToken {
	t.Helper()
	return storetest.Claim(t, t.Context(), f.s, ownerID, time.Minute)
}

// meshNode is a serving server descriptor of (mesh, rid) owned by tok with
// room for ten actors, ten spots and ten "room" user spots.
func meshNode(mesh string, rid location.RoutingID, tok location.OwnerToken) location.MeshNodeDescriptor {
	capacity := location.PopulationCapacity{Limit: 10}
	return location.MeshNodeDescriptor{
		MeshName: mesh, RID: rid, LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity: location.Population{Actors: capacity, Spots: capacity,
			SpotTypes: []location.SpotTypeCapacity{{ObjectKind: location.ObjectUserSpot, StableType: "room", PopulationCapacity: capacity}}},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 100},
		ChannelWeights:        map[string]int64{"orders": 100},
		ApplicationVersion:    1,
		SpotTypes:             []string{"room"},
		ObjectCapabilities:    []location.ObjectCapability{{ObjectKind: location.ObjectUserSpot, StableType: "room", Policy: location.PolicyRecreate, Limit: 10}},
		State:                 location.StateServing,
		SecurityIdentity:      "cluster-a",
		OwnerID:               tok.OwnerID,
		LeaseGeneration:       tok.LeaseGeneration,
	}
}

// creationTarget stores mesh node "node-a" of mesh "m" (meshNode) owned by
// owner and returns the creation target on it.
func (f *fixture) creationTarget(t *testing.T, owner location.OwnerToken) location.CreationTarget {
	t.Helper()
	storedIn(t)(f.s.UpdateMeshNode(t.Context(), meshNode("m", "node-a", owner), location.IntentNewClaim))
	return location.CreationTarget{MeshName: "m", NodeRID: "node-a", NodeLifecycleGeneration: 1, Owner: owner}
}

// spot is a user spot (mesh "play") owned by tok.
func spot(id string, tok location.OwnerToken) location.SpotLocation {
	return location.SpotLocation{MeshName: "play", SpotID: id, SpotGeneration: 1, SpotType: "game",
		OwnerNodeRID: "node-1", OwnerNodeGeneration: 1, SpotKind: location.SpotUser,
		OwnerID: tok.OwnerID, LeaseGeneration: tok.LeaseGeneration}
}

// actor is an actor row (mesh "play") owned by tok.
func actor(id string, tok location.OwnerToken) location.ActorLocation {
	return location.ActorLocation{MeshName: "play", ActorID: id, ActorType: "player",
		ActorRef:     location.ActorRef{ActorID: id, ObjectGeneration: 1, MeshName: "play", NodeRID: "node-1"},
		OwnerNodeRID: "node-1", OwnerNodeGeneration: 1, SpotKind: location.SpotEntry, SpotID: "node-1",
		SpotGeneration: 1, MembershipEpoch: 1, OwnerID: tok.OwnerID, LeaseGeneration: tok.LeaseGeneration}
}

// peer is a route-mesh router peer row (mesh "play") of owner.
func peer(rid location.RoutingID, owner string) location.PeerLocation {
	return location.PeerLocation{AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", NodeRID: &rid,
		Role: location.PeerRoleRouter, Endpoint: "tcp://127.0.0.1:5001", Weight: 100, OwnerID: owner}
}

// route is an actor-session route row of owner.
func route(key, owner string) location.RouteLocation {
	return location.RouteLocation{RouteKind: location.RouteActorSession, RouteKey: key, OwnerNodeRID: "node-1",
		OwnerID: owner, Value: []byte{1, 2, 3}}
}

// storedIn returns a check that a write answered Stored, which returns the
// generation: storedIn(t)(store.UpdateSpot(…)).
func storedIn(t *testing.T) func(location.WriteResult, error) int64 {
	return func(res location.WriteResult, err error) int64 {
		t.Helper()
		require.NoError(t, err)
		require.Equal(t, location.Stored, res.Status)
		require.Positive(t, res.Generation)
		return res.Generation
	}
}

// keysUnder lists the store's keys under a sub-prefix of its root.
func (f *fixture) keysUnder(t *testing.T, sub string) []string {
	t.Helper()
	resp, err := f.s.client.Get(context.Background(), f.s.layout.Root()+sub, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	out := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, string(kv.Key)[len(f.s.layout.Root()):])
	}
	return out
}

// counts returns the requests recorded since the last reset and resets.
func (f *fixture) counts() map[string]int {
	c := f.rec.Counts()
	f.rec.Reset()
	return c
}

// warmCache starts the store's watch cache and waits until it answers.
func (f *fixture) warmCache(t *testing.T) {
	t.Helper()
	f.s.cache.start(f.s.cache.ranges)
	deadline := time.Now().Add(10 * time.Second)
	for !f.s.CacheStats().Ready {
		if time.Now().After(deadline) {
			t.Fatal("the watch cache did not load")
		}
		time.Sleep(time.Millisecond)
	}
}
