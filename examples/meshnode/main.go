package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/zlink-systems/zlink-etcd/examples/meshnode/config"
)

// version is the release version stamped at link time by the image build
// (scripts/build-static.sh: -ldflags "-X main.version=…").
var version string

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // a fatal error at run time
	exitUsage   = 2 // a configuration the node refuses
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// runMain is the whole process: configuration, then the node until
// SIGTERM or SIGINT (a graceful leave), or a fatal error. It returns the
// exit status; a failure is also one line on stderr: "meshnode: <why>".
func runMain(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := config.Parse(args, getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		config.Usage(stdout)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "meshnode: %s (meshnode --help lists the flags)\n", oneLine(err))
		return exitUsage
	case cfg.Version:
		fmt.Fprintf(stdout, "meshnode %s (%s)\n", versionString(), runtime.Version())
		return exitOK
	case cfg.CheckConfig:
		if err := checkConfig(context.Background(), cfg, stdout); err != nil {
			fmt.Fprintf(stderr, "meshnode: %s\n", oneLine(err))
			return exitUsage
		}
		return exitOK
	}
	// The first SIGTERM (or SIGINT) starts the graceful leave; a second one
	// ends the process at once (the handler is removed when the first
	// arrives).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	if err := run(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "meshnode: %s\n", oneLine(err))
		var usage *config.UsageError
		if errors.As(err, &usage) {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// versionString is the stamped version, or "(devel)".
func versionString() string {
	if version == "" {
		return "(devel)"
	}
	return version
}

// oneLine joins the lines of err's message.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
}
