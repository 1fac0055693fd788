package demo

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/session"
)

// nodeState is where a simulated node is in its life.
type nodeState string

// Node states.
const (
	nodeDown    nodeState = "down"
	nodeRunning nodeState = "running"
	nodeCrashed nodeState = "crashed"
	nodeStopped nodeState = "stopped"
)

// node is one simulated mesh node: an owner, a descriptor, a peer row and
// an auto-connect loop whose executor records connections.
type node struct {
	name      string
	rid       location.RoutingID
	owner     string
	endpoint  string
	lifecycle int64
	state     nodeState

	token location.OwnerToken
	lease *session.Session
	// stopping silences the loop's logs once the demo stops the node on
	// purpose (its tick in flight then fails with a cancelled context).
	stopping atomic.Bool
	exec     *recorder
	loop     *autoconnect.Loop
}

// newNode returns node i (1-based), not started.
func newNode(i int) *node {
	name := fmt.Sprintf("node-%d", i)
	return &node{
		name: name, rid: location.RoutingID(name), owner: name,
		endpoint: keys.NormalizeEndpoint(fmt.Sprintf("tcp://%s.demo.invalid:7300", name)),
		state:    nodeDown,
	}
}

// descriptor is the node's mesh-node descriptor: a serving server with
// room for ten actors, owned by its current lease.
func (n *node) descriptor(mesh string) location.MeshNodeDescriptor {
	room := location.PopulationCapacity{Limit: 10}
	return location.MeshNodeDescriptor{
		MeshName: mesh, RID: n.rid, LifecycleGeneration: n.lifecycle, DescriptorRevision: 1,
		Endpoint: n.endpoint, ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity:    location.Population{Actors: room, Spots: room},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights:        map[string]int64{mesh: 100},
		ApplicationVersion:    1,
		SpotTypes:             []string{},
		ObjectCapabilities:    []location.ObjectCapability{{ObjectKind: location.ObjectActor, StableType: actorType, Policy: location.PolicyRecreate}},
		State:                 location.StateServing,
		SecurityIdentity:      "demo",
		OwnerID:               n.owner,
		LeaseGeneration:       n.token.LeaseGeneration,
	}
}

// peerRow is the peer row the node's reconciler publishes about itself.
func (n *node) peerRow(mesh string) location.PeerLocation {
	rid := n.rid
	return location.PeerLocation{
		AutoConnectType: location.AutoConnectRouteMesh, MeshName: mesh, NodeRID: &rid,
		Role: location.PeerRoleRouter, Endpoint: n.endpoint, Weight: autoconnect.MeshNodePeerWeight,
		Metadata: map[string]string{autoconnect.MetadataObjectRole: string(location.RoleServer)},
		OwnerID:  n.owner,
	}
}

// local is the node's side of auto-connect.
func (n *node) local(mesh string) autoconnect.Local {
	rid := n.rid
	return autoconnect.Local{
		AutoConnectType: location.AutoConnectRouteMesh, MeshName: mesh, Role: location.PeerRoleRouter,
		NodeRID: &rid, Endpoint: n.endpoint, ObjectRole: location.RoleServer, HasRouteMeshServerChannel: true,
	}
}

// creationTarget is the node as the target of a creation.
func (n *node) creationTarget(mesh string) location.CreationTarget {
	return location.CreationTarget{MeshName: mesh, NodeRID: n.rid, NodeLifecycleGeneration: n.lifecycle, Owner: n.token}
}

// key is the node's mesh-node key.
func (n *node) key(mesh string) location.MeshNodeKey {
	return location.MeshNodeKey{MeshName: mesh, RID: n.rid}
}

// targetKey is the planner key of the node's current incarnation, as a
// peer that dials it sees it.
func (n *node) targetKey() string {
	rid := n.rid
	return autoconnect.TargetKey(location.PeerLocation{Role: location.PeerRoleRouter, NodeRID: &rid, Generation: n.lifecycle})
}

// dials reports whether n initiates the connection to o (the lower routing
// id dials, as autoconnect.IsInitiator decides).
func (n *node) dials(o *node) bool { return strings.Compare(string(n.rid), string(o.rid)) < 0 }

// stopLoop stops the node's loop; graceful also removes its peer row.
func (n *node) stopLoop(ctx context.Context, graceful bool) error {
	if n.loop == nil {
		return nil
	}
	n.stopping.Store(true)
	if !graceful {
		n.loop.PrepareTransportShutdown()
		return nil
	}
	return n.loop.Stop(ctx)
}
