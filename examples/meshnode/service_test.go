package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/examples/meshnode/config"
	"github.com/zlink-systems/zlink-etcd/examples/meshnode/statedoc"
	"github.com/zlink-systems/zlink-etcd/internal/syncio"
	"github.com/zlink-systems/zlink-etcd/location"
)

// testMesh is a prefix of the shared member where test nodes run.
type testMesh struct {
	t      *testing.T
	prefix string
	store  *etcdstore.Store
}

func newTestMesh(t *testing.T) *testMesh {
	t.Helper()
	m := &testMesh{t: t, prefix: etcdtest.UniquePrefix(t)}
	store, err := etcdstore.New(etcdtest.Connect(t), etcdstore.Options{Root: m.prefix})
	if err != nil {
		t.Fatal(err)
	}
	m.store = store
	return m
}

// nodeArgs are the arguments of node id: fast timing (a lease trusted for
// 2 s after each renewal), JSON logs, one actor every 50 ms, and two free
// loopback ports.
func (m *testMesh) nodeArgs(id string) (args []string, metrics string) {
	m.t.Helper()
	ports, err := etcdtest.FreePorts(2)
	if err != nil {
		m.t.Fatal(err)
	}
	mesh := "127.0.0.1:" + strconv.Itoa(ports[0])
	metrics = "127.0.0.1:" + strconv.Itoa(ports[1])
	return []string{
		"--endpoints=" + os.Getenv(etcdtest.EnvSharedEndpoints), "--prefix=" + m.prefix, "--mesh=m", "--node-id=" + id,
		"--listen=" + mesh, "--advertise=" + mesh, "--metrics-addr=" + metrics,
		"--lease-ttl=3s", "--renew-interval=500ms", "--renew-timeout=500ms", "--fencing-margin=1s", "--poll-interval=100ms",
		"--actor-interval=50ms", "--log-format=json", "--shutdown-grace=10s",
	}, "http://" + metrics
}

// testNodeProc is a node run in process by run.
type testNodeProc struct {
	id   string
	url  string
	logs *syncio.Buffer
	stop context.CancelFunc
	done chan error
}

func (m *testMesh) start(id string) *testNodeProc {
	m.t.Helper()
	args, url := m.nodeArgs(id)
	cfg, err := config.Parse(args, func(string) string { return "" })
	if err != nil {
		m.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &testNodeProc{id: id, url: url, logs: &syncio.Buffer{}, stop: cancel, done: make(chan error, 1)}
	go func() { p.done <- run(ctx, cfg, p.logs) }()
	m.t.Cleanup(func() {
		if p.stop != nil {
			p.shutdown(m.t)
		}
	})
	return p
}

// shutdown asks the node to leave (as SIGTERM does) and waits for run.
func (p *testNodeProc) shutdown(t *testing.T) {
	t.Helper()
	p.stop()
	p.stop = nil
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("%s: run: %v; logs:\n%s", p.id, err, p.logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: run did not return 30 s after its context ended", p.id)
	}
}

// get answers an HTTP GET of path.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// state reads /debug/state.
func (p *testNodeProc) state(t *testing.T) statedoc.State {
	t.Helper()
	var d statedoc.State
	code, body := get(t, p.url+"/debug/state")
	if code != http.StatusOK {
		return d
	}
	d.Peers = nil
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("%s: /debug/state: %v: %s", p.id, err, body)
	}
	return d
}

// peers are the nodes p has an open link with.
func (p *testNodeProc) peers(t *testing.T) string {
	return strings.Join(p.state(t).Peers, ",")
}

