package meshbench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/zlink-systems/zlink-etcd/session"
)

// Defaults of Options.
const (
	DefaultSteady          = 60 * time.Second
	DefaultMesh            = "scale"
	DefaultRestartFraction = 0.10
	DefaultConverge        = 3 * time.Minute
	DefaultJoinParallelism = 32
	// MaxNodes bounds Options.Nodes: each node holds an etcd client (a
	// connection, a watch and a keep-alive stream), so the process needs
	// a few file descriptors per node and etcd a stream each.
	MaxNodes = 5000
)

// ErrOptions is wrapped by the errors of bad Options.
var ErrOptions = errors.New("meshbench: bad options")

// Options configure a run. Nodes, Dial and Root are required.
type Options struct {
	// Nodes is the number of simulated nodes (2..MaxNodes); one more joins
	// and leaves in the join/leave phase.
	Nodes int
	// Steady is how long the steady state is measured; 0 means
	// DefaultSteady.
	Steady time.Duration
	// Mesh is the mesh name; "" means DefaultMesh.
	Mesh string
	// Root is the store's key prefix (a scratch prefix: the run writes
	// under it and its nodes remove their rows when they leave).
	Root string
	// Dial makes the etcd client of one node (one per simulated pod),
	// with extra added to its gRPC dial options (the harness's byte
	// counters). Required; DialConfig makes one from a client
	// configuration.
	Dial func(ctx context.Context, extra []grpc.DialOption) (*clientv3.Client, error)
	// MetricsURLs are the /metrics URLs of every etcd member; none means
	// the etcd-side figures are not measured (the clients' still are).
	MetricsURLs []string
	// HTTPClient scrapes MetricsURLs; nil means a client of the run's own.
	// Run closes its idle connections when it ends.
	HTTPClient *http.Client
	// EtcdInProcess says that etcd runs in this process (an embedded
	// member): CPU and memory then mix etcd's and the nodes', and the
	// result says so.
	EtcdInProcess bool
	// Session is every node's owner-lease session timing; the zero value
	// is the session's defaults (TTL 15 s, a renewal every 5 s).
	Session session.Options
	// PollingInterval is the auto-connect polling interval; 0 means the
	// loop's default (1 s).
	PollingInterval time.Duration
	// RestartFraction is the share of the nodes restarted one after the
	// other in the rolling restart (at least one node); 0 means
	// DefaultRestartFraction.
	RestartFraction float64
	// JoinParallelism bounds the nodes joining at once while the mesh is
	// set up; 0 means DefaultJoinParallelism.
	JoinParallelism int
	// Converge bounds every wait for the mesh to agree (and the set-up);
	// 0 means DefaultConverge.
	Converge time.Duration
	// OnProgress, when set, receives one line per step (for stderr).
	OnProgress func(string)
	// Logger receives the nodes' logs; nil discards them.
	Logger *slog.Logger
}

// resolve applies the defaults and checks the values.
func (o Options) resolve() (Options, error) {
	o.Steady = cmp.Or(o.Steady, DefaultSteady)
	o.Mesh = cmp.Or(o.Mesh, DefaultMesh)
	o.RestartFraction = cmp.Or(o.RestartFraction, DefaultRestartFraction)
	o.JoinParallelism = cmp.Or(o.JoinParallelism, DefaultJoinParallelism)
	o.Converge = cmp.Or(o.Converge, DefaultConverge)
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: &http.Transport{}}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.OnProgress == nil {
		o.OnProgress = func(string) {}
	}
	switch {
	case o.Nodes < 2 || o.Nodes > MaxNodes:
		return o, fmt.Errorf("%w: nodes %d must be in 2..%d", ErrOptions, o.Nodes, MaxNodes)
	case o.Steady < 0:
		return o, fmt.Errorf("%w: steady-state duration %v must not be negative", ErrOptions, o.Steady)
	case o.RestartFraction < 0 || o.RestartFraction > 1:
		return o, fmt.Errorf("%w: restart fraction %v must be in 0..1", ErrOptions, o.RestartFraction)
	case o.JoinParallelism < 0:
		return o, fmt.Errorf("%w: join parallelism %d must not be negative", ErrOptions, o.JoinParallelism)
	case o.Converge < 0:
		return o, fmt.Errorf("%w: convergence timeout %v must not be negative", ErrOptions, o.Converge)
	case o.PollingInterval < 0:
		return o, fmt.Errorf("%w: polling interval %v must not be negative", ErrOptions, o.PollingInterval)
	case o.Dial == nil:
		return o, fmt.Errorf("%w: no Dial: the harness needs to make one etcd client per node", ErrOptions)
	case o.Root == "":
		return o, fmt.Errorf("%w: no Root: the run needs a key prefix of its own", ErrOptions)
	}
	return o, nil
}

// Check reports whether the options are usable (after the defaults); Dial
// and Root are not checked (the command sets them once connected).
func (o Options) Check() error {
	o.Dial = func(context.Context, []grpc.DialOption) (*clientv3.Client, error) { return nil, nil }
	o.Root = "/"
	_, err := o.resolve()
	return err
}

// restarts is the number of nodes the rolling restart restarts.
func (o Options) restarts() int {
	return max(1, int(float64(o.Nodes)*o.RestartFraction+0.5))
}

// DialConfig returns a Dial that makes a client from cfg with the extra
// dial options appended.
func DialConfig(cfg clientv3.Config) func(context.Context, []grpc.DialOption) (*clientv3.Client, error) {
	return func(ctx context.Context, extra []grpc.DialOption) (*clientv3.Client, error) {
		c := cfg
		c.Context = context.WithoutCancel(ctx)
		c.DialOptions = append(append([]grpc.DialOption{}, cfg.DialOptions...), extra...)
		cli, err := clientv3.New(c)
		if err != nil {
			return nil, fmt.Errorf("meshbench: dial %v: %w", cfg.Endpoints, err)
		}
		return cli, nil
	}
}
