package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/zlink-systems/zlink-etcd/internal/meshbench"
)

// meshOperation is the positional argument that makes bench run the mesh
// scale harness instead of the per-operation load generator.
const meshOperation = "mesh"

// meshFlags are bench's flags for `bench mesh`.
type meshFlags struct {
	nodes    *int
	steady   *time.Duration
	restart  *float64
	converge *time.Duration
	poll     *time.Duration
	parallel *int
	metrics  *string
	output   *string
}

// registerMeshFlags adds the flags of `bench mesh` to fs.
func registerMeshFlags(fs *flag.FlagSet) meshFlags {
	return meshFlags{
		nodes:    fs.Int("nodes", 10, "mesh: number of simulated nodes"),
		steady:   fs.Duration("steady", meshbench.DefaultSteady, "mesh: how long the steady state is measured"),
		restart:  fs.Float64("restart-fraction", meshbench.DefaultRestartFraction, "mesh: share of the nodes the rolling restart restarts"),
		converge: fs.Duration("converge-timeout", meshbench.DefaultConverge, "mesh: how long the nodes may take to agree after each change"),
		poll:     fs.Duration("poll", 0, "mesh: auto-connect polling interval (0: the loop's default, 1s)"),
		parallel: fs.Int("join-parallelism", meshbench.DefaultJoinParallelism, "mesh: nodes joining at once while the mesh is set up"),
		metrics:  fs.String("metrics-urls", "", "mesh: comma-separated /metrics URLs of the etcd members (default: each endpoint's /metrics)"),
		output:   fs.String("output", "table", "mesh: output format: table or json"),
	}
}

// options checks the flags of `bench mesh`.
func (f meshFlags) options(args []string) (meshbench.Options, error) {
	if len(args) > 1 {
		return meshbench.Options{}, usageErrorf("bench mesh takes no other operation, got %q", strings.Join(args, " "))
	}
	if *f.output != "table" && *f.output != "json" {
		return meshbench.Options{}, usageErrorf("--output %q must be table or json", *f.output)
	}
	o := meshbench.Options{Nodes: *f.nodes, Steady: *f.steady, RestartFraction: *f.restart, Converge: *f.converge,
		PollingInterval: *f.poll, JoinParallelism: *f.parallel}
	if *f.steady == 0 {
		return o, usageErrorf("--steady must be positive")
	}
	if err := o.Check(); err != nil {
		return o, usageErrorf("%s", strings.TrimPrefix(err.Error(), meshbench.ErrOptions.Error()+": "))
	}
	return o, nil
}

// benchConn is bench's use of the connection flags: `bench mesh` starts an
// embedded member without endpoints (as demo does); the other operations
// need a cluster.
func benchConn(args []string) connUse {
	if len(args) > 0 && args[0] == meshOperation {
		return connEmbeddedDefault
	}
	return connRequired
}

// runMeshBench runs the mesh harness under a scratch prefix: one client per
// simulated node, each bounded by the run's guard; etcd's metrics from
// each endpoint (or --metrics-urls).
func runMeshBench(ctx context.Context, e *env, s *session, opts meshbench.Options, f meshFlags) (err error) {
	run, err := e.beginScratch(ctx, s, "bench-mesh")
	if err != nil {
		return err
	}
	defer func() { err = run.finish(ctx, err) }()
	cc, err := s.clientConfig(s.endpoints)
	if err != nil {
		return err
	}
	cc.Logger = s.client.GetLogger()
	opts.Root = run.prefix
	opts.Logger = e.log
	opts.EtcdInProcess = s.member != nil
	opts.Dial = func(ctx context.Context, extra []grpc.DialOption) (*clientv3.Client, error) {
		c, err := meshbench.DialConfig(cc)(ctx, extra)
		if err != nil {
			return nil, err
		}
		s.guard.install(c)
		return c, nil
	}
	opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: cc.TLS}}
	opts.MetricsURLs = metricsURLs(ctx, e, *f.metrics, s.endpoints, opts.HTTPClient)
	where := s.describe
	if s.member != nil {
		where = "an embedded single-member etcd (fsync on) in this process: the node CPU and memory include etcd's"
	}
	fmt.Fprintf(e.stderr, "zlinketcd: bench: mesh of %d nodes on %s under %s\n", opts.Nodes, where, run.prefix)
	prog := e.startProgress()
	defer prog.end()
	opts.OnProgress = func(line string) { prog.set("bench: %s", line) }
	res, err := meshbench.Run(ctx, opts)
	prog.end()
	if err != nil {
		return err
	}
	if *f.output == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	res.Label = "measured"
	_, err = fmt.Fprint(e.stdout, meshbench.RenderTable(res))
	return err
}

// metricsURLs returns the /metrics URLs to scrape: --metrics-urls, or each
// endpoint's /metrics when it answers (none, with a warning, when one
// does not: the run then measures the clients only).
func metricsURLs(ctx context.Context, e *env, flagValue string, endpoints []string, hc *http.Client) []string {
	var urls []string
	if flagValue != "" {
		for _, u := range strings.Split(flagValue, ",") {
			if u = strings.TrimSpace(u); u != "" {
				urls = append(urls, u)
			}
		}
		return urls
	}
	for _, ep := range endpoints {
		if !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
			fmt.Fprintf(e.stderr, "zlinketcd: bench: no metrics URL for endpoint %s: etcd's figures are not measured (give --metrics-urls)\n", ep)
			return nil
		}
		urls = append(urls, strings.TrimRight(ep, "/")+"/metrics")
	}
	for _, u := range urls {
		if err := probeMetrics(ctx, hc, u); err != nil {
			fmt.Fprintf(e.stderr, "zlinketcd: bench: %v: etcd's figures are not measured (give --metrics-urls)\n", err)
			return nil
		}
	}
	return urls
}

// probeMetrics reads url once.
func probeMetrics(ctx context.Context, hc *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("metrics %s: %w", url, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("metrics %s: %w", url, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("metrics %s: HTTP %s", url, resp.Status)
	}
	return nil
}
