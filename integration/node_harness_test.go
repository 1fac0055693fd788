package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/pkg/v3/proxy"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/etcdproc"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/meshnode"
	"github.com/zlink-systems/zlink-etcd/session"
)

// Node-level fault tests: mesh nodes (meshnode.Node) on a three-member
// cluster while members die, a node's client is partitioned, responses
// are lost, the quorum goes and comes back, and leases are revoked. After
// each fault every node must be joined, published and connected to
// exactly the live set, and no node may have acted on an ended lease past
// the fencing margin. docs/reliability.md ("Mesh nodes under faults")
// describes them and records the figures.

// nodeFault names a node-level fault.
type nodeFault string

// The node-level faults.
const (
	nfLeaderKill    nodeFault = "leader-kill"
	nfMemberRestart nodeFault = "member-restart"
	nfPartition     nodeFault = "partition"
	nfLostResponses nodeFault = "lost-responses"
	nfQuorumLoss    nodeFault = "quorum-loss"
	nfLeaseRevoked  nodeFault = "lease-revoked"
)

// allNodeFaults lists every node-level fault.
func allNodeFaults() []nodeFault {
	return []nodeFault{nfLeaderKill, nfMemberRestart, nfPartition, nfLostResponses, nfQuorumLoss, nfLeaseRevoked}
}

// nodeMeshName is the mesh the nodes join.
const nodeMeshName = "faults"

// nodeSession is the nodes' lease timing: trusted for 2 s after each
// renewal (sent every 500 ms), so that a fault longer than 2 s ends a
// session.
var nodeSession = session.Options{TTL: 3 * time.Second, RenewInterval: 500 * time.Millisecond,
	RenewTimeout: 500 * time.Millisecond, FencingMargin: time.Second}

// nodeBackend is the cluster the nodes run on.
type nodeBackend interface {
	size() int
	endpoint(i int) string
	running(i int) bool
	// kill stops member i at once (no leadership handover), stop in an
	// orderly way; restart starts it again from its data.
	kill(i int) error
	stop(i int) error
	restart(ctx context.Context, i int) error
	close() error
}

// inProcBackend is an etcdtest cluster: kill is a hard stop of the
// embedded server (no leadership handover, raft stops at once).
type inProcBackend struct {
	cl   *etcdtest.Cluster
	down []bool
	// closing[i] is closed once member i's servers have closed after a
	// kill: closing the embedded server waits for its clients' streams
	// (up to etcd's request timeout, 5 s), which the test need not wait
	// for, except before a restart on the same ports.
	closing []chan struct{}
}

func startInProcBackend(ctx context.Context) (*inProcBackend, error) {
	cl, err := etcdtest.StartCluster(ctx, 3, etcdtest.Config{})
	if err != nil {
		return nil, err
	}
	return &inProcBackend{cl: cl, down: make([]bool, 3), closing: make([]chan struct{}, 3)}, nil
}

func (b *inProcBackend) size() int             { return len(b.cl.Members) }
func (b *inProcBackend) endpoint(i int) string { return b.cl.Members[i].Endpoints()[0] }
func (b *inProcBackend) running(i int) bool    { return !b.down[i] }
func (b *inProcBackend) stop(i int) error      { b.cl.Members[i].Stop(false); b.down[i] = true; return nil }

func (b *inProcBackend) kill(i int) error {
	m := b.cl.Members[i]
	m.Etcd().Server.HardStop()
	b.down[i] = true
	done := make(chan struct{})
	b.closing[i] = done
	go func() {
		defer close(done)
		m.Stop(false) // the server is stopped: this closes its listeners
	}()
	return nil
}

func (b *inProcBackend) restart(ctx context.Context, i int) error {
	if c := b.closing[i]; c != nil {
		<-c
		b.closing[i] = nil
	}
	if err := b.cl.Members[i].Restart(ctx); err != nil {
		return err
	}
	b.down[i] = false
	return nil
}

func (b *inProcBackend) close() error {
	for _, c := range b.closing {
		if c != nil {
			<-c
		}
	}
	return b.cl.Close()
}

// procBackend is a cluster of real etcd processes: kill is SIGKILL.
type procBackend struct{ cl *etcdproc.Cluster }

