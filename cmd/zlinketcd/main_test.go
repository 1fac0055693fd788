package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
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

// runCmd runs the command in-process with args.
func runCmd(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code := run(ctx, args, &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
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
		if strings.HasPrefix(l, "zlinketcd: no --endpoints given") {
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
}
