package meshnode_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/meshnode"
	"github.com/zlink-systems/zlink-etcd/session"
)

// exampleDescriptor describes a serving node named name (its routing id
// and owner id) with room for ten actors.
func exampleDescriptor(name string) location.MeshNodeDescriptor {
	room := location.PopulationCapacity{Limit: 10}
	return location.MeshNodeDescriptor{
		MeshName: "games", RID: location.RoutingID(name), OwnerID: name,
		Endpoint: "tcp://" + name + ".example:7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity:    location.Population{Actors: room, Spots: room},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights:        map[string]int64{"games": 100},
		SpotTypes:             []string{}, ObjectCapabilities: []location.ObjectCapability{},
		State: location.StateServing, SecurityIdentity: "example",
		LifecycleGeneration: 1, // 0 would draw a random one, as the framework does
	}
}

// printingTransport stands in for a transport: it reports every
// connection it is asked for on a channel.
type printingTransport struct {
	name  string
	calls chan string
}

func newTransport(name string) *printingTransport {
	return &printingTransport{name: name, calls: make(chan string, 16)}
}

// Connect implements autoconnect.Executor.
func (p *printingTransport) Connect(_ context.Context, t autoconnect.Target) bool {
	p.calls <- fmt.Sprintf("%s connects to %s (lifecycle %d)", p.name, *t.NodeRID, t.LifecycleGeneration)
	return true
}

// Disconnect implements autoconnect.Executor.
func (p *printingTransport) Disconnect(t autoconnect.Target) {
	p.calls <- fmt.Sprintf("%s disconnects from %s (lifecycle %d)", p.name, *t.NodeRID, t.LifecycleGeneration)
}

// Two nodes join a mesh: each claims an owner lease, publishes its
// descriptor and connects to the other (the lower routing id dials). On
// etcd, pass an etcdstore.Store instead of the memstore.
func ExampleJoin() {
	ctx := context.Background()
	store := memstore.New(memstore.Options{})

	t1 := newTransport("node-1")
	node1, err := meshnode.Join(ctx, meshnode.Options{Store: store, Executor: t1, Descriptor: exampleDescriptor("node-1")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer node1.Leave(ctx)
	node2, err := meshnode.Join(ctx, meshnode.Options{Store: store, Executor: newTransport("node-2"), Descriptor: exampleDescriptor("node-2")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer node2.Leave(ctx)

	fmt.Println(<-t1.calls)
	st := node1.State()
	fmt.Printf("%s: incarnation %d, lease %s/%d, trusted %v\n", st.Phase, st.Incarnation.Number,
		st.Incarnation.Token.OwnerID, st.Incarnation.Token.LeaseGeneration, st.Trusted)
	// Output:
	// node-1 connects to node-2 (lifecycle 1)
	// joined: incarnation 1, lease node-1/1, trusted true
}

// When a node's lease ends (here an operator revokes it; on etcd the node
// learns at once, on memstore at its next renewal), the node tells the
// application (EventLeaseLost), disconnects every peer (EventFenced), and
// rejoins with a new lease and the next lifecycle generation.
func Example_leaseLossAndRejoin() {
	ctx := context.Background()
	store := memstore.New(memstore.Options{})
	fast := session.Options{TTL: 2 * time.Second, RenewInterval: 100 * time.Millisecond,
		RenewTimeout: 500 * time.Millisecond, FencingMargin: 500 * time.Millisecond}

	events := make(chan meshnode.Event, 16)
	node, err := meshnode.Join(ctx, meshnode.Options{
		Store: store, Executor: newTransport("node-1"), Descriptor: exampleDescriptor("node-1"), Session: fast,
		OnEvent: func(e meshnode.Event) {
			if e.Kind != meshnode.EventDesiredSetChanged {
				events <- e
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer node.Leave(ctx)
	describe := func(e meshnode.Event) string {
		s := fmt.Sprintf("%s: incarnation %d, lease %d, lifecycle %d", e.Kind, e.Incarnation.Number,
			e.Incarnation.Token.LeaseGeneration, e.Incarnation.LifecycleGeneration)
		if e.Err != nil {
			s += fmt.Sprintf(" (lease lost: %v)", errors.Is(e.Err, session.ErrLeaseLost))
		}
		return s
	}
	fmt.Println(describe(<-events))

	_, _ = store.ReleaseOwnerLease(ctx, node.Incarnation().Token) // revoked behind the node's back
	for e := range events {
		fmt.Println(describe(e))
		if e.Kind == meshnode.EventJoined {
			break
		}
	}
	st := node.State()
	fmt.Println("phase:", st.Phase, "leases lost:", st.LeaseLosses)
	// Output:
	// joined: incarnation 1, lease 1, lifecycle 1
	// lease-lost: incarnation 1, lease 1, lifecycle 1 (lease lost: true)
	// fenced: incarnation 1, lease 1, lifecycle 1
	// joined: incarnation 2, lease 2, lifecycle 2
	// phase: joined leases lost: 1
}

// Leave ends a node in the only order that removes everything: its loop
// stops (peers disconnected), RemoveAllByOwner removes its rows while the
// lease lives, then the lease is released.
func ExampleNode_Leave() {
	ctx := context.Background()
	store := memstore.New(memstore.Options{})
	node, err := meshnode.Join(ctx, meshnode.Options{Store: store, Executor: newTransport("node-1"),
		Descriptor: exampleDescriptor("node-1"), PublishPeerRow: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := node.Leave(ctx); err != nil {
		fmt.Println(err)
	}
	<-node.Done()
	fmt.Println("left:", errors.Is(node.Err(), meshnode.ErrLeft))

	lease, _ := store.ReadOwnerLease(ctx, "node-1")
	nodes, _ := store.ListMeshNodes(ctx, "games", location.PageRequest{PageSize: 10})
	peers, _ := store.ListPeers(ctx, location.PeerFilter{})
	fmt.Printf("lease %s, %d descriptors, %d peer rows\n", lease.Kind, len(nodes.Items), len(peers))
	// Output:
	// left: true
	// lease missing, 0 descriptors, 0 peer rows
}