// metric returns the value of the sample whose line starts with name
// (labels included), or -1.
func metric(body, name string) float64 {
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

func TestServiceMesh(t *testing.T) {
	m := newTestMesh(t)
	a, b := m.start("a"), m.start("b")
	waitFor(t, "a and b connected to each other", func() bool { return a.peers(t) == "b" && b.peers(t) == "a" })
	for _, p := range []*testNodeProc{a, b} {
		if code, body := get(t, p.url+"/readyz"); code != http.StatusOK {
			t.Errorf("%s: /readyz %d %s", p.id, code, body)
		}
		if code, body := get(t, p.url+"/livez"); code != http.StatusOK {
			t.Errorf("%s: /livez %d %s", p.id, code, body)
		}
	}
	// a dials b (the lower routing id dials); both count the link.
	_, metrics := get(t, a.url+"/metrics")
	for name, want := range map[string]float64{
		`zlink_example_mesh_links{direction="out"}`: 1, `zlink_example_mesh_links{direction="in"}`: 0,
		"zlink_sessions_running": 1, "zlink_sessions_untrusted": 0, "zlink_example_node_incarnation": 1,
		"zlink_autoconnect_desired_targets": 1, "zlink_autoconnect_connected_targets": 1,
	} {
		if got := metric(metrics, name); got != want {
			t.Errorf("a: %s = %v, want %v", name, got, want)
		}
	}
	_, metrics = get(t, b.url+"/metrics")
	if got := metric(metrics, `zlink_example_mesh_links{direction="in"}`); got != 1 {
		t.Errorf(`b: zlink_example_mesh_links{direction="in"} = %v, want 1`, got)
	}
	waitFor(t, "a created actors", func() bool { d := a.state(t); return d.Actors != nil && d.Actors.RowStored > 0 })

	// a's lease ends behind its back: a fences (the application is told,
	// every connection drops, b's included) and rejoins.
	ctx := context.Background()
	if err := m.store.ExpireOwnerLease(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a rejoined and both reconnected", func() bool {
		d := a.state(t)
		return d.Incarnation != nil && d.Incarnation.Number == 2 && d.Trusted && a.peers(t) == "b" && b.peers(t) == "a"
	})
	d := a.state(t)
	if len(d.Fences) != 1 {
		t.Fatalf("a's fences: %+v, want one", d.Fences)
	}
	f := d.Fences[0]
	if f.Incarnation != 1 || f.FencedAt.IsZero() || f.InboundDroppedAt.IsZero() || f.FencedAt.Before(f.LeaseLostAt) ||
		!strings.Contains(f.Cause, "lease") {
		t.Errorf("a's fence record: %+v", f)
	}
	if d.LeaseLosses != 1 {
		t.Errorf("a: leaseLosses %d, want 1", d.LeaseLosses)
	}
	if !strings.Contains(b.logs.String(), `"msg":"peer connection lost"`) && !strings.Contains(b.logs.String(), `"msg":"peer disconnected"`) {
		t.Errorf("b never logged the end of a's first connection:\n%s", b.logs)
	}

	// b leaves (as on SIGTERM): its rows and lease are gone, a drops it.
	b.shutdown(t)
	if !strings.Contains(b.logs.String(), `"msg":"left the mesh"`) {
		t.Errorf("b did not log its leave:\n%s", b.logs)
	}
	waitFor(t, "a dropped b", func() bool { return a.peers(t) == "" })
	m.requireGone(t, "b")
}

