//go:build cluster

package deploy

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/examples/meshnode/statedoc"
)

// TestClusterUnderFaults is `make cluster-test`: the rendered base in
// Docker — three etcd members with the StatefulSet's TLS arguments, the
// auth set-up Job, and five mesh nodes from the Deployment, each writing
// actors (--actor-interval) — put through faults, round after round:
//
//  1. leader-kill: the etcd leader's container is killed (SIGKILL), kept
//     down, then started again from its volume;
//  2. member-partition: one member (the leader in odd rounds, a follower in
//     even ones) is disconnected from the network it shares with its peers
//     and its clients (docker network disconnect), then reconnected;
//  3. node-partition: one mesh node is disconnected from etcd's network (it
//     keeps the mesh network, where its peers and this test reach it) for
//     longer than its lease TTL, then reconnected;
//  4. roll: the mesh nodes are stopped one by one (SIGTERM: a graceful
//     leave) and started again;
//  5. quorum-loss: two members are stopped, for longer than the nodes'
//     trust window, then started again.
//
// After each fault it checks, through the nodes' own /debug/state,
// /readyz and /metrics and through `zlinketcd inspect --output json` (run
// as a container on etcd's network with the store's certificate): every
// live node converges to the live set (joined, lease trusted, ready, and
// linked to exactly every other live node at its current lifecycle
// generation; the store holds exactly their descriptors and leases); a
// node cut off from etcd drops its connections before its lease can end
// (TTL after its last confirmed renewal), at its trust deadline (TTL −
// fencing margin), and rejoins once reconnected; and every write the nodes
// logged as acknowledged is in the store, except what a graceful leave
// removed (docs/reliability.md, "Containers under faults").
//
// Environment: ZLINK_CLUSTER_ROUNDS (default 2), ZLINK_CLUSTER_REPORT (a
// file that every sample is appended to as a JSON line),
// ZLINK_CLUSTER_NODE_ARGS (extra mesh-node flags, space-separated, e.g.
// shorter lease timings or --log-level=debug).
//
// Diagnosis knobs: ZLINK_CLUSTER_FAULTS (a comma-separated subset of the
// faults above, by name, run in their order; default all),
// ZLINK_CLUSTER_KILL_LEADER and ZLINK_CLUSTER_PARTITION_LEADER (a member's
// name, e.g. etcd-0: before the leader kill, and before the member
// partition of a leader round, leadership is moved to that member with
// etcdctl move-leader, so that the same members are hit in every run),
// ZLINK_CLUSTER_PARTITION_UNREACHABLE (a member's name: from before the
// member partition until its reconnect, the nodes' connections to that
// member's client port are refused, with iptables in each node's network
// namespace, as when the nodes have not reconnected yet to a member that
// just restarted; needs root, nsenter and iptables on the host) and ZLINK_CLUSTER_LOGS (a directory: when the test ends, the full
// logs of every container are written there, one file each).
func TestClusterUnderFaults(t *testing.T) {
	c := newCluster(t)
	c.start()
	rounds := 2
	if v := os.Getenv("ZLINK_CLUSTER_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ZLINK_CLUSTER_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	steps := []struct {
		name string
		run  func(round int)
	}{
		{"leader-kill", c.leaderKill},
		{"member-partition", c.memberPartition},
		{"node-partition", c.nodePartition},
		{"roll", c.roll},
		{"quorum-loss", c.quorumLoss},
	}
	if v := os.Getenv("ZLINK_CLUSTER_FAULTS"); v != "" {
		want := strings.Split(v, ",")
		steps = slices.DeleteFunc(steps, func(s struct {
			name string
			run  func(round int)
		}) bool {
			return !slices.Contains(want, s.name)
		})
		if len(steps) != len(want) {
			t.Fatalf("ZLINK_CLUSTER_FAULTS=%q: want names among leader-kill, member-partition, node-partition, roll, quorum-loss", v)
		}
	}
	for round := 1; round <= rounds; round++ {
		for _, s := range steps {
			c.logf("== round %d: %s", round, s.name)
			s.run(round)
			if t.Failed() {
				t.FailNow()
			}
			c.checkStore(c.nodes, s.name)
		}
	}
	c.report()
}

// Cluster timing of the test itself (the nodes' own timing comes from
// their /debug/state).
const (
	pollEvery = 200 * time.Millisecond
	// stableFor is how long the mesh must stay converged to count as
	// converged (a fault's effects may arrive late).
	stableFor   = 2 * time.Second
	convergeMax = 120 * time.Second
	// memberHold is how long a member stays killed or partitioned: longer
	// than the nodes' lease TTL, so that a node that cannot renew through
	// the two members left is fenced within it; then it is started or
	// reconnected, as a StatefulSet's pod would be.
	memberHold = 20 * time.Second
	// stampSlack is how far apart two of a node's timestamps may be from
	// an exact duration: the node derives its deadlines from monotonic
	// readings and reports wall-clock times, which differ by nanoseconds.
	stampSlack = time.Millisecond
	// fenceSlack bounds how late, after its trust deadline, a node may
	// report itself fenced (timer and scheduling delays on a loaded
	// machine); the safety bound is the lease's end, TTL after the last
	// confirmed renewal, which is checked exactly.
	fenceSlack = time.Second
)

// cluster is the running system.
type cluster struct {
	*dockerEnv
	storeNet, meshNet string
	members           []etcdMember
	nodes             []*meshNode
	ttl, margin       time.Duration
	renewTimeout      time.Duration
	run               string
	samples           []sample
	reportFile        *os.File
	began             time.Time
	dumped            bool
}

// meshNode is one mesh-node container: a pod of the Deployment.
type meshNode struct {
	name, container string
	storeIP, meshIP string
	url             string // http://meshIP:9090
}

// sample is one fault's figures.
type sample struct {
	Run    string `json:"run"`
	Round  int    `json:"round"`
	Fault  string `json:"fault"`
	Target string `json:"target"`
	// Disrupted: from the injection to the end of the last moment the mesh
	// was not converged during the fault (0: it stayed converged).
	Disrupted time.Duration `json:"disruptedNs"`
	// Converged: from the heal (restart, reconnect, start) until the mesh
	// converged for good.
	Converged time.Duration `json:"convergedNs"`
	// Fenced: incarnations that ended during the fault.
	Fenced int `json:"fenced"`
	// FenceLate: for the fenced incarnations, the latest fence after its
	// trust deadline (node clock); DropSlack: the smallest time left
	// between the moment this test saw every link of a fenced node gone
	// and the earliest end of its lease (last renewal + TTL).
	FenceLate time.Duration `json:"fenceLateNs,omitempty"`
	DropSlack time.Duration `json:"dropSlackNs,omitempty"`
	// SettledWhileDown: for a member fault, whether the mesh was converged
	// when the member came back (it rode out the fault).
	SettledWhileDown bool `json:"settledWhileDown,omitempty"`
	// Stop: for a roll, SIGTERM to exit.
	Stop time.Duration `json:"stopNs,omitempty"`
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{dockerEnv: newDockerEnv(t, "zlink-cluster"), run: time.Now().UTC().Format("20060102T150405")}
	if path := os.Getenv("ZLINK_CLUSTER_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		c.reportFile = f
	}
	return c
}

