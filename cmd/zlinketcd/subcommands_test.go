package main

import (
	"context"
	"encoding/json"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	etcdversion "go.etcd.io/etcd/api/v3/version"

	"github.com/zlink-systems/zlink-etcd/internal/meshbench"
	"github.com/zlink-systems/zlink-etcd/internal/scratch"
	"github.com/zlink-systems/zlink-etcd/location"
)

func TestGC(t *testing.T) {
	s, _, prefix, eps := sharedStore(t)
	populate(t, s)
	conn := []string{"--endpoints", eps, "--prefix", prefix}
	meshNodes := func() []string {
		t.Helper()
		page, err := s.ListMeshNodes(t.Context(), "play", location.PageRequest{PageSize: 10})
		require.NoError(t, err)
		var rids []string
		for _, d := range page.Items {
			rids = append(rids, string(d.RID))
		}
		return rids
	}

	// The dry run reports bob's descriptor and spot and removes nothing.
	r := runCmd(t, append([]string{"gc"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "gc: dry run: nothing is removed (--apply removes)")
	require.Contains(t, r.stdout, "gc: 2 owner(s) hold rows, 1 of them without a lease")
	require.Regexp(t, `bob\s+2\s+meshNodes 1, spots 1`, r.stdout)
	require.Contains(t, r.stdout, "SUMMARY (would remove")
	require.Regexp(t, `dead owners\s+1\s+bob`, r.stdout)
	require.Regexp(t, `location rows\s+2\n`, r.stdout)
	require.Contains(t, r.stdout, "run again with --apply")
	require.Equal(t, []string{"node-a", "node-b"}, meshNodes())

	// --apply removes them; alice keeps everything.
	r = runCmd(t, append([]string{"gc", "--apply"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "gc: applying")
	require.Contains(t, r.stdout, "SUMMARY (removed")
	require.Regexp(t, `location rows\s+2\n`, r.stdout)
	require.Equal(t, []string{"node-a"}, meshNodes())
	spot, err := s.ResolveSpot(t.Context(), location.SpotKey{MeshName: "play", SpotID: "spot-bob"})
	require.NoError(t, err)
	require.Nil(t, spot)
	spot, err = s.ResolveSpot(t.Context(), location.SpotKey{MeshName: "play", SpotID: "spot-alice"})
	require.NoError(t, err)
	require.NotNil(t, spot)

	// Nothing is left to collect.
	r = runCmd(t, append([]string{"gc"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "1 owner(s) hold rows, 0 of them without a lease")
	require.Regexp(t, `dead owners\s+0\s+none`, r.stdout)
	require.NotContains(t, r.stdout, "run again with --apply")
}

func TestCheck(t *testing.T) {
	_, c, prefix, eps := sharedStore(t)
	t.Run("passes", func(t *testing.T) {
		r := runCmd(t, "check", "--endpoints", eps, "--prefix", prefix, "--run", "^(LS-00[1-4]|AUTH-00[1-2])_", "-v")
		require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
		require.Contains(t, r.stdout, "check: 6 scenarios against "+eps+" under "+prefix+"zlinketcd-check-")
		require.Contains(t, r.stdout, "  PASS etcd/LS-001_")
		require.Regexp(t, `SECTION\s+PASS\s+FAIL\s+SKIP`, r.stdout)
		require.Regexp(t, `total \(etcd, [^)]*\)\s+6\s+0\s+0`, r.stdout)
		require.Contains(t, r.stdout, "check: PASS (6 passed, 0 skipped)")
		require.Zero(t, keyCount(t, c, prefix), "the scratch prefix is removed")
	})
	t.Run("random", func(t *testing.T) {
		r := runCmd(t, "check", "--endpoints", eps, "--prefix", prefix, "--run", "^LS-001_", "--random", "2")
		require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
		require.Regexp(t, `random etcd: 2 sequences, \d+ operations, .*, ok`, r.stdout)
		require.Zero(t, keyCount(t, c, prefix))
	})
	t.Run("no scenario", func(t *testing.T) {
		r := runCmd(t, "check", "--endpoints", eps, "--prefix", prefix, "--run", "^NOPE")
		requireOneLineError(t, r, exitUsage, `--run "^NOPE" matches no scenario`)
	})
}

func TestCheckExitStatus(t *testing.T) {
	// A failed scenario turns into a job failure (exit status 1).
	require.Equal(t, exitFailure, fail(&strings.Builder{}, "check", errString("conformance FAILED: 1 of 6 scenarios failed")))
	require.Equal(t, exitUsage, fail(&strings.Builder{}, "check", usageErrorf("bad")))
}

// errString is a plain error.
type errString string

// Error implements error.
func (e errString) Error() string { return string(e) }

func TestBench(t *testing.T) {
	_, c, prefix, eps := sharedStore(t)
	r := runCmd(t, "bench", "--endpoints", eps, "--prefix", prefix, "--total", "20", "--clients", "3", "--conns", "2", "--mesh-size", "5")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "3 clients over 2 connection(s), 20 requests per operation and system, rate unlimited, mesh of 5 descriptors")
	for _, op := range []string{"lease-renew", "lease-read", "actor-resolve", "actor-renew", "authority-cas", "mesh-list"} {
		require.Regexp(t, `\n  `+op+`\s+zlink\s+20\s+0\s+\d+`, r.stdout, op)
	}
	require.Len(t, regexp.MustCompile(`raw etcd\s+20\s+0\s`).FindAllString(r.stdout, -1), 6, r.stdout)
	require.Equal(t, 6, strings.Count(r.stdout, "zlink/raw"), r.stdout)
	require.Zero(t, keyCount(t, c, prefix), "the scratch prefix is removed")

	// A rate limit and a subset of the operations.
	r = runCmd(t, "bench", "--endpoints", eps, "--prefix", prefix, "--total", "10", "--clients", "2", "--rate", "500", "lease-read")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "rate 500 req/s")
	require.NotContains(t, r.stdout, "mesh-list ")
}

func TestDemo(t *testing.T) {
	_, c, prefix, eps := sharedStore(t)
	r := runCmd(t, "demo", "--endpoints", eps, "--prefix", prefix, "--nodes", "3", "--actors", "3", "--quick")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Empty(t, r.stderr)
	for _, stage := range []string{"join", "actors", "relocate", "crash", "adopt", "gc", "rejoin", "shutdown"} {
		require.Regexp(t, `\n    `+stage+`\s+ok\s`, r.stdout, stage)
	}
	require.Contains(t, r.stdout, "mesh: 3 of 3 links up")
	require.Contains(t, r.stdout, "node-2 crashes")
	require.Contains(t, r.stdout, "mesh: 1 of 1 links up")
	require.Contains(t, r.stdout, "player-1 moved node-1 → node-3")
	require.Contains(t, r.stdout, "player-2 moved node-2 → node-3")
	require.Contains(t, r.stdout, "1 dead owner (node-2), 2 rows removed")
	require.Contains(t, r.stdout, "node-2 back (lease gen ")
	require.Contains(t, r.stdout, "demo: every expected state was reached")
	require.Zero(t, keyCount(t, c, prefix), "the scratch prefix is removed")

	// --keep leaves the nodes' rows behind as a crash would: inspect shows
	// them, and once the leases ran out gc collects them.
	r = runCmd(t, "demo", "--endpoints", eps, "--prefix", prefix, "--nodes", "3", "--actors", "2", "--quick", "--keep", "--lease-ttl", "1s")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Regexp(t, `\n    leave\s+ok\s`, r.stdout)
	kept := regexp.MustCompile(`demo: keys kept under (\S+)\n`).FindStringSubmatch(r.stdout)
	require.Len(t, kept, 2, r.stdout)
	scratchPrefix := kept[1]
	require.Contains(t, r.stdout, "  inspect them:  zlinketcd inspect --endpoints "+eps+" --prefix "+scratchPrefix+"\n")
	gcLine := "zlinketcd gc --apply --endpoints " + eps + " --prefix " + scratchPrefix
	require.Contains(t, r.stdout, "  once the leases ran out (1s), remove them all: "+gcLine+"\n")

	r = runCmd(t, "inspect", "--endpoints", eps, "--prefix", scratchPrefix, "nodes", "actors", "authorities")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "MESH NODES (3)")
	require.Contains(t, r.stdout, "ACTORS (2)")
	require.Contains(t, r.stdout, "AUTHORITIES (2)")

	require.Eventually(t, func() bool {
		return keyCount(t, c, scratchPrefix+"owner/") == 0 && keyCount(t, c, scratchPrefix+"zlinketcd-run") == 0
	}, 10*time.Second, 50*time.Millisecond, "the kept leases and the marker run out")
	r = runCmd(t, strings.Fields(gcLine)[1:]...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `dead owners\s+3\s+node-1, node-2, node-3`, r.stdout)
	require.Regexp(t, `location rows\s+8\n`, r.stdout, "3 descriptors, 3 peer rows, 2 actors")
	// The store's collector keeps authority records and their bookkeeping
	// (ledgers, terminals, fences, stamps): the abandoned prefix goes whole.
	require.Regexp(t, regexp.QuoteMeta(scratchPrefix)+`\s+demo\s+\d+\s+abandoned: removed`, r.stdout)
	require.Regexp(t, `abandoned scratch prefixes\s+1\s+[1-9]\d* keys`, r.stdout)
	require.Zero(t, keyCount(t, c, scratchPrefix), "gc --apply after demo --keep leaves nothing")
}

// Every command that talks to a cluster needs endpoints: without them
// (or with an empty or unexpanded value, as a CronJob whose variable is
// unset passes) it fails before anything, never on a throw-away etcd. The
// embedded etcd is only for demo and --embedded.
func TestEndpointsRequired(t *testing.T) {
	for _, cmd := range [][]string{{"inspect"}, {"gc"}, {"gc", "--apply"}, {"check"}, {"bench"}, {"auth", "setup"}} {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			r := runCmd(t, cmd...)
			requireOneLineError(t, r, exitUsage, "zlinketcd: "+cmd[0]+": no etcd endpoints: give --endpoints or set ETCDCTL_ENDPOINTS")
			require.Empty(t, r.stdout)
			r = runCmd(t, append(cmd, "--endpoints=")...)
			requireOneLineError(t, r, exitUsage, `--endpoints "" names no endpoint`)
			r = runCmd(t, append(cmd, "--endpoints=$(ZLINK_ETCD_ENDPOINTS)")...)
			requireOneLineError(t, r, exitUsage, "the variable ZLINK_ETCD_ENDPOINTS is not set")
		})
	}
	t.Run("demo with an empty value", func(t *testing.T) {
		r := runCmd(t, "demo", "--endpoints=")
		requireOneLineError(t, r, exitUsage, `--endpoints "" names no endpoint`)
	})
	t.Run("explicit embedded", func(t *testing.T) {
		r := runCmd(t, "inspect", "leases", "--embedded")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Regexp(t, `^zlinketcd: --embedded: started an embedded single-member etcd at http://127\.0\.0\.1:\d+ \(temporary directory, removed on exit\)\n$`, r.stderr)
		require.Contains(t, r.stdout, "OWNER LEASES (0)")
	})
}

// The ETCDCTL_* variables stand in for the flags they copy; a flag wins.
func TestEtcdctlEnvironment(t *testing.T) {
	_, _, prefix, eps := sharedStore(t)
	r := runWith(t, runOptions{args: []string{"inspect", "leases", "--prefix", prefix},
		env: map[string]string{"ETCDCTL_ENDPOINTS": eps, "ETCDCTL_DIAL_TIMEOUT": "3s", "ETCDCTL_COMMAND_TIMEOUT": "4s"}})
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "OWNER LEASES (0)")

	bad := "http://" + closedPort(t)
	r = runWith(t, runOptions{args: []string{"inspect", "leases", "--prefix", prefix, "--endpoints", eps},
		env: map[string]string{"ETCDCTL_ENDPOINTS": bad}})
	require.Equal(t, exitOK, r.code, "the flag wins over the variable: %s", r.stderr)

	r = runWith(t, runOptions{args: []string{"inspect", "leases", "--prefix", prefix}, env: map[string]string{"ETCDCTL_ENDPOINTS": bad}})
	requireOneLineError(t, r, exitFailure, "cannot reach etcd at "+bad+": connection refused")
}

