package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	// usage is the argument synopsis after the name.
	usage string
	// help explains the subcommand (several lines).
	help string
	// flags registers the subcommand's own flags and returns the function
	// that runs it once they are parsed.
	flags func(fs *flag.FlagSet) runFunc
}

// runFunc runs a parsed subcommand.
type runFunc func(ctx context.Context, env *env, args []string) error

// env is what a running subcommand gets.
type env struct {
	conn   connConfig
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
}

// commands lists the subcommands in help order.
func commands() []command {
	return []command{demoCommand(), inspectCommand(), gcCommand(), checkCommand(), benchCommand()}
}

// run is the whole command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	conn := defaultConnFlags()
	top := newFlagSet("zlinketcd", &conn)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeUsage(stdout)
			return exitOK
		}
		return fail(stderr, "", usageErrorf("%s", err.Error()))
	}
	rest := top.Args()
	if len(rest) == 0 {
		writeUsage(stderr)
		return exitUsage
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return help(rest, stdout, stderr)
	}
	cmd, ok := lookup(name)
	if !ok {
		return fail(stderr, "", usageErrorf("unknown command %q (commands: %s)", name, commandNames()))
	}
	fs := newFlagSet(cmd.name, &conn)
	runner := cmd.flags(fs)
	positional, err := parseArgs(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		writeCommandUsage(stdout, cmd, fs)
		return exitOK
	}
	if err != nil {
		return fail(stderr, cmd.name, err)
	}
	cfg, err := conn.check()
	if err != nil {
		return fail(stderr, cmd.name, err)
	}
	e := &env{conn: cfg, stdout: stdout, stderr: stderr,
		log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))}
	if err := runner(ctx, e, positional); err != nil {
		return fail(stderr, cmd.name, err)
	}
	return exitOK
}

// fail prints err as one line and returns its exit status.
func fail(stderr io.Writer, cmd string, err error) int {
	where := "zlinketcd: "
	if cmd != "" {
		where += cmd + ": "
	}
	if !isUsage(err) {
		fmt.Fprintln(stderr, where+oneLine(err.Error()))
		return exitFailure
	}
	see := "zlinketcd help"
	if cmd != "" {
		see += " " + cmd
	}
	fmt.Fprintf(stderr, "%s%s (see '%s')\n", where, oneLine(err.Error()), see)
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
	fs := newFlagSet(cmd.name, &conn)
	cmd.flags(fs)
	writeCommandUsage(stdout, cmd, fs)
	return exitOK
}

// writeUsage prints the command's usage.
func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "zlinketcd — zlink's location store on etcd: demo, inspect, gc, check, bench.")
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
	fmt.Fprintln(w, "Connection flags (before or after the command):")
	conn := defaultConnFlags()
	fs := flag.NewFlagSet("zlinketcd", flag.ContinueOnError)
	conn.register(fs)
	writeFlags(w, fs, nil)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Without --endpoints the command starts an embedded single-member etcd in a")
	fmt.Fprintln(w, "temporary directory (and says so). Run 'zlinketcd help <command>' for more.")
}

// writeCommandUsage prints one subcommand's usage: its own flags first,
// then the shared ones.
func writeCommandUsage(w io.Writer, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: zlinketcd %s [flags]%s\n\n%s\n", cmd.name, cmd.usage, strings.TrimRight(cmd.help, "\n"))
	shared := map[string]bool{}
	conn := defaultConnFlags()
	cf := flag.NewFlagSet("", flag.ContinueOnError)
	conn.register(cf)
	cf.VisitAll(func(f *flag.Flag) { shared[f.Name] = true })
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	writeFlags(w, fs, func(name string) bool { return !shared[name] })
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Connection flags:")
	writeFlags(w, fs, func(name string) bool { return shared[name] })
}

// writeFlags prints the flags of fs that keep selects (all when nil).
func writeFlags(w io.Writer, fs *flag.FlagSet, keep func(string) bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		if keep != nil && !keep(f.Name) {
			return
		}
		kind, usage := flag.UnquoteUsage(f)
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  --%s %s\t%s%s\n", f.Name, kind, usage, def)
	})
	_ = tw.Flush()
}