// fatalf prints the containers' last logs and the nodes' states, then
// fails the test.
func (c *cluster) fatalf(format string, args ...any) {
	c.t.Helper()
	c.dumpLogs()
	c.t.Fatalf(format, args...)
}

func (c *cluster) logf(format string, args ...any) {
	c.t.Helper()
	c.t.Logf("%7.1fs  %s", time.Since(c.began).Seconds(), fmt.Sprintf(format, args...))
}

// start brings up the networks, etcd, the auth set-up and the mesh nodes,
// and waits until the mesh converged.
func (c *cluster) start() {
	c.t.Helper()
	c.began = time.Now()
	var storeBase, meshBase string
	c.storeNet, storeBase = c.network("store")
	c.meshNet, meshBase = c.network("mesh")
	c.members = c.startEtcd(c.storeNet, storeBase)
	for _, m := range c.members {
		c.waitReady(m, 120*time.Second)
	}
	c.logf("etcd: %d members ready", len(c.members))
	c.logf("auth set-up Job: %s", lastLine(c.runAuthSetup(c.storeNet)))

	pod := c.deploy.Spec.Template.Spec
	ctr := pod.Containers[0]
	extra := strings.Fields(os.Getenv("ZLINK_CLUSTER_NODE_ARGS"))
	for i := range 5 {
		n := &meshNode{name: fmt.Sprintf("meshnode-%d", i), storeIP: fmt.Sprintf("%s%d", storeBase, 100+i),
			meshIP: fmt.Sprintf("%s%d", meshBase, 100+i)}
		n.container = c.container(n.name)
		n.url = "http://" + n.meshIP + ":9090"
		// The pod's address is the one on the mesh network: it advertises
		// it, and its peers and this test reach it there.
		env := podEnv(c.t, ctr, n.name, n.meshIP, c.cms)
		args := append([]string{"create", "--name", n.container, "--ip", n.storeIP}, runArgs(c.t, pod, ctr, env, c.secrets, c.storeNet)...)
		args = append(append(args, ctr.Image), containerArgs(ctr, env)...)
		args = append(args, "--actor-interval=1s")
		args = append(args, extra...)
		mustDocker(c.ctx, c.t, args...)
		mustDocker(c.ctx, c.t, "network", "connect", "--ip", n.meshIP, c.meshNet, n.container)
		mustDocker(c.ctx, c.t, "start", n.container)
		c.nodes = append(c.nodes, n)
	}
	// Cleanups run last first: these before the containers are removed.
	c.t.Cleanup(func() {
		if c.t.Failed() && !c.dumped {
			c.dumpLogs()
		}
	})
	if dir := os.Getenv("ZLINK_CLUSTER_LOGS"); dir != "" {
		c.t.Cleanup(func() { c.saveLogs(dir) })
	}
	at := c.waitConverged(c.nodes, c.began, "start")
	st := c.state(c.nodes[0])
	if !st.ok || st.Timing.LeaseTTL <= 0 {
		c.fatalf("the nodes' timing: no lease TTL in %s's /debug/state", c.nodes[0].name)
	}
	c.ttl, c.margin = time.Duration(st.Timing.LeaseTTL), time.Duration(st.Timing.FencingMargin)
	c.renewTimeout = time.Duration(st.Timing.RenewTimeout)
	c.logf("mesh: %d nodes converged %v after the start (lease TTL %v, fencing margin %v: trusted %v after each renewal)",
		len(c.nodes), at.Sub(c.began).Round(time.Millisecond), c.ttl, c.margin, c.ttl-c.margin)
	c.checkStore(c.nodes, "start")
}

// nodeState is a node's /debug/state (the document meshnode writes) and
// what this test adds to it.
type nodeState struct {
	statedoc.State
	// ok: the state was read; ready: /readyz answered 200.
	ok, ready bool
	readyz    string
}

// state reads a node's /debug/state and /readyz.
func (c *cluster) state(n *meshNode) nodeState {
	var st nodeState
	code, body := httpGet(n.url + "/debug/state")
	if code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		return st
	}
	st.ok = true
	code, st.readyz = httpGet(n.url + "/readyz")
	st.ready = code == http.StatusOK
	return st
}

