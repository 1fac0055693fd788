package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	etcdversion "go.etcd.io/etcd/api/v3/version"
)

// version is the release version stamped at link time by the image build
// (scripts/build-static.sh: -ldflags "-X main.version=…"); empty in a plain
// go build, where the module version from the build information is used.
var version string

// etcdClientModule is the module of the etcd client the command is built
// with.
const etcdClientModule = "go.etcd.io/etcd/client/v3"

// versionCommand prints the versions the command is built from.
func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the command's module version, its Go version and its etcd client's version",
		help: `Prints the version of the module the command was built from (with its
commit when the build recorded one), the Go version it was built with and
the version of its etcd client (which speaks etcd's API version shown).
Talks to no cluster.`,
		conn: connNone,
		flags: func(*flag.FlagSet) runFunc {
			return func(_ context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageErrorf("version takes no arguments, got %q", strings.Join(args, " "))
				}
				bi, ok := debug.ReadBuildInfo()
				if !ok {
					return fmt.Errorf("the binary holds no build information")
				}
				writeVersion(e.stdout, bi, version)
				return nil
			}
		},
	}
}

// writeVersion prints the versions of bi; stamped, when not empty, is the
// release version stamped at link time and replaces the module version.
func writeVersion(w io.Writer, bi *debug.BuildInfo, stamped string) {
	module := bi.Main.Version
	if stamped != "" {
		module = stamped
	}
	if module == "" {
		module = "(unknown)"
	}
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" {
		module += " (commit " + revision
		if modified == "true" {
			module += ", modified"
		}
		module += ")"
	}
	client := "(not linked)"
	for _, d := range bi.Deps {
		if d.Path == etcdClientModule {
			client = d.Version
			if d.Replace != nil {
				client += " => " + d.Replace.Path + " " + d.Replace.Version
			}
		}
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(w, "zlinketcd version: %s %s\n", bi.Main.Path, module)
	fmt.Fprintf(w, "Go version: %s\n", goVersion)
	fmt.Fprintf(w, "etcd client version: %s (API %s)\n", client, etcdversion.APIVersion)
}
