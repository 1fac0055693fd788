package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/scratch"
	"github.com/zlink-systems/zlink-etcd/internal/syncio"
)

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
	for _, m := range stopped {
		m.Stop(true)
	}
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