// states reads every node of live at once.
func (c *cluster) states(live []*meshNode) map[string]nodeState {
	out := make(map[string]nodeState, len(live))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range live {
		wg.Go(func() {
			st := c.state(n)
			mu.Lock()
			out[n.name] = st
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// convergence says why live is not converged ("" when it is): every node
// joined, trusting its lease, ready, and linked to exactly the other live
// nodes, each at its current lifecycle generation.
func convergence(live []*meshNode, sts map[string]nodeState) string {
	for _, n := range live {
		st := sts[n.name]
		switch {
		case !st.ok:
			return n.name + ": no /debug/state"
		case st.Phase != "joined" || !st.Trusted || st.Stopping || st.StoreFailed || st.Incarnation == nil:
			return fmt.Sprintf("%s: phase %s, trusted %v, store failed %v", n.name, st.Phase, st.Trusted, st.StoreFailed)
		case !st.ready:
			return fmt.Sprintf("%s: not ready: %s", n.name, strings.Join(strings.Fields(st.readyz), " "))
		}
		var want []string
		for _, o := range live {
			if o != n {
				want = append(want, o.name)
			}
		}
		slices.Sort(want)
		if !slices.Equal(st.Peers, want) {
			return fmt.Sprintf("%s: linked to %v, want %v", n.name, st.Peers, want)
		}
		for _, l := range st.Links {
			if p := sts[l.Peer]; p.Incarnation == nil || p.Incarnation.LifecycleGeneration != l.PeerLifecycle {
				return fmt.Sprintf("%s: its link to %s is for lifecycle generation %d, not the peer's current one", n.name, l.Peer, l.PeerLifecycle)
			}
		}
	}
	return ""
}

// watch polls live until it has been converged for stableFor, and returns
// when that began; while it is not converged it calls during (if set) with
// the states, once per poll. It fails the test after convergeMax.
func (c *cluster) watch(live []*meshNode, from time.Time, what string, during func(map[string]nodeState)) (convergedAt time.Time, lastBad time.Time) {
	c.t.Helper()
	var good time.Time
	var why string
	for {
		polled := time.Now()
		sts := c.states(live)
		if during != nil {
			during(sts)
		}
		if why = convergence(live, sts); why == "" {
			if good.IsZero() {
				good = polled
			}
			if time.Since(good) >= stableFor {
				return good, lastBad
			}
		} else {
			good, lastBad = time.Time{}, polled
		}
		if time.Since(from) > convergeMax {
			c.fatalf("%s: the mesh did not converge within %v of %s: %s", what, convergeMax, from.Format(time.TimeOnly), why)
		}
		time.Sleep(time.Until(polled.Add(pollEvery)))
	}
}

// waitConverged waits until live converged for good and checks the
// nodes' metrics then; it returns when convergence began.
func (c *cluster) waitConverged(live []*meshNode, from time.Time, what string) time.Time {
	c.t.Helper()
	at, _ := c.watch(live, from, what, nil)
	for _, n := range live {
		_, body := httpGet(n.url + "/metrics")
		links := metricValue(body, `zlink_example_mesh_links{direction="in"}`) + metricValue(body, `zlink_example_mesh_links{direction="out"}`)
		desired, connected := metricValue(body, "zlink_autoconnect_desired_targets"), metricValue(body, "zlink_autoconnect_connected_targets")
		if links != float64(len(live)-1) || desired != connected || metricValue(body, "zlink_sessions_untrusted") != 0 {
			c.t.Errorf("%s: %s's metrics: %v links (want %d), %v desired and %v connected targets, %v untrusted sessions",
				what, n.name, links, len(live)-1, desired, connected, metricValue(body, "zlink_sessions_untrusted"))
		}
	}
	return at
}

// metricValue is the value of the sample named name (labels included), or
// NaN.
func metricValue(body, name string) float64 {
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
				return v
			}
		}
	}
	return math.NaN()
}

// incarnations are the nodes' current incarnation numbers.
func (c *cluster) incarnations(live []*meshNode) map[string]int64 {
	out := map[string]int64{}
	for name, st := range c.states(live) {
		if st.Incarnation != nil {
			out[name] = st.Incarnation.Number
		}
	}
	return out
}

// fencedSince counts the incarnations that ended since before.
func (c *cluster) fencedSince(before map[string]int64) int {
	n := 0
	for name, inc := range c.incarnations(c.nodes) {
		n += int(inc - before[name])
	}
	return n
}

// leader is the index of the member that says it leads (from its metrics).
func (c *cluster) leader() int {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for i, m := range c.members {
			if _, body := httpGet(m.metrics + "/metrics"); metricValue(body, "etcd_server_is_leader") == 1 {
				return i
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatal("no etcd member says it leads")
		}
		time.Sleep(pollEvery)
	}
}

// record keeps a sample and appends it to the report file.
func (c *cluster) record(s sample) {
	s.Run = c.run
	c.samples = append(c.samples, s)
	c.logf("%s %s: disrupted %v, converged %v after the heal, %d incarnation(s) fenced%s", s.Fault, s.Target,
		s.Disrupted.Round(time.Millisecond), s.Converged.Round(time.Millisecond), s.Fenced, fenceText(s))
	if c.reportFile != nil {
		b, _ := json.Marshal(s)
		fmt.Fprintf(c.reportFile, "%s\n", b)
	}
}

func fenceText(s sample) string {
	text := ""
	if s.Fault == "leader-kill" || s.Fault == "member-partition" {
		text = fmt.Sprintf("; converged while the member was out: %v", s.SettledWhileDown)
	}
	if s.Fenced == 0 || s.DropSlack == 0 {
		// Fences are timed for the faults that cut nodes off on purpose
		// (node-partition, quorum-loss); a member fault's are counted.
		return text
	}
	return text + fmt.Sprintf(" (fenced at most %v after the trust deadline; links gone %v before the lease could end)",
		s.FenceLate.Round(time.Millisecond), s.DropSlack.Round(time.Millisecond))
}

// faultWindow watches the mesh for memberHold while a member is down or
// cut off. It returns how long the mesh was disrupted (from t0 to the end
// of the last poll that found it not converged; 0 when it stayed
// converged) and whether it was converged, for stableFor at least, when
// the hold ended: the mesh is expected to ride out the loss of one member,
// but what is checked is that it converges once the member is back (the
// figures say whether it did before).
func (c *cluster) faultWindow(t0 time.Time) (disrupted time.Duration, settled bool) {
	c.t.Helper()
	var good time.Time
	var why, lastWhy string // why the mesh was not converged: first and last reason
	for time.Since(t0) < memberHold {
		polled := time.Now()
		if w := convergence(c.nodes, c.states(c.nodes)); w == "" {
			if good.IsZero() {
				good = polled
			}
		} else {
			good = time.Time{}
			disrupted = polled.Add(pollEvery).Sub(t0)
			if why == "" {
				why = w
			}
			lastWhy = w
		}
		time.Sleep(time.Until(polled.Add(pollEvery)))
	}
	if why != "" {
		c.logf("while the member was out, not converged at first because %s; last because %s", why, lastWhy)
	}
	return disrupted, !good.IsZero() && time.Since(good) >= stableFor
}

// leaderKill kills the leader's container, keeps it down for memberHold,
// and starts it again.
func (c *cluster) leaderKill(round int) {
	before := c.incarnations(c.nodes)
	if name := os.Getenv("ZLINK_CLUSTER_KILL_LEADER"); name != "" {
		c.moveLeader(name)
	}
	m := c.members[c.leader()]
	t0 := time.Now()
	mustDocker(c.ctx, c.t, "kill", m.container)
	c.logf("killed the leader %s", m.name)
	disrupted, settled := c.faultWindow(t0)
	t1 := time.Now()
	mustDocker(c.ctx, c.t, "start", m.container)
	c.waitReady(m, 60*time.Second)
	at := c.waitConverged(c.nodes, t1, "leader-kill: after the restart")
	c.record(sample{Round: round, Fault: "leader-kill", Target: m.name, Disrupted: disrupted, Converged: at.Sub(t1),
		Fenced: c.fencedSince(before), SettledWhileDown: settled})
}

// memberPartition cuts a member off the network (the leader in odd
// rounds, a follower in even ones) for memberHold, and reconnects it with
// its address and names.
func (c *cluster) memberPartition(round int) {
	before := c.incarnations(c.nodes)
	if name := os.Getenv("ZLINK_CLUSTER_PARTITION_UNREACHABLE"); name != "" {
		c.refuseMember(name, true)
		defer c.refuseMember(name, false)
	}
	if name := os.Getenv("ZLINK_CLUSTER_PARTITION_LEADER"); name != "" && round%2 == 1 {
		c.moveLeader(name)
	}
	i := c.leader()
	role := "leader"
	if round%2 == 0 {
		i, role = (i+1)%len(c.members), "follower"
	}
	m := c.members[i]
	t0 := time.Now()
	mustDocker(c.ctx, c.t, "network", "disconnect", c.storeNet, m.container)
	c.logf("disconnected the %s %s from its peers and clients", role, m.name)
	// While the mesh is watched, every member left serves lease
	// keep-alives: a follower forwards them to the (new) leader.
	var wg sync.WaitGroup
	wg.Go(func() { c.checkKeepAlives(m) })
	disrupted, settled := c.faultWindow(t0)
	wg.Wait()
	t1 := time.Now()
	mustDocker(c.ctx, c.t, "network", "connect", "--ip", m.ip, "--alias", m.name+".etcd.zlink.svc", "--alias", "etcd-client.zlink.svc",
		c.storeNet, m.container)
	c.waitReady(m, 60*time.Second)
	at := c.waitConverged(c.nodes, t1, "member-partition: after the reconnect")
	c.record(sample{Round: round, Fault: "member-partition", Target: m.name + " (" + role + ")", Disrupted: disrupted,
		Converged: at.Sub(t1), Fenced: c.fencedSince(before), SettledWhileDown: settled})
}

// peerAcceptWithin bounds how long a member may take to answer a request
// on a new connection to its peer port.
const peerAcceptWithin = 2 * time.Second

// checkPeerAccept checks that every member left answers a request (GET
// /version) on a new connection to its peer port, made with the peer
// certificate, within peerAcceptWithin while cut is cut off: the members
// left open new peer connections to each other after a leader change (a
// follower forwards lease keep-alives to the leader over one), and a
// member that checked a connecting peer's address by looking up the
// names of its certificate waited for the cut-off member's name, which
// does not resolve, before accepting any (docs/reliability.md).
//
// It also checks that the peer port refuses the store's client
// certificate (same CA, no names): a peer is known by its certificate's
// CommonName.
func (c *cluster) checkPeerAccept(cut etcdMember) {
	c.t.Helper()
	for _, m := range c.members {
		if m.name == cut.name {
			continue
		}
		start := time.Now()
		code, err := c.peerGet(m, "etcd-peer-tls")
		took := time.Since(start).Round(time.Millisecond)
		switch {
		case err != nil:
			c.t.Errorf("%s did not answer on a new peer connection within %v while %s was cut off: %v", m.name, peerAcceptWithin, cut.name, err)
		case code != http.StatusOK:
			c.t.Errorf("%s answered %d on a new peer connection while %s was cut off", m.name, code, cut.name)
		default:
			c.logf("%s answered on a new peer connection in %v", m.name, took)
		}
		if code, err := c.peerGet(m, "zlink-etcd-client-tls"); err == nil {
			c.t.Errorf("%s's peer port accepted the store's client certificate (answered %d)", m.name, code)
		}
	}
}

// peerGet sends GET /version on a new connection to m's peer port with
// the certificate of the Secret called secret, within peerAcceptWithin,
// and returns the status code.
func (c *cluster) peerGet(m etcdMember, secret string) (int, error) {
	dir := filepath.Join(c.secrets, secret)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return 0, err
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return 0, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool,
		ServerName: m.name + ".etcd.zlink.svc", MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Timeout: peerAcceptWithin, Transport: tr}
	resp, err := client.Get("https://" + net.JoinHostPort(m.ip, c.containerPort("peer")) + "/version")
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// containerPort is the port of etcd's container called name in the
// StatefulSet.
func (c *cluster) containerPort(name string) string {
	c.t.Helper()
	for _, p := range c.sts.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == name {
			return strconv.Itoa(int(p.ContainerPort))
		}
	}
	c.t.Errorf("etcd's container has no port %s", name)
	return ""
}

