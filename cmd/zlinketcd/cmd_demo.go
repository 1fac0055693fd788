package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/internal/demo"
)

// demoCommand runs the mesh in miniature.
func demoCommand() command {
	return command{
		name:    "demo",
		summary: "run a live mesh in miniature: nodes connect, actors move, one node crashes, the rest recover",
		help: `Simulated nodes each join the mesh as a meshnode.Node would in a real
process: claim an owner lease, publish a mesh-node descriptor and a peer row,
and run the auto-connect loop with an executor that records connections.
Actors are created through the authority API and one is relocated; then one
node crashes (its lease is revoked), the survivors drop it, adopt its actors
and collect its rows, it rejoins, and every node leaves. Every stage waits
for its expected state, and retries what failed (an etcd leader election, a
lost answer) within --stage-timeout: the demo survives a leader killed at
any stage. The exit status is 0 only when every state was reached.

Without --endpoints (or ETCDCTL_ENDPOINTS) the demo starts an embedded
single-member etcd in a temporary directory, removed on exit.

The demo writes under a scratch prefix inside --prefix
("<prefix>zlinketcd-demo-<random>/"), removed at the end. With --keep the
nodes stop instead as if they crashed and the keys stay, for inspect and
gc (against an existing cluster: the embedded etcd stops with the demo);
gc leaves the prefix alone until the nodes' leases ran out, then
'zlinketcd gc --apply' removes all of it.`,
		conn: connEmbeddedDefault,
		flags: func(fs *flag.FlagSet) runFunc {
			nodes := fs.Int("nodes", demo.DefaultNodes, fmt.Sprintf("number of simulated nodes (%d..%d)", demo.MinNodes, demo.MaxNodes))
			actors := fs.Int("actors", demo.DefaultActors, fmt.Sprintf("number of actors (1..%d)", demo.MaxActors))
			quick := fs.Bool("quick", false, "short timings (a fast polling interval)")
			ttl := fs.Duration("lease-ttl", demo.DefaultLeaseTTL, "owner-lease TTL of every node")
			poll := fs.Duration("poll", 0, fmt.Sprintf("auto-connect polling interval (default %v, %v with --quick)", demo.DefaultPollingInterval, demo.QuickPollingInterval))
			timeout := fs.Duration("stage-timeout", demo.DefaultStageTimeout, "how long each stage may take to reach its state")
			keep := fs.Bool("keep", false, "end without cleaning up: the nodes stop as if they crashed and the keys stay (for inspect and gc)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageErrorf("demo takes no arguments, got %q", strings.Join(args, " "))
				}
				opts := demo.Options{Nodes: *nodes, Actors: *actors, Quick: *quick, LeaseTTL: *ttl, PollingInterval: *poll,
					StageTimeout: *timeout, Keep: *keep, Out: e.stdout, Logger: e.log}
				if err := opts.Check(); err != nil {
					return usageErrorf("%s", strings.TrimPrefix(err.Error(), "demo: "))
				}
				s, err := e.open(ctx, sessionOptions{write: true})
				if err != nil {
					return err
				}
				defer s.close()
				return runDemo(ctx, e, s, opts, *keep)
			}
		},
	}
}

// runDemo runs the demo under a scratch prefix and removes it afterwards
// unless keep.
func runDemo(ctx context.Context, e *env, s *session, opts demo.Options, keep bool) (err error) {
	run, err := e.beginScratch(ctx, s, "demo")
	if err != nil {
		return err
	}
	store, err := etcdstore.New(s.client, etcdstore.Options{Root: run.prefix, Logger: e.log})
	if err != nil {
		return errors.Join(err, run.finish(ctx, nil))
	}
	defer func() { _ = store.Close() }()
	fmt.Fprintf(e.stdout, "demo: %d nodes and %d actors on %s under %s\n", opts.Nodes, opts.Actors, s.describe, run.prefix)
	_, err = demo.Run(ctx, store, opts)
	if err != nil {
		err = fmt.Errorf("not every expected state was reached: %w", err)
	}
	if !keep || err != nil {
		return run.finish(ctx, err)
	}
	if s.member != nil {
		fmt.Fprintf(e.stdout, "demo: --keep has no lasting effect on the embedded etcd, which stops now\n")
		return run.finish(ctx, nil)
	}
	ttl := opts.LeaseTTL
	if ttl <= 0 {
		ttl = demo.DefaultLeaseTTL
	}
	if err := run.keep(ctx, ttl); err != nil {
		return fmt.Errorf("keep the keys under %s: %w", run.prefix, err)
	}
	fmt.Fprintf(e.stdout, "demo: keys kept under %s\n  inspect them:  %s\n  once the leases ran out (%v), remove them all: %s\n",
		run.prefix, e.commandLine("inspect", nil, run.prefix), ttl, e.commandLine("gc", []string{"--apply"}, run.prefix))
	return nil
}
