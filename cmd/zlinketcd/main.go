// Command zlinketcd is zlink-etcd's operator tool: a live demo of the mesh
// on an embedded etcd, and inspect, gc, check, bench and auth setup against
// an existing cluster. Run "zlinketcd help" for the subcommands and flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	code := run(context.Background(), invocation{args: os.Args[1:], stdout: os.Stdout, stderr: os.Stderr,
		getenv: os.Getenv, signals: signals})
	os.Exit(code)
}