// memberEndpoint is the client URL of the member called name among the
// nodes' endpoints.
func (c *cluster) memberEndpoint(endpoints []string, name string) string {
	c.t.Helper()
	for _, ep := range endpoints {
		if strings.Contains(ep, "//"+name+".") {
			return ep
		}
	}
	c.t.Errorf("no endpoint of %s among %v", name, endpoints)
	return ""
}

// checkKeepAlives checks, once the members left have a leader, that they
// accept new peer connections (checkPeerAccept) and that a lease
// keep-alive sent through each of them (etcdctl, with the auth
// set-up Job's root certificate) is answered within the nodes' renew
// timeout while cut is cut off: a follower forwards it to the leader over
// a peer connection, which may be new since the leader changed; runs 10
// and 12 fenced every session because it was not (docs/reliability.md).
func (c *cluster) checkKeepAlives(cut etcdMember) {
	c.t.Helper()
	var live []int
	for i, m := range c.members {
		if m.name != cut.name {
			live = append(live, i)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	leader := -1
	for leader < 0 {
		for _, i := range live {
			if _, body := httpGet(c.members[i].metrics + "/metrics"); metricValue(body, "etcd_server_is_leader") == 1 {
				leader = i
			}
		}
		if leader < 0 && time.Now().After(deadline) {
			c.t.Errorf("no member led 15 s after %s was cut off", cut.name)
			return
		}
		time.Sleep(pollEvery)
	}
	c.checkPeerAccept(cut)
	args, env := c.jobRun(c.storeNet)
	endpoints := strings.Split(env["ZLINK_ETCD_ENDPOINTS"], ",")
	timeout := cmp.Or(c.renewTimeout, 3*time.Second).String()
	for _, i := range live {
		role := "follower"
		if i == leader {
			role = "leader"
		}
		ctl := append(slices.Clone(args), c.etcdctlImage(), "--endpoints", c.memberEndpoint(endpoints, c.members[i].name), "--command-timeout", timeout,
			"--cacert", "/etc/zlink/etcd-root/ca.crt", "--cert", "/etc/zlink/etcd-root/tls.crt", "--key", "/etc/zlink/etcd-root/tls.key")
		out, err := docker(c.ctx, c.t, append(slices.Clone(ctl), "lease", "grant", "60")...)
		fields := strings.Fields(out)
		if err != nil || len(fields) < 2 || fields[0] != "lease" {
			c.t.Errorf("lease grant through %s (%s): %v %s", c.members[i].name, role, err, out)
			continue
		}
		start := time.Now()
		out, err = docker(c.ctx, c.t, append(slices.Clone(ctl), "lease", "keep-alive", "--once", fields[1])...)
		took := time.Since(start).Round(time.Millisecond)
		// etcdctl's keep-alive --once is not bounded by --command-timeout:
		// the bound is checked here, with 2 s for the container's start.
		if err != nil || !strings.Contains(out, "keepalived") || took > cmp.Or(c.renewTimeout, 3*time.Second)+2*time.Second {
			c.t.Errorf("a lease keep-alive through %s (%s) was not answered within the renew timeout %s while %s was cut off (%v, with the container's start): %v %s",
				c.members[i].name, role, timeout, cut.name, took, err, lastLine(out))
			continue
		}
		c.logf("lease keep-alive through %s (%s) answered %v after the container's start", c.members[i].name, role, took)
	}
}

// moveLeader makes the member called name the leader (etcdctl
// move-leader, with the auth set-up Job's root certificate), unless it
// leads already, and waits until it says it does.
func (c *cluster) moveLeader(name string) {
	c.t.Helper()
	to := slices.IndexFunc(c.members, func(m etcdMember) bool { return m.name == name })
	if to < 0 {
		c.t.Fatalf("leader to move to: %q: no such member", name)
	}
	if c.leader() == to {
		return
	}
	args, env := c.jobRun(c.storeNet)
	ctl := append(args, c.etcdctlImage(), "--cacert", "/etc/zlink/etcd-root/ca.crt",
		"--cert", "/etc/zlink/etcd-root/tls.crt", "--key", "/etc/zlink/etcd-root/tls.key")
	endpoints := strings.Split(env["ZLINK_ETCD_ENDPOINTS"], ",")
	out := mustDocker(c.ctx, c.t, append(slices.Clone(ctl), "--endpoints", c.memberEndpoint(endpoints, name), "endpoint", "status", "-w", "json")...)
	var status []struct {
		Status struct {
			Header struct {
				MemberID uint64 `json:"member_id"`
			} `json:"header"`
		}
	}
	if err := json.Unmarshal([]byte(out), &status); err != nil || len(status) != 1 {
		c.t.Fatalf("etcdctl endpoint status of %s: %v: %s", name, err, out)
	}
	out = mustDocker(c.ctx, c.t, append(slices.Clone(ctl), "--endpoints", strings.Join(endpoints, ","),
		"move-leader", strconv.FormatUint(status[0].Status.Header.MemberID, 16))...)
	c.logf("moved the leadership to %s: %s", name, lastLine(out))
	deadline := time.Now().Add(30 * time.Second)
	for c.leader() != to {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s does not lead 30 s after move-leader", name)
		}
		time.Sleep(pollEvery)
	}
	// The nodes ride out the leader change before the fault.
	c.waitConverged(c.nodes, time.Now(), "after the leader move")
}

// refuseMember makes every node's connections to the client port of the
// member called name refused (on) or accepted again (off): an iptables
// rule in each node's network namespace, which answers with a TCP reset.
// When on, it waits until the mesh converged (the nodes' keep-alive
// streams then run on the other members).
func (c *cluster) refuseMember(name string, on bool) {
	c.t.Helper()
	i := slices.IndexFunc(c.members, func(m etcdMember) bool { return m.name == name })
	if i < 0 {
		c.t.Fatalf("ZLINK_CLUSTER_PARTITION_UNREACHABLE=%q: no such member", name)
	}
	op := "-I"
	if !on {
		op = "-D"
	}
	for _, n := range c.nodes {
		pid := mustDocker(c.ctx, c.t, "inspect", "-f", "{{.State.Pid}}", n.container)
		out, err := exec.CommandContext(c.ctx, "nsenter", "-t", pid, "-n", "iptables", op, "OUTPUT", "-d", c.members[i].ip,
			"-p", "tcp", "--dport", "2379", "-j", "REJECT", "--reject-with", "tcp-reset").CombinedOutput()
		if err != nil {
			c.t.Fatalf("iptables in %s's network namespace: %v: %s", n.name, err, out)
		}
	}
	if on {
		c.logf("the nodes' connections to %s are refused", name)
		c.waitConverged(c.nodes, time.Now(), "after refusing "+name)
	} else {
		c.logf("the nodes' connections to %s are accepted again", name)
	}
}

// saveLogs writes the full logs of every container to dir, one file each.
func (c *cluster) saveLogs(dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Errorf("ZLINK_CLUSTER_LOGS: %v", err)
		return
	}
	var names []string
	for _, m := range c.members {
		names = append(names, m.container)
	}
	for _, n := range c.nodes {
		names = append(names, n.container)
	}
	for _, name := range names {
		logs, _ := docker(c.ctx, c.t, "logs", "-t", name)
		if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(logs+"\n"), 0o644); err != nil {
			c.t.Errorf("ZLINK_CLUSTER_LOGS: %v", err)
		}
	}
	c.logf("containers' logs written to %s", dir)
}

