package demo

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/meshnode"
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

// node is one simulated mesh node: a meshnode.Node (owner lease,
// descriptor, peer row, auto-connect loop) whose executor records
// connections.
type node struct {
	name     string
	rid      location.RoutingID
	owner    string
	endpoint string
	state    nodeState
	exec     *recorder
	mn       *meshnode.Node

	mu sync.Mutex
	// last is the node's incarnation as last seen: the current one while
	// it runs (the node may rejoin on its own after a lease loss), the
	// last one after it stopped.
	last meshnode.Incarnation
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

// incarnation returns the node's current (or last) incarnation.
func (n *node) incarnation() meshnode.Incarnation {
	if n.mn != nil && n.state == nodeRunning {
		inc := n.mn.Incarnation()
		n.mu.Lock()
		n.last = inc
		n.mu.Unlock()
		return inc
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.last
}

// token is the node's current owner token.
func (n *node) token() location.OwnerToken { return n.incarnation().Token }

// lifecycle is the node's current lifecycle generation.
func (n *node) lifecycle() int64 { return n.incarnation().LifecycleGeneration }

// descriptor is the node's mesh-node descriptor: a serving server with
// room for ten actors, first published with lifecycle generation
// lifecycle (the node sets its lease generation).
func (n *node) descriptor(mesh string, lifecycle int64) location.MeshNodeDescriptor {
	room := location.PopulationCapacity{Limit: 10}
	return location.MeshNodeDescriptor{
		MeshName: mesh, RID: n.rid, LifecycleGeneration: lifecycle, DescriptorRevision: 1,
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
	}
}

// creationTarget is the node as the target of a creation.
func (n *node) creationTarget(mesh string) location.CreationTarget {
	inc := n.incarnation()
	return location.CreationTarget{MeshName: mesh, NodeRID: n.rid, NodeLifecycleGeneration: inc.LifecycleGeneration, Owner: inc.Token}
}

// key is the node's mesh-node key.
func (n *node) key(mesh string) location.MeshNodeKey {
	return location.MeshNodeKey{MeshName: mesh, RID: n.rid}
}

// targetKey is the planner key of the node's current incarnation, as a
// peer that dials it sees it.
func (n *node) targetKey() string {
	rid := n.rid
	return autoconnect.TargetKey(location.PeerLocation{Role: location.PeerRoleRouter, NodeRID: &rid, Generation: n.lifecycle()})
}

// dials reports whether n initiates the connection to o (the lower routing
// id dials, as autoconnect.IsInitiator decides).
func (n *node) dials(o *node) bool { return strings.Compare(string(n.rid), string(o.rid)) < 0 }

// start joins the mesh as a new process would: a new lease, and the
// lifecycle generation after the last one.
func (r *runner) startNode(ctx context.Context, n *node) error {
	ttl := r.opts.LeaseTTL
	n.exec = newRecorder(r.notify)
	mn, err := meshnode.Join(ctx, meshnode.Options{
		Store: r.store, Executor: n.exec, Descriptor: n.descriptor(r.opts.Mesh, n.lifecycle()+1), PublishPeerRow: true,
		Session:     session.Options{TTL: ttl, RenewInterval: ttl / 3, RenewTimeout: ttl / 6, FencingMargin: ttl / 6},
		AutoConnect: autoconnect.Options{PollingInterval: &r.opts.PollingInterval},
		Logger:      r.opts.Logger.With("node", n.name),
		OnEvent:     func(e meshnode.Event) { r.nodeEvent(n, e) },
	})
	if err != nil {
		return fmt.Errorf("%s: join: %w", n.name, err)
	}
	n.mn, n.state = mn, nodeRunning
	inc := n.incarnation()
	r.out.eventf("%s joined: owner lease gen %d (ttl %v), descriptor and peer row published (lifecycle %d), auto-connect running",
		n.name, inc.Token.LeaseGeneration, ttl, inc.LifecycleGeneration)
	return nil
}

// nodeEvent prints what happens to a node besides its connections: a lease
// that ended under a fault, and the rejoin that follows.
func (r *runner) nodeEvent(n *node, e meshnode.Event) {
	switch e.Kind {
	case meshnode.EventDesiredSetChanged:
		r.reportChange(n, *e.Change)
	case meshnode.EventLeaseLost:
		r.out.eventf("%s's owner lease gen %d ended (%v): it stops acting on it", n.name, e.Incarnation.Token.LeaseGeneration, e.Err)
	case meshnode.EventFenced:
		r.out.eventf("%s disconnected from every peer of lease gen %d", n.name, e.Incarnation.Token.LeaseGeneration)
	case meshnode.EventJoined:
		if e.Incarnation.Number > 1 {
			r.out.eventf("%s rejoined: owner lease gen %d, lifecycle %d", n.name, e.Incarnation.Token.LeaseGeneration, e.Incarnation.LifecycleGeneration)
		}
	case meshnode.EventJoinFailed:
		r.out.eventf("%s: joining failed, next attempt in %v: %v", n.name, e.Retry.Round(1e6), e.Err)
	}
	r.notify()
}

// stop ends the node: gracefully (Leave: its rows removed, its lease
// released), or as a crash (Orphan: nothing written, the lease left to
// run out).
func (n *node) stop(ctx context.Context, graceful bool, after nodeState) error {
	if n.mn == nil || n.state != nodeRunning {
		return nil
	}
	n.incarnation() // remember the last one
	n.state = after
	if graceful {
		return n.mn.Leave(ctx)
	}
	n.mn.Orphan()
	return nil
}
