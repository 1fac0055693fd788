package meshnode_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/meshnode"
	"github.com/zlink-systems/zlink-etcd/session"
)

const testMesh = "m"

// descriptor is a minimal serving server descriptor of node name (its rid
// and owner id), endpoint tcp://<name>:1.
func descriptor(name string) location.MeshNodeDescriptor {
	return location.MeshNodeDescriptor{
		MeshName: testMesh, RID: location.RoutingID(name), Endpoint: "tcp://" + name + ":1",
		ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity:    location.Population{Actors: location.PopulationCapacity{Limit: 10}, Spots: location.PopulationCapacity{Limit: 10}},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights:        map[string]int64{testMesh: 100},
		SpotTypes:             []string{}, ObjectCapabilities: []location.ObjectCapability{},
		State: location.StateServing, SecurityIdentity: "test", OwnerID: name,
	}
}

// fastSession is a session timing for tests on a manual clock: trusted for
// 2 s after each renewal, renewed every 500 ms.
var fastSession = session.Options{TTL: 3 * time.Second, RenewInterval: 500 * time.Millisecond,
	RenewTimeout: 500 * time.Millisecond, FencingMargin: time.Second}

// op is one call an executor received.
type op struct {
	Connect     bool
	Key         string
	At          time.Time
	Incarnation int64
	// Refused: Connect was refused because the incarnation's lease was no
	// longer trusted.
	Refused bool
}

// testExec is an executor that records its calls, stamped on a clock, and
// refuses to connect for an incarnation whose lease is not trusted.
type testExec struct {
	clk clock.Clock

	mu      sync.Mutex
	active  map[string]autoconnect.Target
	ops     []op
	changed chan struct{}
}

func newTestExec(clk clock.Clock) *testExec {
	return &testExec{clk: clk, active: map[string]autoconnect.Target{}, changed: make(chan struct{}, 1)}
}

// Connect implements autoconnect.Executor.
func (e *testExec) Connect(ctx context.Context, t autoconnect.Target) bool {
	inc, ok := meshnode.IncarnationFrom(ctx)
	o := op{Connect: true, Key: t.Key, At: e.clk.Now(), Incarnation: inc.Number}
	refused := !ok || !inc.Session.Valid()
	o.Refused = refused
	e.mu.Lock()
	e.ops = append(e.ops, o)
	if !refused {
		e.active[t.Key] = t
	}
	e.mu.Unlock()
	e.notify()
	return !refused
}

// Disconnect implements autoconnect.Executor.
func (e *testExec) Disconnect(t autoconnect.Target) {
	e.mu.Lock()
	e.ops = append(e.ops, op{Key: t.Key, At: e.clk.Now()})
	delete(e.active, t.Key)
	e.mu.Unlock()
	e.notify()
}

func (e *testExec) notify() {
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

// keys returns the connected target keys, sorted.
func (e *testExec) keys() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(maps.Keys(e.active))
}

// history returns the recorded calls.
func (e *testExec) history() []op {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ops)
}

// eventLog collects a node's events.
type eventLog struct {
	mu     sync.Mutex
	events []meshnode.Event
	// onEvent, when set, runs inside the callback (to snapshot state).
	onEvent func(meshnode.Event)
	ch      chan struct{}
}

func newEventLog() *eventLog { return &eventLog{ch: make(chan struct{}, 1)} }

// record is an Options.OnEvent.
func (l *eventLog) record(e meshnode.Event) {
	if l.onEvent != nil {
		l.onEvent(e)
	}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
	default:
	}
}

// kinds returns the kinds of the events other than desired-set changes.
func (l *eventLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.Kind != meshnode.EventDesiredSetChanged {
			out = append(out, fmt.Sprintf("%s#%d", e.Kind, e.Incarnation.Number))
		}
	}
	return out
}

// find returns the events of kind.
func (l *eventLog) find(kind meshnode.EventKind) []meshnode.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []meshnode.Event
	for _, e := range l.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// waitFor waits until cond holds, re-checking at least every millisecond,
// for at most 20 s of real time (the machine may be loaded); it fails the
// test with what() otherwise.
func waitFor(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not reached within 20s: %s", what())
		}
		time.Sleep(time.Millisecond)
	}
}

