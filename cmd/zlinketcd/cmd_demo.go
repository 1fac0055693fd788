package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/internal/demo"
	"github.com/zlink-systems/zlink-etcd/internal/scratch"
)

// demoCommand runs the mesh in miniature.
func demoCommand() command {
	return command{
		name:    "demo",
		summary: "run a live mesh in miniature: nodes connect, actors move, one node crashes, the rest recover",
		help: `Simulated nodes each claim an owner lease, publish a mesh-node descriptor
and a peer row, and run the auto-connect loop with an executor that records
connections. Actors are created through the authority API and one is
relocated; then one node crashes (its lease is revoked), the survivors drop
it, adopt its actors and collect its rows, and it rejoins. Every stage
waits for its expected state; the exit status is 0 only when all were
reached.

The demo writes under a scratch prefix inside --prefix
("<prefix>zlinketcd-demo-<random>/"), removed at the end. With --keep the
nodes stop instead as if they crashed and the keys stay, for inspect and
gc (against an existing cluster: the embedded etcd stops with the demo).`,
		flags: func(fs *flag.FlagSet) runFunc {
			nodes := fs.Int("nodes", demo.DefaultNodes, fmt.Sprintf("number of simulated nodes (%d..%d)", demo.MinNodes, demo.MaxNodes))
			actors := fs.Int("actors", demo.DefaultActors, fmt.Sprintf("number of actors (1..%d)", demo.MaxActors))
			quick := fs.Bool("quick", false, "short timings (a fast polling interval)")
			ttl := fs.Duration("lease-ttl", demo.DefaultLeaseTTL, "owner-lease TTL of every node")
			poll := fs.Duration("poll", 0, "auto-connect polling interval (default 200ms, 50ms with --quick)")
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
				s, err := open(ctx, e.conn, e.stderr, e.log)
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
	prefix, err := scratch.New(s.cfg.Prefix, "demo")
	if err != nil {
		return err
	}
	store, err := etcdstore.New(s.client, etcdstore.Options{Root: prefix, Logger: e.log})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "demo: %d nodes and %d actors on %s under %s\n", opts.Nodes, opts.Actors, s.describe, prefix)
	defer func() {
		if keep {
			if s.member != nil {
				fmt.Fprintf(e.stdout, "demo: --keep has no lasting effect on the embedded etcd, which stops now\n")
			} else {
				fmt.Fprintf(e.stdout, "demo: keys kept under %s\n  inspect them:  zlinketcd inspect --endpoints %s --prefix %s\n  once the leases ran out (%v): zlinketcd gc --apply --endpoints %s --prefix %s\n",
					prefix, s.describe, prefix, opts.LeaseTTL, s.describe, prefix)
			}
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if _, cerr := scratch.Clean(cctx, s.client, prefix); cerr != nil && err == nil {
			err = fmt.Errorf("clean up %s: %w", prefix, cerr)
		}
	}()
	if _, err := demo.Run(ctx, store, opts); err != nil {
		return fmt.Errorf("not every expected state was reached: %w", err)
	}
	return nil
}
