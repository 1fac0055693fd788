package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/internal/scratch"
)

// Clean-up budgets of a scratch prefix: after a run that went well, and
// after a request ran out of --command-timeout on a cluster that still has
// a leader (after a signal the budget is interruptCleanup).
const (
	cleanupTimeout = 30 * time.Second
	slowCleanup    = time.Second
)

// scratchRun is one run's scratch prefix: made, marked in use while the run
// works, and removed at its end, or reported with the command that removes
// it.
type scratchRun struct {
	e      *env
	s      *session
	prefix string
	marker *scratch.Marker
}

// beginScratch makes a scratch prefix for purpose under --prefix and marks
// it in use.
func (e *env) beginScratch(ctx context.Context, s *session, purpose string) (*scratchRun, error) {
	prefix, err := scratch.New(s.cfg.Prefix, purpose)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	m, err := call(s.guard, ctx, func(ctx context.Context) (*scratch.Marker, error) {
		return scratch.Claim(ctx, s.raw, prefix, scratch.MarkerOptions{Logger: s.log,
			Value: scratch.MarkerValue{Command: purpose, Holder: fmt.Sprintf("%s pid %d", host, os.Getpid())}})
	})
	if err != nil {
		if c := s.guard.cause(); c != nil {
			return nil, c
		}
		return nil, err
	}
	return &scratchRun{e: e, s: s, prefix: prefix, marker: m}, nil
}

// finish removes the scratch prefix and returns runErr, with what could
// not be removed and how to remove it. After a signal the removal gets
// what is left of the signal's grace; after the cluster lost its leader it
// is not tried (it cannot succeed) and only reported.
func (r *scratchRun) finish(ctx context.Context, runErr error) error {
	r.marker.Stop()
	etcd, budget, skip := r.cleanupPlan()
	if skip != "" {
		return withLeft(runErr, r.left(skip))
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	if _, err := scratch.Clean(cctx, etcd, r.prefix); err != nil {
		reason := oneLine(err.Error())
		if errors.Is(err, context.DeadlineExceeded) && cctx.Err() != nil {
			reason = fmt.Sprintf("no time left: %v", budget)
		}
		return withLeft(runErr, r.left(reason))
	}
	return runErr
}

// cleanupPlan chooses the client and the time of the clean-up, or says why
// it is not tried.
func (r *scratchRun) cleanupPlan() (etcd scratch.Etcd, budget time.Duration, skip string) {
	cause := r.s.guard.cause()
	var in interrupted
	switch {
	case cause == nil:
		return r.s.client, cleanupTimeout, ""
	case errors.As(cause, &in):
		return r.s.raw, interruptCleanup, ""
	case errors.Is(cause, errNoLeader):
		return nil, 0, "the cluster has no leader"
	case errors.Is(cause, errUnreachable):
		return nil, 0, "no etcd member answers"
	default:
		return r.s.raw, slowCleanup, ""
	}
}

// keep ends the run but leaves the prefix in use for d (demo --keep).
func (r *scratchRun) keep(ctx context.Context, d time.Duration) error {
	_, err := call(r.s.guard, ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.marker.KeepFor(ctx, d)
	})
	return err
}

// left is the report of a prefix that was not removed, or nil when it
// needs none (the embedded etcd goes with the command).
func (r *scratchRun) left(reason string) *scratchLeft {
	if r.s.member != nil {
		return nil
	}
	return &scratchLeft{prefix: r.prefix, reason: reason, wait: r.marker.TTL(),
		command: r.e.commandLine("gc", []string{"--apply"}, r.prefix)}
}

// scratchLeft reports a scratch prefix a run could not remove.
type scratchLeft struct {
	prefix, reason, command string
	// wait bounds how long the prefix stays marked in use.
	wait time.Duration
}

// Error says which prefix was left, why, and the command that removes it.
func (l *scratchLeft) Error() string {
	return fmt.Sprintf("the scratch prefix %s was not removed (%s): once its marker ran out (within %v), remove it with: %s",
		l.prefix, l.reason, l.wait, l.command)
}

// runLeft is a run's error together with the prefix it left.
type runLeft struct {
	err  error
	left *scratchLeft
}

// Error implements error.
func (r *runLeft) Error() string { return r.err.Error() + "; " + r.left.Error() }

// Unwrap returns both.
func (r *runLeft) Unwrap() []error { return []error{r.err, r.left} }

// withLeft joins a run's error (nil when it went well) and a left prefix
// (nil when none).
func withLeft(err error, left *scratchLeft) error {
	switch {
	case left == nil:
		return err
	case err == nil:
		return left
	}
	return &runLeft{err: err, left: left}
}

// leftNote is "; " and the report of the prefix err says was left, or "".
func leftNote(err error) string {
	var l *scratchLeft
	if err == nil || !errors.As(err, &l) {
		return ""
	}
	return "; " + l.Error()
}

// commandLine renders the zlinketcd subcommand cmd with its flags, the
// run's connection flags (never the password: the command then reads it
// from ETCDCTL_PASSWORD) and --prefix prefix, quoted for a POSIX shell.
func (e *env) commandLine(cmd string, flags []string, prefix string) string {
	c := e.conn
	parts := append([]string{"zlinketcd", cmd}, flags...)
	if len(c.Endpoints) > 0 {
		parts = append(parts, "--endpoints", strings.Join(c.Endpoints, ","))
	}
	if t := c.TLS; t != nil {
		for _, f := range [][2]string{{"--cacert", t.CAFile}, {"--cert", t.CertFile}, {"--key", t.KeyFile}, {"--server-name", t.ServerName}} {
			if f[1] != "" {
				parts = append(parts, f[0], f[1])
			}
		}
	}
	if c.InsecureSkipVerify {
		parts = append(parts, "--insecure-skip-tls-verify")
	}
	if c.Username != "" {
		parts = append(parts, "--user", c.Username)
	}
	parts = append(parts, "--prefix", prefix)
	for i, p := range parts {
		parts[i] = shellQuote(p)
	}
	line := strings.Join(parts, " ")
	if c.Username != "" {
		line = "ETCDCTL_PASSWORD=… " + line
	}
	return line
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
