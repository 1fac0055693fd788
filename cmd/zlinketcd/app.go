package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zlink-systems/zlink-etcd/internal/syncio"
)

// Exit statuses. A run that a signal ended exits with 128 + the signal's
// number: 130 for SIGINT (Ctrl-C), 143 for SIGTERM.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// interruptGrace is how long a run may take to clean up after a signal
// before the command exits anyway; the clean-up itself gets
// interruptCleanup of it.
const (
	interruptGrace   = time.Second
	interruptCleanup = 700 * time.Millisecond
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	// usage is the argument synopsis after the name.
	usage string
	// help explains the subcommand (several lines).
	help string
	// conn says whether the subcommand needs a cluster.
	conn connUse
	// connOf, when set, decides conn from the positional arguments (bench
	// mesh starts an embedded member without endpoints, other bench
	// operations need a cluster).
	connOf func(args []string) connUse
	// ownFlags are connection flags the subcommand gives its own meaning
	// (the connection then reads them before the subcommand's name or from
	// the environment).
	ownFlags []string
	// flags registers the subcommand's own flags and returns the function
	// that runs it once they are parsed.
	flags func(fs *flag.FlagSet) runFunc
}

// runFunc runs a parsed subcommand. ctx ends when the run's guard trips
// (a signal, or a cluster that failed).
type runFunc func(ctx context.Context, e *env, args []string) error

// invocation is what one run of the command gets from its process: the
// arguments, the output streams, the environment and the signals.
type invocation struct {
	args           []string
	stdout, stderr io.Writer
	// getenv reads the environment (ETCDCTL_*); nil reads nothing.
	getenv func(string) string
	// signals delivers SIGINT and SIGTERM; nil delivers none.
	signals <-chan os.Signal
	// progress times the progress lines on stderr; zero means the
	// defaults.
	progress progressTiming
}

// env is what a running subcommand gets.
type env struct {
	cmd  string
	conn connConfig
	// embeddedAsked: --embedded was given (rather than defaulted to).
	embeddedAsked bool
	stdout        io.Writer
	stderr        io.Writer
	log           *slog.Logger
	guard         *guard
	progress      progressTiming
	// explain rewords etcd's refusals with the session's user and prefix
	// (set by open); ok is false for other errors.
	explain func(error) (msg string, ok bool)
}

// commands lists the subcommands in help order.
func commands() []command {
	return []command{demoCommand(), inspectCommand(), gcCommand(), checkCommand(), benchCommand(), authCommand(), versionCommand()}
}

// run is the whole command: it returns the exit status.
func run(ctx context.Context, inv invocation) int {
	if inv.getenv == nil {
		inv.getenv = func(string) string { return "" }
	}
	// The run's goroutines (progress, logs, the demo's event sinks) share
	// both streams.
	inv.stdout, inv.stderr = syncio.NewWriter(inv.stdout), syncio.NewWriter(inv.stderr)
	conn := defaultConnFlags()
	top := newFlagSet("zlinketcd", &conn)
	if err := top.Parse(inv.args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeUsage(inv.stdout)
			return exitOK
		}
		return fail(inv.stderr, "", usageErrorf("%s", err.Error()))
	}
	rest := top.Args()
	if len(rest) == 0 {
		writeUsage(inv.stderr)
		return exitUsage
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return help(rest, inv.stdout, inv.stderr)
	}
	cmd, ok := lookup(name)
	if !ok {
		return fail(inv.stderr, "", usageErrorf("unknown command %q (commands: %s)", name, commandNames()))
	}
	fs := newFlagSet(cmd.name, &conn, cmd.ownFlags...)
	runner := cmd.flags(fs)
	positional, err := parseArgs(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		writeCommandUsage(inv.stdout, cmd, fs)
		return exitOK
	}
	if err != nil {
		return fail(inv.stderr, cmd.name, err)
	}
	given := givenFlags(top)
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(cmd.ownFlags, f.Name) {
			given[f.Name] = true
		}
	})
	if err := applyEnv(top, given, inv.getenv); err != nil {
		return fail(inv.stderr, cmd.name, err)
	}
	use := cmd.conn
	if cmd.connOf != nil {
		use = cmd.connOf(positional)
	}
	cfg, err := conn.check(use, given)
	if err != nil {
		return fail(inv.stderr, cmd.name, err)
	}
	g := newGuard(ctx, cfg.CommandTimeout)
	defer g.trip(context.Canceled)
	e := &env{cmd: cmd.name, conn: cfg, embeddedAsked: conn.embedded, stdout: inv.stdout, stderr: inv.stderr, guard: g,
		progress: inv.progress.withDefaults(), explain: func(error) (string, bool) { return "", false },
		log: slog.New(slog.NewTextHandler(inv.stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))}
	return e.runGuarded(runner, positional, inv.signals)
}

