package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/internal/bench"
)

// benchCommand is the load generator.
func benchCommand() command {
	return command{
		name:    "bench",
		summary: "load-test the hot operations, each beside the equivalent raw etcd requests",
		usage:   " [operation...] | mesh --nodes N",
		connOf:  benchConn,
		help: fmt.Sprintf(`A load generator in the style of etcd's benchmark tool. Each operation runs
--total requests from --clients concurrent clients over --conns etcd
connections (at most --rate requests per second), once through the store
and once as the plainest etcd requests that do the same job, and prints
throughput and latency percentiles for both, with the store's cost
relative to raw etcd. Operations (all by default): %s.

Every client owns its own owner lease, descriptor, actor and authority
record (no contention). Everything is written under a scratch prefix inside
--prefix ("<prefix>zlinketcd-bench-<random>/"), removed afterwards.

'bench mesh' runs the mesh scale harness instead: --nodes simulated mesh
nodes, each the real node stack (owner-lease session, descriptor,
auto-connect loop with an executor that records its decisions) over its own
etcd client, as separate pods would be. It measures the steady state for
--steady (Raft proposals, watch events and bytes, read requests and rows
read per second, CPU and memory per node), one node joining and leaving
(their cost above the steady state, and the time until every node agrees
with the live set, p50/p99), and a rolling restart of --restart-fraction of
the nodes (time to agree after the last restart, etcd's peak load per
second). etcd's figures come from its /metrics (each endpoint's, or
--metrics-urls). Without --endpoints (or ETCDCTL_ENDPOINTS) 'bench mesh'
starts an embedded single-member etcd with fsync on, in this process: the
nodes' CPU and memory then include etcd's. The mesh flags are ignored by
the other operations, and theirs by 'bench mesh'. docs/scale.md has the
figures and the cost model.`, strings.Join(bench.Operations(), ", ")),
		flags: func(fs *flag.FlagSet) runFunc {
			clients := fs.Int("clients", bench.DefaultClients, "concurrent clients")
			conns := fs.Int("conns", bench.DefaultConns, "etcd connections the clients share")
			total := fs.Int("total", bench.DefaultTotal, "requests per operation and system")
			rate := fs.Float64("rate", 0, "maximum requests per second (0: no limit)")
			meshSize := fs.Int("mesh-size", bench.DefaultMeshSize, "descriptors in the mesh that mesh-list reads")
			mesh := registerMeshFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 && args[0] == meshOperation {
					opts, err := mesh.options(args)
					if err != nil {
						return err
					}
					s, err := e.open(ctx, sessionOptions{write: true, fsync: true})
					if err != nil {
						return err
					}
					defer s.close()
					return runMeshBench(ctx, e, s, opts, mesh)
				}
				opts := bench.Options{Clients: *clients, Conns: *conns, Total: *total, Rate: *rate, Ops: args, MeshSize: *meshSize, Out: e.stdout}
				if err := opts.Check(); err != nil {
					return usageErrorf("%s", err.Error())
				}
				s, err := e.open(ctx, sessionOptions{write: true})
				if err != nil {
					return err
				}
				defer s.close()
				return runBench(ctx, e, s, opts)
			}
		},
	}
}

// runBench opens the extra connections, runs the benchmark under a scratch
// prefix and prints the table; it fails when a request failed.
func runBench(ctx context.Context, e *env, s *session, opts bench.Options) (err error) {
	run, err := e.beginScratch(ctx, s, "bench")
	if err != nil {
		return err
	}
	defer func() { err = run.finish(ctx, err) }()
	conns := []*clientv3.Client{s.client}
	defer func() {
		for _, c := range conns[1:] {
			_ = c.Close()
		}
	}()
	for len(conns) < opts.Conns {
		c, err := s.extraClient()
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	prog := e.startProgress()
	defer prog.end()
	opts.OnProgress = func(p bench.Progress) { prog.set("bench: %s: %d/%d", p.Stage, p.Done, p.Total) }
	fmt.Fprintf(e.stdout, "bench: %s under %s\n", s.describe, run.prefix)
	rep, err := bench.Run(ctx, conns, run.prefix, etcdStoreOptions(s), opts)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(e.stdout); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("some requests failed (see above)")
	}
	return nil
}