// fenceCheck is how one incarnation of a node cut off from etcd ended.
type fenceCheck struct {
	node        *meshNode
	incarnation int64
	// untrustedSeen and droppedSeen are when this test first saw the node
	// untrusted, and its links gone on both sides.
	untrustedSeen, droppedSeen time.Time
}

// observeFences polls the nodes of checks until each reported its
// incarnation fenced and its links are gone on both sides, then checks
// the timing against each node's own timestamps: fenced no later than
// fenceSlack after its trust deadline, and every link gone before its
// lease could end in etcd (last confirmed renewal + TTL). It returns the
// latest fence after a deadline and the smallest slack before a lease's
// end.
func (c *cluster) observeFences(checks []*fenceCheck, within time.Duration) (late, slack time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	slack = time.Duration(math.MaxInt64)
	for {
		polled := time.Now()
		sts := c.states(c.nodes)
		done := true
		for _, f := range checks {
			st := sts[f.node.name]
			if !st.ok {
				c.fatalf("%s: no /debug/state while cut off from etcd", f.node.name)
			}
			if f.untrustedSeen.IsZero() && !st.Trusted {
				f.untrustedSeen = polled
				if st.ready || !strings.Contains(st.readyz, "[-]session failed") {
					c.t.Errorf("%s: untrusted but /readyz says: %s", f.node.name, st.readyz)
				}
			}
			if r := fenceOf(st, f.incarnation); r != nil && st.Incarnation != nil && st.Incarnation.Number > f.incarnation {
				// The incarnation was fenced and the node joined again
				// before a poll saw it without links (a session lost in
				// the fault's lead-in): the links now are the next
				// incarnation's; what the node recorded is the evidence.
				if f.untrustedSeen.IsZero() {
					f.untrustedSeen = r.FencedAt
				}
				if f.droppedSeen.IsZero() {
					f.droppedSeen = r.InboundDroppedAt
				}
			}
			linked := len(st.Links) > 0
			for _, o := range c.nodes {
				if slices.Contains(sts[o.name].Peers, f.node.name) {
					linked = true
				}
			}
			if f.droppedSeen.IsZero() && !st.Trusted && !linked {
				f.droppedSeen = polled
			}
			if f.untrustedSeen.IsZero() || f.droppedSeen.IsZero() || fenceOf(st, f.incarnation) == nil {
				done = false
			}
		}
		if done {
			for _, f := range checks {
				st := c.state(f.node)
				r := fenceOf(st, f.incarnation)
				lease := r.LastRenewal.Add(c.ttl)
				switch {
				case (r.TrustedUntil.Sub(r.LastRenewal) - (c.ttl - c.margin)).Abs() > stampSlack:
					c.t.Errorf("%s: trusted until %v after its last renewal, want TTL − margin = %v", f.node.name, r.TrustedUntil.Sub(r.LastRenewal), c.ttl-c.margin)
				case r.FencedAt.Sub(r.TrustedUntil) > fenceSlack:
					c.t.Errorf("%s: fenced %v after its trust deadline (more than %v)", f.node.name, r.FencedAt.Sub(r.TrustedUntil), fenceSlack)
				case !r.FencedAt.Before(lease) || !r.InboundDroppedAt.Before(lease) || !f.droppedSeen.Before(lease):
					c.t.Errorf("%s: still acting when its lease could have ended (%s): fenced %s, inbound dropped %s, links gone (seen) %s",
						f.node.name, lease.Format(time.StampMilli), r.FencedAt.Format(time.StampMilli), r.InboundDroppedAt.Format(time.StampMilli),
						f.droppedSeen.Format(time.StampMilli))
				}
				late = max(late, r.FencedAt.Sub(r.TrustedUntil))
				slack = min(slack, lease.Sub(f.droppedSeen))
				c.logf("%s: last renewal %s, trust deadline +%v, lease lost +%v, inbound dropped +%v, fenced +%v (%+v after the deadline); this test saw it untrusted +%v, every link gone +%v, %v before its lease could end",
					f.node.name, r.LastRenewal.Format(time.StampMilli), r.TrustedUntil.Sub(r.LastRenewal), r.LeaseLostAt.Sub(r.LastRenewal),
					r.InboundDroppedAt.Sub(r.LastRenewal).Round(time.Millisecond), r.FencedAt.Sub(r.LastRenewal).Round(time.Millisecond),
					r.FencedAt.Sub(r.TrustedUntil).Round(time.Millisecond), f.untrustedSeen.Sub(r.LastRenewal).Round(time.Millisecond),
					f.droppedSeen.Sub(r.LastRenewal).Round(time.Millisecond), lease.Sub(f.droppedSeen).Round(time.Millisecond))
			}
			return late, slack
		}
		if time.Now().After(deadline) {
			c.fatalf("nodes cut off from etcd did not fence within %v", within)
		}
		time.Sleep(time.Until(polled.Add(pollEvery / 2)))
	}
}