// runGuarded runs the subcommand and waits for it; a signal trips the
// guard, which ends the run (cleaning up what it can), and the command
// exits within interruptGrace of the signal however far the clean-up got.
func (e *env) runGuarded(runner runFunc, args []string, signals <-chan os.Signal) int {
	done := make(chan error, 1)
	go func() { done <- runner(e.guard.ctx, e, args) }()
	var grace <-chan time.Time
	for {
		select {
		case err := <-done:
			return e.finish(err)
		case sig := <-signals:
			if grace != nil {
				return e.abandon()
			}
			e.guard.trip(interrupted{sig: sig})
			t := time.NewTimer(interruptGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return e.abandon()
		}
	}
}

// abandon reports a run that did not finish its clean-up in time after a
// signal.
func (e *env) abandon() int {
	var in interrupted
	if !errors.As(e.guard.cause(), &in) {
		in = interrupted{sig: os.Interrupt}
	}
	fmt.Fprintf(e.stderr, "zlinketcd: %s: %v; the clean-up did not finish within %v (run 'zlinketcd gc' to find what was left)\n",
		e.cmd, in, interruptGrace)
	return in.exitCode()
}

// finish reports how the run ended and returns the exit status: a signal
// and a failed cluster are reported by their cause (the request that
// failed because of it says less), followed by anything the run could not
// clean up.
func (e *env) finish(err error) int {
	if err == nil {
		return exitOK
	}
	if isUsage(err) {
		return fail(e.stderr, e.cmd, err)
	}
	cause := e.guard.cause()
	var in interrupted
	var ce *clusterError
	switch {
	case errors.As(cause, &in):
		fmt.Fprintln(e.stderr, "zlinketcd: "+e.cmd+": "+oneLine(in.Error()+leftNote(err)))
		return in.exitCode()
	case errors.As(cause, &ce):
		return fail(e.stderr, e.cmd, errors.New(ce.Error()+leftNote(err)))
	}
	if explained, ok := e.explain(err); ok {
		return fail(e.stderr, e.cmd, errors.New(explained+leftNote(err)))
	}
	return fail(e.stderr, e.cmd, err)
}

// fail prints err as one line and returns its exit status.
func fail(stderr io.Writer, cmd string, err error) int {
	where := "zlinketcd: "
	msg := oneLine(err.Error())
	if cmd != "" {
		where += cmd + ": "
		// A package named like its subcommand (bench, inspect, demo) says
		// the same prefix again: one per layer is enough.
		msg = strings.TrimPrefix(msg, cmd+": ")
	}
	if !isUsage(err) {
		fmt.Fprintln(stderr, where+msg)
		return exitFailure
	}
	see := "zlinketcd help"
	if cmd != "" {
		see += " " + cmd
	}
	fmt.Fprintf(stderr, "%s%s (see '%s')\n", where, msg, see)
	return exitUsage
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// lookup finds a subcommand by name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames lists the subcommands' names.
func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// help prints the usage of the whole command or of one subcommand.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stdout)
		return exitOK
	}
	cmd, ok := lookup(args[0])
	if !ok {
		return fail(stderr, "", usageErrorf("unknown command %q (commands: %s)", args[0], commandNames()))
	}
	conn := defaultConnFlags()
	fs := newFlagSet(cmd.name, &conn, cmd.ownFlags...)
	cmd.flags(fs)
	writeCommandUsage(stdout, cmd, fs)
	return exitOK
}

// writeUsage prints the command's usage.
func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "zlinketcd — zlink's location store on etcd: demo, inspect, gc, check, bench, auth setup.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: zlinketcd [connection flags] <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Connection flags (before or after the command; [$NAME] is the environment")
	fmt.Fprintln(w, "variable etcdctl reads for the same flag, used when the flag is not given):")
	conn := defaultConnFlags()
	fs := flag.NewFlagSet("zlinketcd", flag.ContinueOnError)
	conn.register(fs)
	writeFlags(w, fs, nil)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command but demo, bench mesh and version needs --endpoints (or")
	fmt.Fprintln(w, "ETCDCTL_ENDPOINTS); demo and bench mesh without them, and any command with")
	fmt.Fprintln(w, "--embedded, start a throw-away single-member etcd. Exit status: 0 done,")
	fmt.Fprintln(w, "1 failed, 2 usage error, 130/143 interrupted by SIGINT/SIGTERM. Run")
	fmt.Fprintln(w, "'zlinketcd help <command>' for more.")
}

// writeCommandUsage prints one subcommand's usage: its own flags first,
// then the shared ones.
func writeCommandUsage(w io.Writer, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: zlinketcd %s [flags]%s\n\n%s\n", cmd.name, cmd.usage, strings.TrimRight(cmd.help, "\n"))
	shared := map[string]bool{}
	conn := defaultConnFlags()
	cf := flag.NewFlagSet("", flag.ContinueOnError)
	conn.register(cf, cmd.ownFlags...)
	cf.VisitAll(func(f *flag.Flag) { shared[f.Name] = true })
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	writeFlags(w, fs, func(name string) bool { return !shared[name] })
	if cmd.conn == connNone {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Connection flags:")
	writeFlags(w, fs, func(name string) bool { return shared[name] })
}

// writeFlags prints the flags of fs that keep selects (all when nil), with
// their defaults unless those are their type's zero value.
func writeFlags(w io.Writer, fs *flag.FlagSet, keep func(string) bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		if keep != nil && !keep(f.Name) {
			return
		}
		kind, usage := flag.UnquoteUsage(f)
		def := ""
		if !isZeroDefault(f) {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  --%s %s\t%s%s\n", f.Name, kind, usage, def)
	})
	_ = tw.Flush()
}
