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
		if strings.Contains(l, "started an embedded single-member etcd") || isProgressLine(l) {
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