func (b *procBackend) size() int                                { return len(b.cl.Members) }
func (b *procBackend) endpoint(i int) string                    { return b.cl.Members[i].Endpoint() }
func (b *procBackend) running(i int) bool                       { return b.cl.Members[i].Running() }
func (b *procBackend) kill(i int) error                         { return b.cl.Members[i].Kill() }
func (b *procBackend) stop(i int) error                         { return b.cl.Members[i].Stop() }
func (b *procBackend) restart(ctx context.Context, i int) error { return b.cl.Members[i].Restart(ctx) }
func (b *procBackend) close() error                             { return b.cl.Close() }

// meshMember is one node with its own client (through a TCP proxy per
// cluster member, so that its client can be partitioned), its own store
// (whose KV can lose responses), and an executor that records its calls.
type meshMember struct {
	name    string
	desc    location.MeshNodeDescriptor
	proxies []proxy.Server
	client  *clientv3.Client
	kv      *faultKV
	store   *etcdstore.Store
	exec    *fencedExec
	node    *meshnode.Node

	mu     sync.Mutex
	losses []lossRecord
}

// lossRecord is one ended incarnation as the node reported it.
type lossRecord struct {
	inc          meshnode.Incarnation
	cause        error
	endedAt      time.Time
	trustedUntil time.Time
	fencedAt     time.Time
	// connectedAtFence is how many peers the executor still had when the
	// node reported the incarnation fenced.
	connectedAtFence int
	checked          bool
}

// fencedExec is an executor that records its calls on the node's clock
// and refuses to connect for a lease that is not trusted any more (the
// context tells the incarnation).
type fencedExec struct {
	mu     sync.Mutex
	active map[string]autoconnect.Target
	// connects records every successful Connect: when, for which
	// incarnation.
	connects []execCall
	refused  int
}

// execCall is one recorded Connect.
type execCall struct {
	at          time.Time
	incarnation meshnode.Incarnation
	key         string
}

func newFencedExec() *fencedExec { return &fencedExec{active: map[string]autoconnect.Target{}} }

// Connect implements autoconnect.Executor.
func (e *fencedExec) Connect(ctx context.Context, t autoconnect.Target) bool {
	at := time.Now()
	inc, ok := meshnode.IncarnationFrom(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !ok || !inc.Session.Valid() {
		e.refused++
		return false
	}
	e.active[t.Key] = t
	e.connects = append(e.connects, execCall{at: at, incarnation: inc, key: t.Key})
	return true
}

// Disconnect implements autoconnect.Executor.
func (e *fencedExec) Disconnect(t autoconnect.Target) {
	e.mu.Lock()
	delete(e.active, t.Key)
	e.mu.Unlock()
}

// keys returns the connected target keys, sorted.
func (e *fencedExec) keys() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(maps.Keys(e.active))
}

// nodeMesh is a set of nodes on one cluster, and the faults' figures.
type nodeMesh struct {
	t       *testing.T
	backend nodeBackend
	root    string
	layout  keys.Layout
	rnd     *rand.Rand
	// checker reads the store directly (every member) and revokes leases.
	checkerClient *clientv3.Client
	checker       *etcdstore.Store
	members       []*meshMember
	// convergence holds, per fault, the time from its end until every
	// node converged; fences counts the ended incarnations checked.
	convergence map[nodeFault][]time.Duration
	fences      int
	maxFenceLag time.Duration
}

// runNodeFaults starts faultNodes nodes on backend (seeded with seed), runs
// the faults plan draws with the mesh's random source, reports the figures
// under title, closes the mesh and the backend, and requires that no
// goroutine outlived them beyond leaks.
func runNodeFaults(t *testing.T, backend nodeBackend, seed uint64, title string, leaks goleak.Option, plan func(rnd *rand.Rand) []nodeFault) {
	t.Helper()
	nm := startNodeMesh(t, backend, faultNodes, seed)
	nm.run(t.Context(), plan(nm.rnd), func(f nodeFault) time.Duration { return nodeFaultHold(f, nm.rnd.IntN) })
	reportFigures(t, title, nm.figures())
	nm.close()
	require.NoError(t, backend.close())
	require.NoError(t, goleak.Find(append(etcdServerConnections(), leaks)...))
}

