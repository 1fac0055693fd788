package main

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/location"
)

// population is what populate wrote.
type population struct {
	alice, bob location.OwnerToken
}

// populate writes one row of every table for the live owner "alice"
// (mesh node node-a, client server, fanout publisher, peer, spot, actor
// with its authority record, route) and a mesh node and a spot for "bob",
// whose lease it then revokes.
func populate(t *testing.T, s *etcdstore.Store) population {
	t.Helper()
	ctx := t.Context()
	var p population
	p.alice = claimLease(t, s, "alice")
	p.bob = claimLease(t, s, "bob")
	stored := func(res location.WriteResult, err error) {
		t.Helper()
		require.NoError(t, err)
		require.Equal(t, location.Stored, res.Status)
	}
	stored(s.UpdateMeshNode(ctx, meshNode("node-a", p.alice), location.IntentNewClaim))
	stored(s.UpdateMeshNode(ctx, meshNode("node-b", p.bob), location.IntentNewClaim))
	stored(s.UpdateClientServer(ctx, location.ClientServerDescriptor{ChannelName: "orders", ServerRID: "srv-a", LifecycleGeneration: 1,
		DescriptorRevision: 1, Endpoint: "tcp://srv-a.test.invalid:7400", Weight: 100, State: location.StateServing,
		SecurityIdentity: "test", OwnerID: "alice", LeaseGeneration: p.alice.LeaseGeneration}, location.IntentNewClaim))
	stored(s.UpdateFanoutPublisher(ctx, location.FanoutPublisherDescriptor{ChannelName: "events", PublisherRID: "pub-a",
		LifecycleGeneration: 1, DescriptorRevision: 1, Endpoint: "tcp://pub-a.test.invalid:9500", State: location.StateServing,
		SecurityIdentity: "test", OwnerID: "alice", LeaseGeneration: p.alice.LeaseGeneration}, location.IntentNewClaim))
	rid := location.RoutingID("node-a")
	stored(s.UpdatePeer(ctx, location.PeerLocation{AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", NodeRID: &rid,
		Role: location.PeerRoleRouter, Endpoint: "tcp://node-a.test.invalid:7300", Weight: 100, OwnerID: "alice"}, location.IntentNewClaim))
	for _, o := range []location.OwnerToken{p.alice, p.bob} {
		stored(s.UpdateSpot(ctx, location.SpotLocation{MeshName: "play", SpotID: "spot-" + o.OwnerID, SpotGeneration: 1, SpotType: "game",
			OwnerNodeRID: "node-a", OwnerNodeGeneration: 1, SpotKind: location.SpotUser, OwnerID: o.OwnerID,
			LeaseGeneration: o.LeaseGeneration}, location.IntentNewClaim))
	}
	stored(s.UpdateActor(ctx, location.ActorLocation{MeshName: "play", ActorID: "player-1", ActorType: "player",
		ActorRef:     location.ActorRef{ActorID: "player-1", ObjectGeneration: 1, MeshName: "play", NodeRID: "node-a"},
		OwnerNodeRID: "node-a", OwnerNodeGeneration: 1, SpotKind: location.SpotEntry, SpotID: "entry", SpotGeneration: 1,
		MembershipEpoch: 1, OwnerID: "alice", LeaseGeneration: p.alice.LeaseGeneration}, location.IntentNewClaim))
	stored(s.UpdateRoute(ctx, location.RouteLocation{RouteKind: location.RouteActorSession, RouteKey: "session-1",
		OwnerNodeRID: "node-a", OwnerID: "alice", Value: []byte{1, 2, 3}}, location.IntentNewClaim))
	createActorAuthority(t, s, "player-1", p.alice)
	require.NoError(t, s.ExpireOwnerLease(ctx, "bob"))
	return p
}

// claimLease claims a one-minute owner lease.
func claimLease(t *testing.T, s *etcdstore.Store, owner string) location.OwnerToken {
	t.Helper()
	res, err := s.ClaimOwnerLease(t.Context(), owner, time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindClaimed, res.Kind)
	return res.Token
}

// meshNode is a serving server descriptor of mesh "play".
func meshNode(rid string, tok location.OwnerToken) location.MeshNodeDescriptor {
	room := location.PopulationCapacity{Limit: 10}
	return location.MeshNodeDescriptor{MeshName: "play", RID: location.RoutingID(rid), LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://" + rid + ".test.invalid:7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity: location.Population{Actors: room, Spots: room}, ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights: map[string]int64{"play": 100}, ApplicationVersion: 1, SpotTypes: []string{},
		ObjectCapabilities: []location.ObjectCapability{{ObjectKind: location.ObjectActor, StableType: "player", Policy: location.PolicyRecreate}},
		State:              location.StateServing, SecurityIdentity: "test", OwnerID: tok.OwnerID, LeaseGeneration: tok.LeaseGeneration}
}

// createActorAuthority creates an actor's authority record on node-a.
func createActorAuthority(t *testing.T, s *etcdstore.Store, id string, tok location.OwnerToken) {
	t.Helper()
	ctx := t.Context()
	key := location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: id}
	target := location.CreationTarget{MeshName: "play", NodeRID: "node-a", NodeLifecycleGeneration: 1, Owner: tok}
	digest := sha256.Sum256([]byte(id))
	res, err := s.Reserve(ctx, location.ReserveRequest{Key: key,
		Intent: location.CreationIntent{StableType: "player", RequestContentReference: "test:" + id, RequestSHA256: digest[:], RequestEncodedSize: 1},
		Target: target, CreatingPayload: []byte("creating"), Capacity: location.CapacityVector{Actors: 1}})
	require.NoError(t, err)
	require.Equal(t, location.KindReserved, res.Kind)
	env := []byte("created")
	sum := sha256.Sum256(env)
	done, err := s.CompleteCreation(ctx, location.CompleteCreationRequest{Key: key, ReservationID: res.ReservationID,
		ExpectedStoreVersion: res.Creating.StoreVersion, Target: target,
		Completion: location.CreationCompletion{Kind: location.TerminalCreated, ReadyPayload: []byte("ready"),
			Terminal: location.TerminalPublication{Operation: location.OperationIdentity{SourceNodeRID: "node-a", SourceNodeGeneration: 1,
				OperationID: location.OperationID{Low: 1}}, TerminalEnvelope: env, TerminalEnvelopeSHA256: sum[:],
				OperationDeadline: time.Now().Add(time.Minute)}}})
	require.NoError(t, err)
	require.Equal(t, location.KindCreated, done.Kind)
}
