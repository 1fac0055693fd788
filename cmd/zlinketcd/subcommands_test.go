package main

import (
	"context"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	etcdversion "go.etcd.io/etcd/api/v3/version"

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