// shuffledFaultRounds returns n rounds of every node-level fault, each in an
// order rnd draws, the first in catalogue order when firstInOrder.
func shuffledFaultRounds(rnd *rand.Rand, n int, firstInOrder bool) []nodeFault {
	var plan []nodeFault
	for r := range n {
		round := allNodeFaults()
		if r > 0 || !firstInOrder {
			rnd.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		plan = append(plan, round...)
	}
	return plan
}

// startNodeMesh starts n nodes on backend and waits until they converged.
func startNodeMesh(t *testing.T, backend nodeBackend, n int, seed uint64) *nodeMesh {
	var b [6]byte
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	root := "/nodefaults-" + string(b[:]) + "/"
	layout, err := keys.NewLayout(root)
	require.NoError(t, err)
	var eps []string
	for i := range backend.size() {
		eps = append(eps, backend.endpoint(i))
	}
	cc, err := etcdtest.NewClient(eps)
	require.NoError(t, err)
	checker, err := etcdstore.New(cc, etcdstore.Options{Root: root})
	require.NoError(t, err)
	nm := &nodeMesh{t: t, backend: backend, root: root, layout: layout, rnd: rand.New(rand.NewPCG(seed, 11)),
		checkerClient: cc, checker: checker, convergence: map[nodeFault][]time.Duration{}}
	for i := range n {
		nm.members = append(nm.members, nm.startMember(t.Context(), fmt.Sprintf("node-%02d", i+1), seed*100+uint64(i)))
	}
	nm.converge(t.Context(), "join", time.Now())
	return nm
}

// startMember starts one node: its proxies, client, store and node.
func (nm *nodeMesh) startMember(ctx context.Context, name string, seed uint64) *meshMember {
	t := nm.t
	m := &meshMember{name: name, exec: newFencedExec()}
	var eps []string
	for i := range nm.backend.size() {
		to, err := url.Parse(nm.backend.endpoint(i))
		require.NoError(t, err)
		port, err := freePort()
		require.NoError(t, err)
		p := proxy.NewServer(proxy.ServerConfig{Logger: zap.NewNop(),
			From: url.URL{Scheme: "tcp", Host: fmt.Sprintf("127.0.0.1:%d", port)}, To: url.URL{Scheme: "tcp", Host: to.Host}})
		select {
		case <-p.Ready():
		case err := <-p.Error():
			require.NoError(t, err)
		}
		go drainBridgeErrors(p)
		m.proxies = append(m.proxies, p)
		eps = append(eps, "http://"+strings.TrimPrefix(p.From(), "tcp://"))
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second,
		DialKeepAliveTime: 500 * time.Millisecond, DialKeepAliveTimeout: 500 * time.Millisecond, Logger: zap.NewNop()})
	require.NoError(t, err)
	m.client = c
	m.kv = newFaultKV(c.KV, nm.layout.OwnerPrefix(), seed)
	m.store, err = etcdstore.New(c, etcdstore.Options{Root: nm.root, KV: m.kv})
	require.NoError(t, err)
	m.desc = nodeDescriptor(name)
	poll := 200 * time.Millisecond
	jctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	m.node, err = meshnode.Join(jctx, meshnode.Options{
		Store: m.store, Executor: m.exec, Descriptor: m.desc, PublishPeerRow: true, Session: nodeSession,
		AutoConnect: autoconnect.Options{PollingInterval: &poll}, OnEvent: m.record,
		RejoinBackoff: meshnode.Backoff{Initial: 50 * time.Millisecond, Max: time.Second},
	})
	require.NoError(t, err)
	return m
}

// nodeDescriptor is node name's descriptor (lifecycle 1).
func nodeDescriptor(name string) location.MeshNodeDescriptor {
	room := location.PopulationCapacity{Limit: 10}
	return location.MeshNodeDescriptor{
		MeshName: nodeMeshName, RID: location.RoutingID(name), OwnerID: name, LifecycleGeneration: 1,
		Endpoint: "tcp://" + name + ".invalid:7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity: location.Population{Actors: room, Spots: room}, ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights: map[string]int64{nodeMeshName: 100}, SpotTypes: []string{}, ObjectCapabilities: []location.ObjectCapability{},
		State: location.StateServing, SecurityIdentity: "faults",
	}
}