// mesh is a set of nodes on one memstore and one clock.
type mesh struct {
	t     *testing.T
	ctx   context.Context
	store meshnode.Store
	mem   *memstore.Store
	clk   *clock.Manual
	nodes map[string]*testNode
}

// testNode is a node with its executor and events.
type testNode struct {
	name   string
	node   *meshnode.Node
	exec   *testExec
	events *eventLog
}

// newMesh returns an empty mesh on a memstore and a manual clock (the
// store's clock too).
func newMesh(t *testing.T) *mesh {
	clk := clock.NewManual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	mem := memstore.New(memstore.Options{Clock: clk.Now})
	return &mesh{t: t, ctx: t.Context(), store: mem, mem: mem, clk: clk, nodes: map[string]*testNode{}}
}

// options returns the options of node name on the mesh's store and clock.
func (m *mesh) options(name string, exec *testExec, events *eventLog) meshnode.Options {
	so := fastSession
	so.Clock = m.clk
	poll := 100 * time.Millisecond
	d := descriptor(name)
	d.LifecycleGeneration = 1
	return meshnode.Options{
		Store: m.store, Executor: exec, Descriptor: d, Session: so,
		AutoConnect: autoconnect.Options{PollingInterval: &poll}, OnEvent: events.record,
		RejoinBackoff: meshnode.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond},
	}
}

// newNode returns node name's executor and event log, not joined yet.
func (m *mesh) newNode(name string) *testNode {
	return &testNode{name: name, exec: newTestExec(m.clk), events: newEventLog()}
}

// join joins node name with opts edited by edit (nil keeps them); the
// node leaves when the test ends.
func (m *mesh) join(name string, edit func(*meshnode.Options)) *testNode {
	m.t.Helper()
	return m.start(m.newNode(name), edit)
}

// start joins tn (see join).
func (m *mesh) start(tn *testNode, edit func(*meshnode.Options)) *testNode {
	m.t.Helper()
	o := m.options(tn.name, tn.exec, tn.events)
	if edit != nil {
		edit(&o)
	}
	n, err := meshnode.Join(m.ctx, o)
	require.NoError(m.t, err)
	tn.node = n
	m.nodes[tn.name] = tn
	m.t.Cleanup(func() { _ = n.Leave(context.Background()) })
	return tn
}

// expected returns the target keys node name should be connected to: the
// other joined nodes it dials, at their current lifecycle generations.
func (m *mesh) expected(name string) []string {
	self := m.nodes[name]
	local := autoconnect.Local{AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter,
		NodeRID: ridOf(name), Endpoint: "tcp://" + name + ":1", ObjectRole: location.RoleServer, HasRouteMeshServerChannel: true}
	var want []string
	for other, tn := range m.nodes {
		st := tn.node.State()
		if other == name || st.Phase != meshnode.PhaseJoined || self.node.State().Phase != meshnode.PhaseJoined {
			continue
		}
		d := descriptor(other)
		d.LifecycleGeneration = st.Incarnation.LifecycleGeneration
		row := autoconnect.PeerFromMeshNode(&d)
		if autoconnect.ShouldDial(local, row) {
			want = append(want, autoconnect.TargetKey(row))
		}
	}
	slices.Sort(want)
	return want
}

// mismatch describes the first joined node whose connections differ from
// the expected ones, or returns "".
func (m *mesh) mismatch() string {
	for name, tn := range m.nodes {
		if tn.node.State().Phase != meshnode.PhaseJoined {
			continue
		}
		if got, want := tn.exec.keys(), m.expected(name); !slices.Equal(got, want) {
			return fmt.Sprintf("%s is connected to %v, want %v", name, got, want)
		}
	}
	return ""
}

// converge waits until every joined node is connected exactly as
// expected.
func (m *mesh) converge() {
	m.t.Helper()
	var last string
	waitFor(m.t, func() string { return last }, func() bool {
		last = m.mismatch()
		return last == ""
	})
}

// advanceUntil moves the clock by step until cond holds (waiting on state
// between steps).
func (m *mesh) advanceUntil(step time.Duration, what string, cond func() bool) {
	m.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			m.t.Fatalf("not reached within 20s: %s", what)
		}
		m.clk.Advance(step)
		time.Sleep(time.Millisecond)
	}
}

func ridOf(name string) *location.RoutingID {
	r := location.RoutingID(name)
	return &r
}