// fenceOf is the node's fence record of incarnation inc, once it reported
// it fenced.
func fenceOf(st nodeState, inc int64) *statedoc.Fence {
	for i := range st.Fences {
		if st.Fences[i].Incarnation == inc && !st.Fences[i].FencedAt.IsZero() {
			return &st.Fences[i]
		}
	}
	return nil
}

// others is live without n.
func others(live []*meshNode, n *meshNode) []*meshNode {
	return slices.DeleteFunc(slices.Clone(live), func(o *meshNode) bool { return o == n })
}

// nodePartition cuts one mesh node off etcd's network for TTL + 5 s: it
// must fence at its trust deadline and its peers must drop it; the store
// must lose its lease; reconnected, it rejoins under a new lease.
func (c *cluster) nodePartition(round int) {
	n := c.nodes[(2*round-1)%len(c.nodes)]
	before := c.incarnations(c.nodes)
	t0 := time.Now()
	mustDocker(c.ctx, c.t, "network", "disconnect", c.storeNet, n.container)
	c.logf("disconnected %s from etcd's network (its incarnation %d)", n.name, before[n.name])
	late, slack := c.observeFences([]*fenceCheck{{node: n, incarnation: before[n.name]}}, c.ttl+30*time.Second)
	// The others converge among themselves once its lease ended.
	c.watch(others(c.nodes, n), t0, "node-partition: the others", nil)
	for time.Since(t0) < c.ttl+5*time.Second {
		time.Sleep(pollEvery)
	}
	snap := c.inspect()
	for _, l := range snap.OwnerLeases {
		if l.OwnerID == n.name {
			c.t.Errorf("%s's owner lease %d is still in etcd %v after it was cut off (TTL %v)", n.name, l.Generation, time.Since(t0), c.ttl)
		}
	}
	t1 := time.Now()
	mustDocker(c.ctx, c.t, "network", "connect", "--ip", n.storeIP, c.storeNet, n.container)
	at := c.waitConverged(c.nodes, t1, "node-partition: after the reconnect")
	if got := c.incarnations([]*meshNode{n})[n.name]; got <= before[n.name] {
		c.t.Errorf("%s did not rejoin: incarnation %d, before the partition %d", n.name, got, before[n.name])
	}
	c.record(sample{Round: round, Fault: "node-partition", Target: n.name, Converged: at.Sub(t1), Disrupted: t1.Sub(t0),
		Fenced: c.fencedSince(before), FenceLate: late, DropSlack: slack})
}

// roll stops each mesh node with SIGTERM (a graceful leave within the
// Deployment's terminationGracePeriodSeconds, exit 0), checks that the
// others converge without it and that the store holds nothing of it, and
// starts it again.
func (c *cluster) roll(round int) {
	grace := *c.deploy.Spec.Template.Spec.TerminationGracePeriodSeconds
	for _, n := range c.nodes {
		t0 := time.Now()
		mustDocker(c.ctx, c.t, "stop", "-t", fmt.Sprint(grace), n.container)
		stop := time.Since(t0)
		if code := mustDocker(c.ctx, c.t, "inspect", "-f", "{{.State.ExitCode}}", n.container); code != "0" || stop >= time.Duration(grace)*time.Second {
			logs, _ := docker(c.ctx, c.t, "logs", "--tail", "20", n.container)
			c.fatalf("%s: SIGTERM to exit %v (budget %ds), exit status %s; logs:\n%s", n.name, stop, grace, code, logs)
		}
		rest := others(c.nodes, n)
		gone := c.waitConverged(rest, t0, "roll: the others")
		snap := c.inspect()
		for _, d := range snap.MeshNodes {
			if d.Value.OwnerID == n.name {
				c.t.Errorf("%s left, and its descriptor is still in the store", n.name)
			}
		}
		for _, l := range snap.OwnerLeases {
			if l.OwnerID == n.name {
				c.t.Errorf("%s left, and its owner lease %d is still in etcd", n.name, l.Generation)
			}
		}
		t1 := time.Now()
		mustDocker(c.ctx, c.t, "start", n.container)
		at := c.waitConverged(c.nodes, t1, "roll: after the start")
		c.record(sample{Round: round, Fault: "roll", Target: n.name, Disrupted: gone.Sub(t0), Converged: at.Sub(t1), Stop: stop})
	}
}