// record is the node's OnEvent: it records ended incarnations and what
// the executor held when each was fenced.
func (m *meshMember) record(e meshnode.Event) {
	switch e.Kind {
	case meshnode.EventLeaseLost:
		m.mu.Lock()
		m.losses = append(m.losses, lossRecord{inc: e.Incarnation, cause: e.Err, endedAt: e.At, trustedUntil: e.TrustedUntil})
		m.mu.Unlock()
	case meshnode.EventFenced:
		held := len(m.exec.keys())
		m.mu.Lock()
		for i := range m.losses {
			if m.losses[i].inc.Number == e.Incarnation.Number {
				m.losses[i].fencedAt, m.losses[i].connectedAtFence = e.At, held
			}
		}
		m.mu.Unlock()
	}
}

// close leaves every node and stops everything the mesh started.
func (nm *nodeMesh) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range nm.members {
		if m.node != nil {
			if err := m.node.Leave(ctx); err != nil {
				nm.t.Logf("%s: leave: %v", m.name, err)
			}
		}
		_ = m.client.Close()
		for _, p := range m.proxies {
			_ = p.Close()
		}
	}
	_ = nm.checkerClient.Close()
}

// expected returns the target keys m should be connected to.
func (nm *nodeMesh) expected(m *meshMember, lifecycles map[string]int64) []string {
	rid := m.desc.RID
	local := autoconnect.Local{AutoConnectType: location.AutoConnectRouteMesh, MeshName: nodeMeshName, Role: location.PeerRoleRouter,
		NodeRID: &rid, Endpoint: m.desc.Endpoint, ObjectRole: location.RoleServer, HasRouteMeshServerChannel: true}
	var want []string
	for _, o := range nm.members {
		if o == m {
			continue
		}
		d := o.desc
		d.LifecycleGeneration = lifecycles[o.name]
		row := autoconnect.PeerFromMeshNode(&d)
		if autoconnect.ShouldDial(local, row) {
			want = append(want, autoconnect.TargetKey(row))
		}
	}
	slices.Sort(want)
	return want
}

// mismatch describes the first way in which the mesh has not converged,
// or returns "": every node is joined with a trusted lease, its lease,
// descriptor and peer row are in the store for its current incarnation,
// and its executor is connected to exactly the peers it dials.
func (nm *nodeMesh) mismatch(ctx context.Context) string {
	lifecycles := map[string]int64{}
	incs := map[string]meshnode.Incarnation{}
	for _, m := range nm.members {
		st := m.node.State()
		if st.Phase != meshnode.PhaseJoined || !st.Trusted {
			return fmt.Sprintf("%s is %s (trusted %v, last join error %v)", m.name, st.Phase, st.Trusted, st.LastJoinError)
		}
		if !st.PeerRowPublished {
			return m.name + "'s peer row is not published"
		}
		lifecycles[m.name], incs[m.name] = st.Incarnation.LifecycleGeneration, st.Incarnation
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	page, err := nm.checker.ListMeshNodes(rctx, nodeMeshName, location.PageRequest{PageSize: 100})
	if err != nil {
		return "checker: list mesh nodes: " + err.Error()
	}
	listed := map[string]location.MeshNodeDescriptor{}
	for _, d := range page.Items {
		listed[d.OwnerID] = d
	}
	mesh := nodeMeshName
	peers, err := nm.checker.ListPeers(rctx, location.PeerFilter{MeshName: &mesh})
	if err != nil {
		return "checker: list peers: " + err.Error()
	}
	peerOwners := map[string]bool{}
	for _, p := range peers {
		peerOwners[p.OwnerID] = true
	}
	for _, m := range nm.members {
		inc := incs[m.name]
		lease, err := nm.checker.ReadOwnerLease(rctx, m.name)
		if err != nil {
			return "checker: read lease: " + err.Error()
		}
		if lease.Kind != location.KindFound || lease.Token != inc.Token {
			return fmt.Sprintf("%s's lease in the store is %s %+v, the node holds %+v", m.name, lease.Kind, lease.Token, inc.Token)
		}
		d, ok := listed[m.name]
		if !ok || d.LeaseGeneration != inc.Token.LeaseGeneration || d.LifecycleGeneration != inc.LifecycleGeneration {
			return fmt.Sprintf("%s's descriptor is %v (lease %d, lifecycle %d), want lease %d, lifecycle %d",
				m.name, ok, d.LeaseGeneration, d.LifecycleGeneration, inc.Token.LeaseGeneration, inc.LifecycleGeneration)
		}
		if !peerOwners[m.name] {
			return m.name + "'s peer row is missing from the store"
		}
		if got, want := m.exec.keys(), nm.expected(m, lifecycles); !slices.Equal(got, want) {
			return fmt.Sprintf("%s is connected to %v, want %v", m.name, got, want)
		}
	}
	return ""
}

// converge waits until the mesh converged (at most a minute) and records
// the time since from under fault.
func (nm *nodeMesh) converge(ctx context.Context, fault nodeFault, from time.Time) time.Duration {
	t := nm.t
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last := ""
	for {
		if last = nm.mismatch(ctx); last == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: the nodes did not converge within a minute: %s", fault, last)
		}
		wait(ctx, 20*time.Millisecond)
	}
	took := time.Since(from)
	nm.convergence[fault] = append(nm.convergence[fault], took)
	return took
}

