package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
)

// leftPattern matches the report of a scratch prefix a run could not
// remove: the prefix and the command that removes it.
var leftPattern = regexp.MustCompile(`the scratch prefix (\S+) was not removed \(the cluster has no leader\): once its marker ran out \(within 15s\), remove it with: (zlinketcd gc --apply .*)$`)

// quorumLossCases are the long-running commands whose run loses the
// cluster's quorum: each waits for its work to be under way (n times
// marker on stdout) before two of the three members stop.
func quorumLossCases() []struct {
	name   string
	args   []string
	marker string
	n      int
	// stdout is what the command prints about the interrupted work.
	stdout string
} {
	return []struct {
		name   string
		args   []string
		marker string
		n      int
		stdout string
	}{
		{name: "check", args: []string{"check", "-v"}, marker: "  PASS ", n: 3, stdout: "check: INTERRUPTED "},
		{name: "bench", args: []string{"bench", "--clients", "4", "--total", "10000000", "--mesh-size", "5", "actor-renew", "lease-read"},
			marker: "bench: set up in ", n: 1},
	}
}

// A run that loses the quorum fails within --command-timeout (plus the
// diagnosis), says the cluster has no leader (a member answers, so not
// "is it running?"), and reports the scratch prefix it could not remove
// with the command that removes it, which works once the quorum is back.
func TestQuorumLoss(t *testing.T) {
	for _, tc := range quorumLossCases() {
		t.Run(tc.name, func(t *testing.T) {
			cl := startCluster(t)
			eps := strings.Join(cl.Endpoints(), ",")
			const commandTimeout = 2 * time.Second
			prefix := "/quorum/" + tc.name + "/"
			b := runBackground(t, runOptions{args: append(tc.args, "--endpoints", eps, "--prefix", prefix,
				"--command-timeout", commandTimeout.String())})
			b.waitOutput(t, tc.marker, tc.n)
			stopped := loseQuorum(t, cl)
			lost := time.Now()
			r := b.wait(t)
			took := time.Since(lost)
			t.Logf("%s failed %v after the quorum was lost (--command-timeout %v)", tc.name, took.Round(time.Millisecond), commandTimeout)

			bound := commandTimeout + 2*time.Second
			require.Less(t, took, 2*bound, "fails within --command-timeout + 2s (asserted with twice that)")
			requireOneLineError(t, r, exitFailure, "zlinketcd: "+tc.name+": the etcd cluster has no leader: ",
				"a quorum of the members must run and reach each other")
			// The member left has stepped down, or (on a loaded machine,
			// before its election timeout) still names itself or the old
			// leader: either way 1 of 3 members answers.
			require.Regexp(t, `answers without a leader|still names a leader that has no quorum behind it \(1 of 3 members answer\)`, r.stderr)
			require.NotContains(t, r.stderr, "is it running")
			require.Contains(t, r.stdout, tc.stdout)
			require.NotContains(t, r.stdout, "goroutine ")
			left := leftPattern.FindStringSubmatch(lastLine(r.stderr))
			require.Len(t, left, 3, "the scratch prefix and its command are reported: %s", r.stderr)
			require.True(t, strings.HasPrefix(left[1], prefix+"zlinketcd-"+tc.name+"-"), left[1])

			// Back with a quorum, and once the marker ran out, the command
			// printed removes what the run left.
			c := regainQuorum(t, cl, stopped)
			require.Positive(t, keyCount(t, c, left[1]))
			expireMarker(t, c, left[1])
			args := strings.Fields(left[2])
			require.Equal(t, "zlinketcd", args[0])
			r = runCmd(t, args[1:]...)
			require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
			require.Regexp(t, regexp.QuoteMeta(left[1])+`\s+`+tc.name+`\s+\d+\s+abandoned: removed`, r.stdout)
			require.Zero(t, keyCount(t, c, prefix))
		})
	}
}

// While the cluster has no quorum, inspect --consistency s reads one
// member's copy; a linearizable inspect fails within --command-timeout
// and says why.
func TestInspectSerializableDuringOutage(t *testing.T) {
	cl := startCluster(t)
	c, err := cl.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	const prefix = "/outage/"
	s, err := etcdstore.New(c, etcdstore.Options{Root: prefix})
	require.NoError(t, err)
	populate(t, s)
	eps := strings.Join(cl.Endpoints(), ",")
	conn := []string{"--endpoints", eps, "--prefix", prefix, "--command-timeout", "2s", "--dial-timeout", "2s"}

	r := runCmd(t, append([]string{"inspect", "--consistency", "s"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "MESH NODES (2)")

	loseQuorum(t, cl)
	r = runCmd(t, append([]string{"inspect", "--consistency", "s"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "serializable read: one member's copy, possibly stale")
	for _, title := range []string{"MESH NODES (2)", "ACTORS (1)", "OWNER LEASES (1)", "AUTHORITIES (1)", "OTHER KEYS (11)"} {
		require.Contains(t, r.stdout, "\n"+title+"\n", title)
	}
	require.Regexp(t, `alice\s+\d+\s+[0-9a-f]+\s+1m0s\s+unknown\s`, r.stdout, "the leader knows what a lease has left")
	r = runCmd(t, append([]string{"inspect", "--consistency", "s", "--output", "json", "leases"}, conn...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `"serializable": true`)
	require.Contains(t, r.stdout, `"remainingUnknown": true`)

	began := time.Now()
	r = runCmd(t, append([]string{"inspect"}, conn...)...)
	requireOneLineError(t, r, exitFailure, "the etcd cluster has no leader")
	require.Less(t, time.Since(began), 2*(4*time.Second), "within --dial-timeout + the diagnosis (asserted with twice that)")
}