// requireGone checks that nothing of owner id is left in the store: no
// lease, no descriptor, no actor row.
func (m *testMesh) requireGone(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	lease, err := m.store.ReadOwnerLease(ctx, id)
	if err != nil || lease.Kind != location.KindMissing {
		t.Errorf("%s's owner lease after its leave: %+v %v", id, lease, err)
	}
	nodes, err := m.store.ListMeshNodes(ctx, "m", location.PageRequest{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.OwnerID == id {
			t.Errorf("%s's descriptor is left: %+v", id, n)
		}
	}
	rid := location.RoutingID(id)
	actors, err := m.store.ListActors(ctx, location.ActorFilter{NodeRID: &rid}, location.PageRequest{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(actors.Items) != 0 {
		t.Errorf("%d actor rows of %s are left", len(actors.Items), id)
	}
}

// The real process: SIGTERM makes it leave and exit 0 within its grace.
func TestServiceLeavesOnSIGTERM(t *testing.T) {
	m := newTestMesh(t)
	args, url := m.nodeArgs("c")
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChildArgs+"="+string(raw))
	var stdout, stderr syncio.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	p := &testNodeProc{id: "c", url: url}
	waitFor(t, "the child is ready and created actors", func() bool {
		code, _ := get(t, url+"/readyz")
		d := p.state(t)
		return code == http.StatusOK && d.Actors != nil && d.Actors.RowStored > 0
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v; stderr:\n%s\nstdout:\n%s", err, &stderr, &stdout)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit 30 s after SIGTERM; stdout:\n%s", &stdout)
	}
	t.Logf("SIGTERM to exit 0: %v (the race detector adds a second at exit)", time.Since(sent).Round(time.Millisecond))
	for _, msg := range []string{`"msg":"shutting down: leaving the mesh"`, `"msg":"left the mesh"`} {
		if !strings.Contains(stdout.String(), msg) {
			t.Errorf("stdout lacks %s:\n%s", msg, &stdout)
		}
	}
	if stderr.String() != "" {
		t.Errorf("stderr of a clean exit: %q", &stderr)
	}
	m.requireGone(t, "c")
}

// Before etcd answers the process is alive but not ready, and says why.
func TestServiceNotReadyBeforeEtcd(t *testing.T) {
	m := newTestMesh(t)
	args, url := m.nodeArgs("d")
	ports, err := etcdtest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, fmt.Sprintf("--endpoints=http://127.0.0.1:%d", ports[0]), "--dial-timeout=100ms")
	cfg, err := config.Parse(args, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logs := &syncio.Buffer{}
	go func() { done <- run(ctx, cfg, logs) }()
	waitFor(t, "/livez answers", func() bool { code, _ := get(t, url+"/livez"); return code == http.StatusOK })
	code, body := get(t, url+"/readyz")
	for _, want := range []string{"[-]etcd failed: not connected to etcd yet", "[-]session failed: not joined yet", "[+]shutdown ok"} {
		if code != http.StatusServiceUnavailable || !strings.Contains(body, want) {
			t.Errorf("/readyz: %d, want 503 with %q:\n%s", code, want, body)
		}
	}
	if d := (&testNodeProc{url: url}).state(t); d.Phase != "starting" {
		t.Errorf("/debug/state phase %q, want starting", d.Phase)
	}
	waitFor(t, "a dial attempt was logged", func() bool { return strings.Contains(logs.String(), "etcd does not answer yet") })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after a stop before etcd answered: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}

func TestRunMainExitStatus(t *testing.T) {
	m := newTestMesh(t)
	args, _ := m.nodeArgs("e")
	busy, _ := m.nodeArgs("f")
	holder := m.start("g")
	waitFor(t, "g is ready", func() bool { code, _ := get(t, holder.url+"/readyz"); return code == http.StatusOK })
	tests := []struct {
		name   string
		args   []string
		status int
		stdout string // a fragment; "" for none
		stderr string // a fragment of the one line "meshnode: …"
	}{
		{"version", []string{"--version"}, exitOK, "meshnode (devel) (go", ""},
		{"help", []string{"--help"}, exitOK, "usage: meshnode [flags]", ""},
		{"an unknown flag", []string{"--nope"}, exitUsage, "", "meshnode: flag provided but not defined: -nope (meshnode --help lists the flags)"},
		{"check-config", append(slices.Clone(args), "--check-config"), exitOK, `"nodeId": "e"`, ""},
		{"check-config with a missing CA file", append(slices.Clone(args), "--check-config", "--cacert=/nonexistent/ca.crt"), exitUsage, "",
			"meshnode: etcd client: tls: CA file /nonexistent/ca.crt:"},
		{"check-config with a timing that cannot hold", append(slices.Clone(args), "--check-config", "--renew-interval=2s"), exitUsage, "",
			"session timing: RenewInterval + RenewTimeout (2s + 500ms = 2.5s) must be less than TTL − FencingMargin (3s − 1s = 2s)"},
		{"a missing certificate at run time", append(slices.Clone(args), "--cert=/nonexistent/tls.crt", "--key=/nonexistent/tls.key"), exitFailure, "",
			"meshnode: connect to etcd: "},
		{"a metrics port in use", append(slices.Clone(busy), "--metrics-addr="+strings.TrimPrefix(holder.url, "http://")), exitFailure, "",
			"meshnode: --metrics-addr: listen tcp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := runMain(tc.args, func(string) string { return "" }, &stdout, &stderr)
			if status != tc.status {
				t.Errorf("status %d, want %d; stderr %q", status, tc.status, &stderr)
			}
			if tc.stdout != "" && !strings.Contains(stdout.String(), tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, &stdout)
			}
			switch {
			case tc.stderr == "" && stderr.Len() != 0:
				t.Errorf("stderr %q, want nothing", &stderr)
			case tc.stderr != "" && (!strings.HasPrefix(stderr.String(), "meshnode: ") || !strings.Contains(stderr.String(), tc.stderr) ||
				strings.Count(stderr.String(), "\n") != 1):
				t.Errorf("stderr %q, want one line \"meshnode: …\" with %q", &stderr, tc.stderr)
			}
		})
	}
}