// checkFences checks every ended incarnation not checked yet: it was
// fenced (every peer disconnected) no later than its trust deadline plus
// the fencing margin, and no later than revokedAt plus the margin when its
// lease was revoked at revokedAt; no connection was made for it once its
// lease was not trusted.
func (nm *nodeMesh) checkFences(revokedAt map[string]time.Time) {
	t := nm.t
	t.Helper()
	margin := nodeSession.FencingMargin
	for _, m := range nm.members {
		m.mu.Lock()
		losses := slices.Clone(m.losses)
		m.mu.Unlock()
		for i, l := range losses {
			if l.checked || l.fencedAt.IsZero() {
				continue
			}
			require.Zero(t, l.connectedAtFence, "%s: incarnation %d still had connections when fenced", m.name, l.inc.Number)
			require.False(t, l.fencedAt.After(l.trustedUntil.Add(margin)),
				"%s: incarnation %d fenced at %v, trusted until %v, its end noticed at %v (%v): past the fencing margin",
				m.name, l.inc.Number, l.fencedAt, l.trustedUntil, l.endedAt, l.cause)
			if at, ok := revokedAt[m.name]; ok && errors.Is(l.cause, session.ErrLeaseLost) {
				require.False(t, l.fencedAt.After(at.Add(margin)),
					"%s: incarnation %d fenced at %v, its lease revoked at %v: past the fencing margin", m.name, l.inc.Number, l.fencedAt, at)
			}
			m.exec.mu.Lock()
			for _, c := range m.exec.connects {
				if c.incarnation.Number == l.inc.Number {
					require.False(t, c.at.After(l.trustedUntil), "%s: connected %s for incarnation %d at %v, trusted until %v",
						m.name, c.key, l.inc.Number, c.at, l.trustedUntil)
				}
			}
			m.exec.mu.Unlock()
			if d := l.fencedAt.Sub(l.endedAt); d > nm.maxFenceLag {
				nm.maxFenceLag = d
			}
			nm.fences++
			m.mu.Lock()
			m.losses[i].checked = true
			m.mu.Unlock()
		}
	}
}

// leader returns the index of the member that leads, or -1.
func (nm *nodeMesh) leader(ctx context.Context) int {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for i := range nm.backend.size() {
			if !nm.backend.running(i) {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			st, err := nm.checkerClient.Status(sctx, nm.backend.endpoint(i))
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i
			}
		}
		wait(ctx, 20*time.Millisecond)
	}
	return -1
}

