package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/scratch"
	"github.com/zlink-systems/zlink-etcd/internal/syncio"
	"github.com/zlink-systems/zlink-etcd/keys"
)

// Every test of the binary shares one embedded member (see RunShared) and
// keeps to its own prefix.
func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs the command in-process with args, an empty environment and
// no signals.
func runCmd(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, runOptions{args: args})
}

// runOptions describe one in-process run.
type runOptions struct {
	args []string
	// env is the environment the command sees (nothing else).
	env map[string]string
	// signals delivers signals to the run.
	signals chan os.Signal
	// stdout and stderr, when set, receive the output as it is written.
	stdout, stderr *syncio.Buffer
	// progress times the progress lines (zero: the defaults).
	progress progressTiming
}

// runWith runs the command in-process as o says.
func runWith(t *testing.T, o runOptions) result {
	t.Helper()
	if o.stdout == nil {
		o.stdout = &syncio.Buffer{}
	}
	if o.stderr == nil {
		o.stderr = &syncio.Buffer{}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	code := run(ctx, invocation{args: o.args, stdout: o.stdout, stderr: o.stderr, signals: o.signals, progress: o.progress,
		getenv: func(k string) string { return o.env[k] }})
	return result{code: code, stdout: o.stdout.String(), stderr: o.stderr.String()}
}

// sharedEndpoints returns the shared member's endpoints flag value.
func sharedEndpoints(t *testing.T) string {
	t.Helper()
	etcdtest.Connect(t) // starts a private member when there is no shared one
	eps := os.Getenv(etcdtest.EnvSharedEndpoints)
	require.NotEmpty(t, eps)
	return eps
}

// sharedStore returns a store over the shared member under a fresh
// prefix, with that prefix and the endpoints.
func sharedStore(t *testing.T) (*etcdstore.Store, *clientv3.Client, string, string) {
	t.Helper()
	c := etcdtest.Connect(t)
	prefix := etcdtest.UniquePrefix(t)
	s, err := etcdstore.New(c, etcdstore.Options{Root: prefix})
	require.NoError(t, err)
	return s, c, prefix, os.Getenv(etcdtest.EnvSharedEndpoints)
}

// keyCount counts the keys under prefix.
func keyCount(t *testing.T, c *clientv3.Client, prefix string) int64 {
	t.Helper()
	resp, err := c.Get(t.Context(), prefix, clientv3.WithRange(keys.PrefixEnd(prefix)), clientv3.WithCountOnly())
	require.NoError(t, err)
	return resp.Count
}

// requireOneLineError requires a failed run with exit code want and
// exactly one line on stderr that contains every fragment.
func requireOneLineError(t *testing.T, r result, want int, fragments ...string) {
	t.Helper()
	require.Equal(t, want, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	var errLines []string
	for _, l := range lines {
		if strings.Contains(l, "started an embedded single-member etcd") || isProgressLine(l) || isWarningRecord(l) {
			continue
		}
		errLines = append(errLines, l)
	}
	require.Len(t, errLines, 1, "stderr: %q", r.stderr)
	require.True(t, strings.HasPrefix(errLines[0], "zlinketcd: "), errLines[0])
	for _, f := range fragments {
		require.Contains(t, errLines[0], f)
	}
	require.NotContains(t, r.stderr, "goroutine ")
	require.NotContains(t, r.stderr, "panic")
	requireNoDoubledPrefix(t, errLines[0])
}

// isProgressLine reports whether l is a progress line of check or bench.
func isProgressLine(l string) bool {
	return strings.HasPrefix(l, "check: ") || strings.HasPrefix(l, "bench: ")
}

// isWarningRecord reports a log record at warn level (--log-level's
// default): a library telling the operator what it rode out on the way
// (a read retried through an election while the quorum was being lost),
// not the command's error, which is the one line that starts with
// "zlinketcd: ".
func isWarningRecord(l string) bool {
	return strings.HasPrefix(l, "time=") && strings.Contains(l, " level=WARN ")
}

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// requireNoDoubledPrefix requires that no "prefix: " of a message follows
// itself ("bench: bench:", "UpdateActor: UpdateActor:").
func requireNoDoubledPrefix(t *testing.T, msg string) {
	t.Helper()
	parts := strings.Split(msg, ": ")
	for i := 1; i < len(parts); i++ {
		require.NotEqual(t, parts[i-1], parts[i], "doubled prefix %q in %q", parts[i]+": ", msg)
	}
}

// background is a run of the command in its own goroutine.
type background struct {
	stdout, stderr *syncio.Buffer
	signals        chan os.Signal
	done           chan result
}

// runBackground starts a run as o says, with a signal channel.
func runBackground(t *testing.T, o runOptions) *background {
	t.Helper()
	b := &background{stdout: &syncio.Buffer{}, stderr: &syncio.Buffer{}, signals: make(chan os.Signal, 2), done: make(chan result, 1)}
	o.stdout, o.stderr, o.signals = b.stdout, b.stderr, b.signals
	go func() { b.done <- runWith(t, o) }()
	t.Cleanup(func() {
		select {
		case <-b.done:
		case <-time.After(time.Minute):
		}
	})
	return b
}

// waitOutput waits until stdout holds n occurrences of s.
func (b *background) waitOutput(t *testing.T, s string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Count(b.stdout.String(), s) >= n }, 2*time.Minute, 5*time.Millisecond,
		"waiting for %d × %q; stdout:\n%s\nstderr:\n%s", n, s, b.stdout, b.stderr)
}

// wait waits for the run's result.
func (b *background) wait(t *testing.T) result {
	t.Helper()
	select {
	case r := <-b.done:
		b.done <- r
		return r
	case <-time.After(2 * time.Minute):
		t.Fatalf("the command did not end; stdout:\n%s\nstderr:\n%s", b.stdout, b.stderr)
		return result{}
	}
}

// startCluster starts a three-member cluster for one test.
func startCluster(t *testing.T) *etcdtest.Cluster {
	t.Helper()
	cl, err := etcdtest.StartCluster(t.Context(), 3, etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// loseQuorum stops two of the three members (hard: no leadership
// hand-over) and returns them.
func loseQuorum(t *testing.T, cl *etcdtest.Cluster) []*etcdtest.Member {
	t.Helper()
	stopped := []*etcdtest.Member{cl.Members[0], cl.Members[1]}
	etcdtest.StopTogether(true, stopped...)
	return stopped
}

// regainQuorum restarts the members and waits until a write goes through.
func regainQuorum(t *testing.T, cl *etcdtest.Cluster, stopped []*etcdtest.Member) *clientv3.Client {
	t.Helper()
	for _, m := range stopped {
		require.NoError(t, m.Restart(t.Context()))
	}
	c, err := cl.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.Eventually(t, func() bool {
		_, err := c.Put(t.Context(), "/quorum-probe", "")
		return err == nil
	}, time.Minute, 20*time.Millisecond, "the cluster elects a leader again")
	return c
}

// expireMarker ends a scratch prefix's marker at once, as its lease
// running out would.
func expireMarker(t *testing.T, c *clientv3.Client, prefix string) {
	t.Helper()
	resp, err := c.Get(t.Context(), scratch.MarkerKey(prefix))
	require.NoError(t, err)
	if len(resp.Kvs) == 1 {
		_, err := c.Revoke(t.Context(), clientv3.LeaseID(resp.Kvs[0].Lease))
		require.NoError(t, err)
	}
}