// quorumLoss stops the leader and another member for the nodes' trust
// window + 5 s: every node must fence at its trust deadline; restarted,
// the mesh converges again under new leases.
func (c *cluster) quorumLoss(round int) {
	before := c.incarnations(c.nodes)
	l := c.leader()
	down := []etcdMember{c.members[l], c.members[(l+1)%len(c.members)]}
	t0 := time.Now()
	for _, m := range down {
		mustDocker(c.ctx, c.t, "stop", m.container)
	}
	c.logf("stopped %s (the leader) and %s: no quorum", down[0].name, down[1].name)
	var checks []*fenceCheck
	for _, n := range c.nodes {
		checks = append(checks, &fenceCheck{node: n, incarnation: before[n.name]})
	}
	late, slack := c.observeFences(checks, c.ttl+30*time.Second)
	for time.Since(t0) < c.ttl-c.margin+5*time.Second {
		time.Sleep(pollEvery)
	}
	t1 := time.Now()
	for _, m := range down {
		mustDocker(c.ctx, c.t, "start", m.container)
	}
	for _, m := range down {
		c.waitReady(m, 60*time.Second)
	}
	at := c.waitConverged(c.nodes, t1, "quorum-loss: after the restart")
	c.record(sample{Round: round, Fault: "quorum-loss", Target: down[0].name + "+" + down[1].name, Disrupted: t1.Sub(t0),
		Converged: at.Sub(t1), Fenced: c.fencedSince(before), FenceLate: late, DropSlack: slack})
}

// snapshot is what this test reads of `zlinketcd inspect --output json`.
type snapshot struct {
	Revision  int64 `json:"revision"`
	MeshNodes []struct {
		OwnerLive bool `json:"ownerLive"`
		Value     struct {
			MeshName            string `json:"meshName"`
			OwnerID             string `json:"ownerId"`
			LifecycleGeneration int64  `json:"lifecycleGeneration"`
			LeaseGeneration     int64  `json:"leaseGeneration"`
			Endpoint            string `json:"endpoint"`
		} `json:"value"`
	} `json:"meshNodes"`
	OwnerLeases []struct {
		OwnerID    string `json:"ownerId"`
		Generation int64  `json:"generation"`
	} `json:"ownerLeases"`
	Authorities []struct {
		Key              string `json:"key"`
		StoreVersion     string `json:"storeVersion"`
		ObjectGeneration int64  `json:"objectGeneration"`
	} `json:"authorities"`
	Actors []struct {
		Generation int64 `json:"generation"`
		Value      struct {
			MeshName string `json:"meshName"`
			ActorID  string `json:"actorId"`
		} `json:"value"`
	} `json:"actors"`
}

// inspect runs `zlinketcd inspect --output json` as a container on etcd's
// network, with the GC CronJob's certificate and connection flags.
func (c *cluster) inspect() snapshot {
	c.t.Helper()
	ctr := c.cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	args, env := c.gcRun(c.storeNet)
	args = append(args, ctr.Image, "inspect", "--output=json")
	for _, a := range containerArgs(ctr, env) {
		if strings.HasPrefix(a, "--") && a != "--apply" {
			args = append(args, a)
		}
	}
	args = append(args, "mesh-nodes", "leases", "authorities", "actors")
	var snap snapshot
	var out string
	for attempt := 1; ; attempt++ {
		var err error
		if out, err = dockerStdout(c, args...); err == nil {
			break
		}
		if attempt == 3 {
			c.fatalf("zlinketcd inspect: %v", err)
		}
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		c.fatalf("zlinketcd inspect --output json: %v: %.300s", err, out)
	}
	return snap
}

// dockerStdout runs the docker CLI and returns its standard output only.
func dockerStdout(c *cluster, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Minute)
	defer cancel()
	var stdout, stderr strings.Builder
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// acked is what the nodes logged as acknowledged by the store, and their
// graceful leaves.
type acked struct {
	authorities map[string]ackedAuthority // by authority key
	rows        map[string]ackedRow       // by actor id
	// leaves are each node's leaves that removed its rows: when, and the
	// lease generation whose authority records went with them.
	leaves map[string][]leave
}

type ackedAuthority struct {
	node, storeVersion string
	objectGeneration   int64
	leaseGeneration    int64
	at                 time.Time
}

type ackedRow struct {
	node          string
	rowGeneration int64
	at            time.Time
}

type leave struct {
	at              time.Time
	leaseGeneration int64
}

// logLine is a JSON log line of a node (the fields this test reads).
type logLine struct {
	Time             time.Time `json:"time"`
	Msg              string    `json:"msg"`
	Actor            string    `json:"actor"`
	AuthorityKey     string    `json:"authorityKey"`
	StoreVersion     string    `json:"storeVersion"`
	ObjectGeneration int64     `json:"objectGeneration"`
	LeaseGeneration  int64     `json:"leaseGeneration"`
	RowGeneration    int64     `json:"rowGeneration"`
	Generation       int64     `json:"generation"`
}

// acks reads every node's log (all its runs: the containers are restarted,
// not replaced).
func (c *cluster) acks() acked {
	c.t.Helper()
	a := acked{authorities: map[string]ackedAuthority{}, rows: map[string]ackedRow{}, leaves: map[string][]leave{}}
	for _, n := range c.nodes {
		out := mustDocker(c.ctx, c.t, "logs", n.container)
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l logLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			switch l.Msg {
			case "actor created":
				a.authorities[l.AuthorityKey] = ackedAuthority{node: n.name, storeVersion: l.StoreVersion,
					objectGeneration: l.ObjectGeneration, leaseGeneration: l.LeaseGeneration, at: l.Time}
			case "actor row stored":
				a.rows[l.Actor] = ackedRow{node: n.name, rowGeneration: l.RowGeneration, at: l.Time}
			case "meshnode: left": // the library's line: the owner's rows were removed
				a.leaves[n.name] = append(a.leaves[n.name], leave{at: l.Time, leaseGeneration: l.Generation})
			}
		}
	}
	return a
}