func TestVersion(t *testing.T) {
	r := runCmd(t, "version")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `^zlinketcd version: github\.com/zlink-systems/zlink-etcd \S.*\nGo version: go1\.\d+.*\netcd client version: v3\.\d+\.\d+ \(API 3\.\d+\)\n$`, r.stdout)
	require.Empty(t, r.stderr)

	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/m", Version: "v1.2.3"},
		Deps:     []*debug.Module{{Path: etcdClientModule, Version: "v3.7.3"}},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	var b strings.Builder
	writeVersion(&b, bi, "")
	require.Equal(t, "zlinketcd version: example.com/m v1.2.3 (commit abc123, modified)\nGo version: go1.26.8\netcd client version: v3.7.3 (API "+
		etcdversion.APIVersion+")\n", b.String())

	b.Reset()
	writeVersion(&b, bi, "v0.1.0-dev")
	require.Equal(t, "zlinketcd version: example.com/m v0.1.0-dev (commit abc123, modified)\nGo version: go1.26.8\netcd client version: v3.7.3 (API "+
		etcdversion.APIVersion+")\n", b.String())
}

// gc lists the scratch prefixes under --prefix and removes the abandoned
// ones (with --apply); a prefix whose run still holds its marker stays.
func TestGCScratchPrefixes(t *testing.T) {
	_, c, prefix, eps := sharedStore(t)
	inUse, err := scratch.New(prefix, "check")
	require.NoError(t, err)
	m, err := scratch.Claim(t.Context(), c, inUse, scratch.MarkerOptions{TTL: time.Minute,
		Value: scratch.MarkerValue{Command: "check", Holder: "host-a pid 7"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Release(context.Background()) })
	abandoned, err := scratch.New(prefix, "bench")
	require.NoError(t, err)
	for _, k := range []string{"store/a", "store/b", "raw/c"} {
		_, err := c.Put(t.Context(), abandoned+k, "v")
		require.NoError(t, err)
	}

	conn := []string{"--endpoints", eps, "--prefix", prefix}
	r := runCmd(t, append([]string{"gc"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "gc: 2 scratch prefix(es) at or under "+prefix+", 1 abandoned\n")
	require.Regexp(t, regexp.QuoteMeta(inUse)+`\s+check\s+1\s+in use by check \(host-a pid 7\) since \S+; marker lease \d+s left\n`, r.stdout)
	require.Regexp(t, regexp.QuoteMeta(abandoned)+`\s+bench\s+3\s+abandoned\n`, r.stdout)
	require.Regexp(t, `abandoned scratch prefixes\s+1\s+3 keys\n`, r.stdout)
	require.Contains(t, r.stdout, "run again with --apply")
	require.EqualValues(t, 3, keyCount(t, c, abandoned), "a dry run removes nothing")

	r = runCmd(t, append([]string{"gc", "--apply"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, regexp.QuoteMeta(abandoned)+`\s+bench\s+3\s+abandoned: removed\n`, r.stdout)
	require.Regexp(t, `abandoned scratch prefixes\s+1\s+3 keys\n`, r.stdout)
	require.Zero(t, keyCount(t, c, abandoned))
	require.EqualValues(t, 1, keyCount(t, c, inUse), "the prefix in use keeps its marker")

	require.NoError(t, m.Release(t.Context()))
	r = runCmd(t, append([]string{"gc", "--apply"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "gc: 0 scratch prefix(es) at or under "+prefix+", 0 abandoned\n", "a released marker takes its key along")
}

// Long work reports its progress on stderr (here on a fast schedule):
// the scenario counts of check, the set-up and the runs of bench.
func TestProgress(t *testing.T) {
	_, _, prefix, eps := sharedStore(t)
	fast := progressTiming{first: time.Millisecond, every: time.Millisecond}
	r := runWith(t, runOptions{args: []string{"check", "--endpoints", eps, "--prefix", prefix, "--run", "^LS-00[1-4]_"}, progress: fast})
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `(?m)^check: [1-4]/4 scenarios done \(\d passed, 0 failed, \d skipped\), in LS A\. Owner leases$`, r.stderr)
	require.NotContains(t, r.stdout, "scenarios done", "progress goes to stderr")

	r = runWith(t, runOptions{args: []string{"bench", "--endpoints", eps, "--prefix", prefix, "--clients", "2", "--mesh-size", "40", "--total", "50", "lease-read"},
		progress: fast})
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `(?m)^bench: set-up: \d+/40$`, r.stderr)
	require.Regexp(t, `(?m)^bench: lease-read \((zlink|raw etcd)\): \d+/50$`, r.stderr)

	// Work shorter than the first delay prints none.
	var p progressTiming
	require.Equal(t, progressTiming{first: time.Second, every: 5 * time.Second}, p.withDefaults())
}

func TestInspect(t *testing.T) {
	s, _, prefix, eps := sharedStore(t)
	populate(t, s)
	conn := []string{"--endpoints", eps, "--prefix", prefix}

	t.Run("tables", func(t *testing.T) {
		r := runCmd(t, append([]string{"inspect"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Empty(t, r.stderr)
		for _, title := range []string{"MESH NODES (2)", "CLIENT SERVERS (1)", "FANOUT PUBLISHERS (1)", "PEERS (1)", "SPOTS (2)",
			"ACTORS (1)", "ROUTES (1)", "OWNER LEASES (1)", "AUTHORITIES (1)", "OTHER KEYS (11)"} {
			require.Contains(t, r.stdout, "\n"+title+"\n", title)
		}
		require.Contains(t, r.stdout, "prefix "+prefix+" at revision ")
		// Mesh nodes: node-a live with one active actor slot, node-b's owner gone.
		require.Regexp(t, `play\s+node-a\s+1\s+1\s+tcp://node-a\.test\.invalid:7300\s+server\s+serving\s+1/0/10\s+0/0/10\s+alice\s+\d+\s+yes`, r.stdout)
		require.Regexp(t, `play\s+node-b\s+.*\sbob\s+\d+\s+no`, r.stdout)
		require.Regexp(t, `zla1:a:8:player-1\s+\d+\s+active\s+actor\s+player\s+play/node-a\s+1\s+alice`, r.stdout)
		require.Regexp(t, `alice\s+\d+\s+[0-9a-f]+\s+1m0s\s+\d+s\s`, r.stdout)
		require.Regexp(t, `actor-session\s+session-1\s+node-a\s+alice`, r.stdout)
	})

	t.Run("json", func(t *testing.T) {
		r := runCmd(t, append([]string{"inspect", "--output", "json"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var got struct {
			Prefix    string `json:"prefix"`
			Revision  int64  `json:"revision"`
			MeshNodes []struct {
				OwnerLive bool `json:"ownerLive"`
				Value     struct {
					RID string `json:"rid"`
				} `json:"value"`
			} `json:"meshNodes"`
			ClientServers    []json.RawMessage `json:"clientServers"`
			FanoutPublishers []json.RawMessage `json:"fanoutPublishers"`
			Peers            []json.RawMessage `json:"peers"`
			Spots            []json.RawMessage `json:"spots"`
			Actors           []json.RawMessage `json:"actors"`
			Routes           []json.RawMessage `json:"routes"`
			OwnerLeases      []struct {
				OwnerID          string `json:"ownerId"`
				Generation       int64  `json:"generation"`
				RemainingSeconds int64  `json:"remainingSeconds"`
			} `json:"ownerLeases"`
			Authorities []struct {
				Key        string `json:"key"`
				Allocation struct {
					State string `json:"state"`
				} `json:"allocation"`
			} `json:"authorities"`
			OtherKeys []struct {
				Part string `json:"part"`
				Keys int64  `json:"keys"`
			} `json:"otherKeys"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		require.Equal(t, prefix, got.Prefix)
		require.Positive(t, got.Revision)
		require.Len(t, got.MeshNodes, 2)
		require.Equal(t, "node-a", got.MeshNodes[0].Value.RID)
		require.True(t, got.MeshNodes[0].OwnerLive)
		require.False(t, got.MeshNodes[1].OwnerLive)
		require.Len(t, got.ClientServers, 1)
		require.Len(t, got.FanoutPublishers, 1)
		require.Len(t, got.Peers, 1)
		require.Len(t, got.Spots, 2)
		require.Len(t, got.Actors, 1)
		require.Len(t, got.Routes, 1)
		require.Len(t, got.OwnerLeases, 1)
		require.Equal(t, "alice", got.OwnerLeases[0].OwnerID)
		require.Positive(t, got.OwnerLeases[0].Generation)
		require.Greater(t, got.OwnerLeases[0].RemainingSeconds, int64(30))
		require.Len(t, got.Authorities, 1)
		require.Equal(t, "zla1:a:8:player-1", got.Authorities[0].Key)
		require.Equal(t, "active", got.Authorities[0].Allocation.State)
		counts := map[string]int64{}
		for _, o := range got.OtherKeys {
			counts[o.Part] = o.Keys
		}
		require.Positive(t, counts["by-owner"])
		require.Positive(t, counts["ledger"])
	})

	t.Run("sections", func(t *testing.T) {
		r := runCmd(t, append([]string{"inspect", "owners", "actors", "--output=json"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		var names []string
		for k := range got {
			names = append(names, k)
		}
		require.ElementsMatch(t, []string{"prefix", "revision", "readAt", "actors", "ownerLeases"}, names)

		r = runCmd(t, append([]string{"inspect", "leases"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "OWNER LEASES (1)")
		require.NotContains(t, r.stdout, "MESH NODES")
	})

	t.Run("empty prefix", func(t *testing.T) {
		r := runCmd(t, "inspect", "--endpoints", eps, "--prefix", prefix+"nothing/")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, 9, strings.Count(r.stdout, "  (none)\n"), r.stdout)
		require.Contains(t, r.stdout, "OTHER KEYS (11)")
	})
}

// bench mesh runs the mesh harness against the given cluster (every node
// agreed with the live set after each change, or the run fails), and
// leaves nothing under the prefix.
func TestBenchMesh(t *testing.T) {
	_, c, prefix, eps := sharedStore(t)
	r := runCmd(t, "bench", "mesh", "--endpoints", eps, "--prefix", prefix, "--nodes", "3", "--steady", "1s")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "### N = 3\n\n| | measured |\n")
	require.Regexp(t, `\| \*\*one node joins\*\*: events delivered \| \S+ \|`, r.stdout)
	require.Contains(t, r.stdout, "| **rolling restart**: nodes restarted | 1 |\n")
	require.Contains(t, r.stderr, "zlinketcd: bench: mesh of 3 nodes on "+eps+" under "+prefix+"zlinketcd-bench-mesh-")
	require.Zero(t, keyCount(t, c, prefix), "the scratch prefix is removed")
}

// Without endpoints bench mesh starts an embedded member (fsync on) and
// says so, and that its CPU is counted with the nodes'.
func TestBenchMeshEmbedded(t *testing.T) {
	r := runCmd(t, "bench", "mesh", "--nodes", "2", "--steady", "1s", "--output", "json")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Regexp(t, `^zlinketcd: no --endpoints given: started an embedded single-member etcd at http://127\.0\.0\.1:\d+ \(temporary directory, removed on exit\)\n`, r.stderr)
	require.Contains(t, r.stderr, "on an embedded single-member etcd (fsync on) in this process: the node CPU and memory include etcd's")
	var res meshbench.Result
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.Equal(t, 2, res.Nodes)
	require.True(t, res.EtcdInProcess)
	require.True(t, res.EtcdMetrics)
	require.Equal(t, 3, res.Join.Converge.N)
	require.Equal(t, 2, res.Rolling.Converge.N)
}

func TestBenchMeshUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "other operation", args: []string{"bench", "mesh", "lease-read"}, want: `bench mesh takes no other operation, got "mesh lease-read"`},
		{name: "output", args: []string{"bench", "mesh", "--output", "xml"}, want: `--output "xml" must be table or json`},
		{name: "one node", args: []string{"bench", "mesh", "--nodes", "1"}, want: "nodes 1 must be in 2..5000"},
		{name: "no steady state", args: []string{"bench", "mesh", "--steady", "0s"}, want: "--steady must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.args...)
			requireOneLineError(t, r, exitUsage, "zlinketcd: bench: "+tc.want)
			require.Empty(t, r.stdout)
		})
	}
}