// inject injects fault f, holding it for hold; it returns when the fault
// ended (members restarted, partition healed, lease revoked and the
// losses stopped) and the revocation times of the leases it revoked.
func (nm *nodeMesh) inject(ctx context.Context, f nodeFault, hold time.Duration) map[string]time.Time {
	t := nm.t
	t.Helper()
	revoked := map[string]time.Time{}
	switch f {
	case nfLeaderKill:
		i := nm.leader(ctx)
		require.GreaterOrEqual(t, i, 0, "no leader")
		require.NoError(t, nm.backend.kill(i))
		wait(ctx, hold)
		require.NoError(t, nm.backend.restart(ctx, i))
	case nfMemberRestart:
		i := nm.rnd.IntN(nm.backend.size())
		if i == nm.leader(ctx) {
			i = (i + 1) % nm.backend.size()
		}
		require.NoError(t, nm.backend.stop(i))
		wait(ctx, hold)
		require.NoError(t, nm.backend.restart(ctx, i))
	case nfPartition:
		m := nm.members[nm.rnd.IntN(len(nm.members))]
		// The proxies hold the traffic both ways and deliver it after the
		// heal, as TCP retransmits after a network partition (dropping it
		// would lose the middle of a stream, which TCP never does).
		for _, p := range m.proxies {
			p.PauseTx()
			p.PauseRx()
		}
		wait(ctx, hold)
		for _, p := range m.proxies {
			p.UnpauseTx()
			p.UnpauseRx()
		}
	case nfLostResponses:
		for _, m := range nm.members {
			m.kv.setLoss(0.35, 0.1)
		}
		// Two nodes rejoin under the losses: claims, descriptors and peer
		// rows are written while answers are lost.
		for _, i := range nm.rnd.Perm(len(nm.members))[:2] {
			m := nm.members[i]
			revoked[m.name] = time.Now()
			nm.revoke(ctx, m.name)
		}
		wait(ctx, hold)
		for _, m := range nm.members {
			m.kv.setLoss(0, 0)
		}
	case nfQuorumLoss:
		i := nm.rnd.IntN(nm.backend.size())
		j := (i + 1) % nm.backend.size()
		require.NoError(t, nm.backend.kill(i))
		require.NoError(t, nm.backend.kill(j))
		wait(ctx, hold)
		// Both at once: a member restarted without a quorum may wait for
		// the other.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for k, idx := range []int{i, j} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[k] = nm.backend.restart(ctx, idx)
			}()
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
	case nfLeaseRevoked:
		m := nm.members[nm.rnd.IntN(len(nm.members))]
		revoked[m.name] = time.Now()
		nm.revoke(ctx, m.name)
	}
	return revoked
}

// revoke revokes owner's lease through the checker, riding out an
// election.
func (nm *nodeMesh) revoke(ctx context.Context, owner string) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(nm.t, nm.checker.ExpireOwnerLease(rctx, owner))
}

// run injects each fault of plan (holding it for hold(f)) and waits for
// convergence after each.
func (nm *nodeMesh) run(ctx context.Context, plan []nodeFault, hold func(nodeFault) time.Duration) {
	for i, f := range plan {
		h := hold(f)
		start := time.Now()
		revoked := nm.inject(ctx, f, h)
		ended := time.Now()
		took := nm.converge(ctx, f, ended)
		nm.checkFences(revoked)
		nm.t.Logf("fault %d/%d %s (held %v): converged %v after it ended (%v after it began)",
			i+1, len(plan), f, h.Round(time.Millisecond), took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	for _, m := range nm.members {
		select {
		case <-m.node.Done():
			nm.t.Fatalf("%s ended: %v", m.name, m.node.Err())
		default:
		}
	}
}

// nodeFigures is the text of a node-fault run's figures.
type nodeFigures string

// String implements fmt.Stringer (reportFigures).
func (f nodeFigures) String() string { return string(f) }

// figures renders the convergence times per fault and the fence checks.
func (nm *nodeMesh) figures() nodeFigures {
	var b strings.Builder
	faults := make([]string, 0, len(nm.convergence))
	for f := range nm.convergence {
		faults = append(faults, string(f))
	}
	sort.Strings(faults)
	fmt.Fprintf(&b, "%-16s %6s %10s %10s %10s\n", "fault", "count", "p50", "p99", "max")
	for _, f := range faults {
		ds := slices.Clone(nm.convergence[nodeFault(f)])
		slices.Sort(ds)
		fmt.Fprintf(&b, "%-16s %6d %10v %10v %10v\n", f, len(ds), percentile(ds, 50), percentile(ds, 99), ds[len(ds)-1].Round(time.Millisecond))
	}
	losses, rejoins := 0, 0
	for _, m := range nm.members {
		st := m.node.State()
		losses += int(st.LeaseLosses)
		rejoins += int(st.Incarnation.Number) - 1
	}
	fmt.Fprintf(&b, "ended incarnations checked: %d (lease losses %d, rejoins %d); longest session end → all peers disconnected: %v\n",
		nm.fences, losses, rejoins, nm.maxFenceLag)
	return nodeFigures(b.String())
}

// percentile returns the p-th percentile of sorted ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := (p*len(ds) + 99) / 100
	return ds[max(i-1, 0)].Round(time.Millisecond)
}