// checkStore checks the store against the live nodes and their
// acknowledged writes: exactly the live nodes' descriptors and owner
// leases, at their current generations; every acknowledged authority
// record and actor row present as acknowledged, except those a graceful
// leave of their node removed since (its rows of any lease, and the
// authority records of the lease it left with), which must be absent.
func (c *cluster) checkStore(live []*meshNode, after string) {
	c.t.Helper()
	a := c.acks() // read before the snapshot: everything in them was acknowledged before it
	snap := c.inspect()
	sts := c.states(live)
	descriptors := map[string]int64{}
	for _, d := range snap.MeshNodes {
		if d.Value.MeshName == "example" {
			descriptors[d.Value.OwnerID] = d.Value.LifecycleGeneration
			if !d.OwnerLive {
				c.t.Errorf("after %s: the descriptor of %s has no live owner", after, d.Value.OwnerID)
			}
		}
	}
	leases := map[string]int64{}
	for _, l := range snap.OwnerLeases {
		leases[l.OwnerID] = l.Generation
	}
	for _, n := range live {
		st := sts[n.name]
		if st.Incarnation == nil {
			c.t.Errorf("after %s: %s has no incarnation", after, n.name)
			continue
		}
		if got := descriptors[n.name]; got != st.Incarnation.LifecycleGeneration {
			c.t.Errorf("after %s: the store's descriptor of %s has lifecycle generation %d, the node %d", after, n.name, got, st.Incarnation.LifecycleGeneration)
		}
		if got := leases[n.name]; got != st.Incarnation.LeaseGeneration {
			c.t.Errorf("after %s: the store's owner lease of %s has generation %d, the node %d", after, n.name, got, st.Incarnation.LeaseGeneration)
		}
		delete(descriptors, n.name)
	}
	if len(descriptors) > 0 {
		c.t.Errorf("after %s: descriptors of nodes that are not live: %v", after, descriptors)
	}

	authorities := map[string]int{}
	for i, r := range snap.Authorities {
		authorities[r.Key] = i
	}
	rows := map[string]int64{}
	for _, r := range snap.Actors {
		if r.Value.MeshName == "example" {
			rows[r.Value.ActorID] = r.Generation
		}
	}
	leftAfter := func(node string, at time.Time, lease int64) bool {
		for _, l := range a.leaves[node] {
			if l.at.After(at) && (lease == 0 || l.leaseGeneration == lease) {
				return true
			}
		}
		return false
	}
	var present, removed, lost int
	for key, w := range a.authorities {
		i, ok := authorities[key]
		switch {
		case leftAfter(w.node, w.at, w.leaseGeneration):
			if ok {
				c.t.Errorf("after %s: authority %s of %s is still there after %s left with lease %d", after, key, w.node, w.node, w.leaseGeneration)
			}
			removed++
		case !ok:
			c.t.Errorf("after %s: acknowledged authority %s of %s (lease %d, %s) is missing", after, key, w.node, w.leaseGeneration, w.at.Format(time.StampMilli))
			lost++
		case snap.Authorities[i].StoreVersion != w.storeVersion || snap.Authorities[i].ObjectGeneration != w.objectGeneration:
			c.t.Errorf("after %s: authority %s is at version %s, object generation %d; acknowledged %s, %d", after, key,
				snap.Authorities[i].StoreVersion, snap.Authorities[i].ObjectGeneration, w.storeVersion, w.objectGeneration)
			lost++
		default:
			present++
		}
	}
	for actor, w := range a.rows {
		gen, ok := rows[actor]
		switch {
		case leftAfter(w.node, w.at, 0):
			if ok {
				c.t.Errorf("after %s: actor row %s is still there after %s left", after, actor, w.node)
			}
			removed++
		case !ok || gen != w.rowGeneration:
			c.t.Errorf("after %s: acknowledged actor row %s of %s (generation %d, %s) is missing or changed (generation %d)", after, actor, w.node,
				w.rowGeneration, w.at.Format(time.StampMilli), gen)
			lost++
		default:
			present++
		}
	}
	c.logf("store after %s (revision %d): %d descriptors and leases as the nodes say; acknowledged writes: %d authority records and %d actor rows, %d present, %d removed by graceful leaves, %d lost",
		after, snap.Revision, len(live), len(a.authorities), len(a.rows), present, removed, lost)
	if len(a.authorities) == 0 || len(a.rows) == 0 {
		c.t.Errorf("after %s: no acknowledged write in the nodes' logs", after)
	}
}

// report logs the figures per fault: count, p50 and p99 of the disruption
// and of the convergence after the heal, incarnations fenced.
func (c *cluster) report() {
	c.t.Helper()
	faults := []string{}
	by := map[string][]sample{}
	for _, s := range c.samples {
		if _, ok := by[s.Fault]; !ok {
			faults = append(faults, s.Fault)
		}
		by[s.Fault] = append(by[s.Fault], s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| fault | samples | disrupted p50 | p99 | converged after the heal p50 | p99 | incarnations fenced | converged while the member was out |\n|---|---|---|---|---|---|---|---|\n")
	for _, f := range faults {
		ss := by[f]
		var dis, conv []time.Duration
		fenced, settled := 0, 0
		for _, s := range ss {
			dis, conv, fenced = append(dis, s.Disrupted), append(conv, s.Converged), fenced+s.Fenced
			if s.SettledWhileDown {
				settled++
			}
		}
		out := "–"
		if f == "leader-kill" || f == "member-partition" {
			out = fmt.Sprintf("%d of %d", settled, len(ss))
		}
		fmt.Fprintf(&b, "| %s | %d | %v | %v | %v | %v | %d | %s |\n", f, len(ss), pct(dis, 50), pct(dis, 99), pct(conv, 50), pct(conv, 99), fenced, out)
	}
	c.logf("figures (run %s, %v):\n%s", c.run, time.Since(c.began).Round(time.Second), b.String())
}

// pct is the p-th percentile (nearest rank) of ds, rounded to ms.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := max(int(math.Ceil(float64(p)/100*float64(len(s))))-1, 0)
	return s[i].Round(time.Millisecond)
}

// dumpLogs prints the last lines of every container's log, and the nodes'
// states.
func (c *cluster) dumpLogs() {
	c.dumped = true
	for _, n := range c.nodes {
		_, body := httpGet(n.url + "/debug/state")
		c.t.Logf("--- %s /debug/state:\n%s", n.name, body)
	}
	for _, m := range c.members {
		logs, _ := docker(c.ctx, c.t, "logs", "--tail", "15", m.container)
		c.t.Logf("--- %s:\n%s", m.name, logs)
	}
	for _, n := range c.nodes {
		logs, _ := docker(c.ctx, c.t, "logs", "--tail", "60", n.container)
		c.t.Logf("--- %s:\n%s", n.name, logs)
	}
}
