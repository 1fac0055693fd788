package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/syncio"
)

// Ctrl-C (SIGINT) ends a run with exit status 130, SIGTERM with 143,
// within the grace of a second however far the clean-up got; check
// reports the scenario it was in as interrupted, not as a failure; the
// scratch prefix is removed, or reported with the command that removes it.
func TestInterrupt(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		marker string
		sig    os.Signal
		code   int
		stdout string
	}{
		{name: "check SIGINT", args: []string{"check", "-v"}, marker: "  PASS ", sig: os.Interrupt, code: 130, stdout: "check: INTERRUPTED "},
		{name: "bench SIGTERM", args: []string{"bench", "--clients", "2", "--total", "10000000", "--mesh-size", "3", "lease-read"},
			marker: "bench: set up in ", sig: syscall.SIGTERM, code: 143},
		{name: "demo SIGINT", args: []string{"demo", "--nodes", "3", "--actors", "1", "--stage-timeout", "1m"},
			marker: "== 2/8", sig: os.Interrupt, code: 130},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, c, prefix, eps := sharedStore(t)
			b := runBackground(t, runOptions{args: append(tc.args, "--endpoints", eps, "--prefix", prefix)})
			b.waitOutput(t, tc.marker, 1)
			b.signals <- tc.sig
			sent := time.Now()
			r := b.wait(t)
			took := time.Since(sent)
			t.Logf("%s: exited %v after the signal", tc.name, took.Round(time.Millisecond))
			require.Less(t, took, 3*interruptGrace, "exits within a second of the signal (asserted with three)")
			requireOneLineError(t, r, tc.code, "zlinketcd: "+tc.args[0]+": interrupted by "+signalName(tc.sig))
			require.Contains(t, r.stdout, tc.stdout)
			require.NotContains(t, r.stdout, "FAIL etcd/", "the interrupted scenario is no failure")
			require.NotContains(t, r.stdout, "goroutine ")
			if n := keyCount(t, c, prefix); n > 0 {
				// A clean-up that ran out of time names what it left.
				require.Contains(t, r.stderr, "was not removed", "%d keys left without a report", n)
				require.Contains(t, r.stderr, "remove it with: zlinketcd gc --apply --endpoints "+eps+" --prefix "+prefix+"zlinketcd-")
			}
		})
	}
}

// The built binary exits 130 on a real SIGINT.
func TestInterruptProcess(t *testing.T) {
	_, c, prefix, eps := sharedStore(t)
	bin := filepath.Join(t.TempDir(), "zlinketcd")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.CommandContext(t.Context(), "go", append(args, ".")...)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.CommandContext(t.Context(), bin, "check", "-v", "--endpoints", eps, "--prefix", prefix)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncio.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	passed := 0
	var seen strings.Builder
	for passed < 3 && lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "  PASS ") {
			passed++
		}
	}
	require.Equal(t, 3, passed, "stdout:\n%s\nstderr:\n%s", seen.String(), stderr.String())
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	sent := time.Now()
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
	}
	err = cmd.Wait()
	took := time.Since(sent)
	t.Logf("the process exited %v after SIGINT", took.Round(time.Millisecond))
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
	require.Equal(t, 130, exit.ExitCode(), "stderr: %s", stderr.String())
	require.Less(t, took, 3*interruptGrace)
	require.Contains(t, stderr.String(), "zlinketcd: check: interrupted by SIGINT")
	require.Contains(t, seen.String(), "check: INTERRUPTED ")
	if keyCount(t, c, prefix) > 0 {
		require.Contains(t, stderr.String(), "was not removed")
	}
}
