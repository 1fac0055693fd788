// Command zlinketcd is zlink-etcd's operator tool: a live demo of the mesh
// on an embedded etcd, and inspect, gc, check and bench against an existing
// cluster. Run "zlinketcd help" for the subcommands and flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
