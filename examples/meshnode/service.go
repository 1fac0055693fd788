package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/examples/meshnode/config"
	"github.com/zlink-systems/zlink-etcd/examples/meshnode/statedoc"
	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/meshnode"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/observe/etcdobserve"
	"github.com/zlink-systems/zlink-etcd/session"
)

// Waits between attempts to reach etcd at start.
const (
	dialRetryInitial = 500 * time.Millisecond
	dialRetryMax     = 10 * time.Second
	// httpShutdownTimeout bounds the HTTP server's shutdown, after the leave.
	httpShutdownTimeout = time.Second
	// keptFences is how many fencing records /debug/state keeps.
	keptFences = 16
)

// service is one mesh-node process: the etcd store, the node, its
// transport, its HTTP endpoints and, optionally, its actor writer.
type service struct {
	cfg     config.Config
	log     *slog.Logger
	started time.Time
	// transport is set before the HTTP server starts (its handlers read it).
	transport *meshTransport

	store      atomic.Pointer[etcdstore.Store]
	storeCheck atomic.Pointer[health.Check]
	node       atomic.Pointer[meshnode.Node]
	writer     atomic.Pointer[actorWriter]
	// admitted is the incarnation whose lifecycle generation the listener
	// serves: set when it joined, cleared when its lease stopped being
	// trusted.
	admitted atomic.Pointer[meshnode.Incarnation]
	stopping atomic.Bool

	mu     sync.Mutex
	fences []statedoc.Fence
}

// run runs the node until ctx ends (then it leaves gracefully within
// cfg.ShutdownGrace) or a fatal error.
func run(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	s := &service{cfg: cfg, log: newLogger(cfg, stdout), started: time.Now()}
	reg := prometheus.NewRegistry()
	if err := observe.Register(reg, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return err
	}
	nodeMetrics, err := observe.NewNodeMetrics(reg, observe.NodeOptions{})
	if err != nil {
		return err
	}
	inst, err := etcdobserve.New(etcdobserve.Options{Registerer: reg})
	if err != nil {
		return err
	}
	if err := s.registerMetrics(reg); err != nil {
		return err
	}
	var actors actorMetrics
	if cfg.ActorInterval > 0 {
		if actors, err = newActorMetrics(reg); err != nil {
			return err
		}
	}
	probes, err := health.NewHandler(s.checks()...)
	if err != nil {
		return err
	}

	// The transport before the HTTP server, whose /debug/state reads it.
	s.transport, err = newMeshTransport(cfg.Listen, transportOptions{
		NodeID: cfg.NodeID, Mesh: cfg.Mesh, Dial: cfg.DialPeers, Admit: s.admit, Log: s.log.With("component", "transport"),
	})
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	defer s.transport.Close()

	// HTTP before etcd: the startup and liveness probes pass while the node
	// reaches etcd and joins (readiness waits for it).
	httpLn, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	probes.Install(mux)
	mux.HandleFunc("GET /debug/state", s.serveState)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	httpErr := make(chan error, 1)
	go func() { httpErr <- srv.Serve(httpLn) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	s.log.Info("starting", "version", versionString(), "endpoints", cfg.Endpoints, "prefix", cfg.Prefix, "mesh", cfg.Mesh,
		"advertise", cfg.Advertise, "listen", cfg.Listen, "metricsAddr", cfg.MetricsAddr, "tls", cfg.TLS(), "dialPeers", cfg.DialPeers)

	store, err := s.dial(ctx, inst)
	if err != nil {
		return stoppedEarly(ctx, err)
	}
	defer store.Close()
	if err := reg.Register(etcdobserve.NewStatsCollector(store)); err != nil {
		return err
	}
	check := etcdobserve.StoreCheck(store)
	s.storeCheck.Store(&check)
	s.store.Store(store)

	node, err := meshnode.Join(ctx, s.nodeOptions(store, s.transport, nodeMetrics))
	if err != nil {
		return stoppedEarly(ctx, err)
	}
	s.node.Store(node)
	s.log.Info("joined the mesh", "lifecycle", node.Incarnation().LifecycleGeneration, "leaseGeneration", node.Incarnation().Token.LeaseGeneration)

	writerCtx, stopWriter := context.WithCancel(ctx)
	defer stopWriter()
	var writerDone sync.WaitGroup
	if cfg.ActorInterval > 0 {
		w := &actorWriter{store: store, node: node, mesh: cfg.Mesh, nodeID: cfg.NodeID, interval: cfg.ActorInterval,
			log: s.log.With("component", "actors"), m: actors}
		s.writer.Store(w)
		writerDone.Go(func() { w.run(writerCtx) })
	}

	select {
	case <-ctx.Done():
	case <-node.Done():
		stopWriter()
		writerDone.Wait()
		return fmt.Errorf("the node ended by itself: %w", node.Err())
	case err := <-httpErr:
		stopWriter()
		writerDone.Wait()
		node.Orphan()
		return fmt.Errorf("HTTP server on %s: %w", cfg.MetricsAddr, err)
	}

	// SIGTERM: unready at once, stop writing (the write in flight, if any,
	// runs to its outcome: one cancelled on its way could land after the
	// removal), then leave the mesh (loop stopped, every row of the owner
	// removed, lease released), all within the grace budget.
	began := time.Now()
	s.stopping.Store(true)
	s.log.Info("shutting down: leaving the mesh", "grace", cfg.ShutdownGrace.String())
	stopWriter()
	writerDone.Wait()
	lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), began.Add(cfg.ShutdownGrace-httpShutdownTimeout))
	defer cancel()
	if err := node.Leave(lctx); err != nil {
		return fmt.Errorf("leave the mesh within --shutdown-grace %v (the lease ends by itself within its TTL): %w", cfg.ShutdownGrace, err)
	}
	s.log.Info("left the mesh", "took", time.Since(began).Round(time.Millisecond).String(),
		"leaseGeneration", node.Incarnation().Token.LeaseGeneration)
	return nil
}

// stoppedEarly is the result of a start interrupted by err: nil when the
// process was asked to stop (nothing was joined, so nothing is left).
func stoppedEarly(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// newLogger returns the process's logger on w (text or JSON).
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogJSON {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(h).With("node", cfg.NodeID)
}

// gRPC keepalive of the etcd client: a ping after etcdKeepAliveTime
// without traffic from a member, and the connection closed when no answer
// comes within etcdKeepAliveTimeout. Without it a member cut off by a
// network partition (no reset, no FIN: packets just vanish) keeps its
// connection "ready" for as long as TCP retransmits (about 15 minutes),
// and every request the client sends there (a third of them, round robin,
// and the keep-alive stream of the leases that happen to use it) waits for
// its deadline: sessions lose their trust and rejoins keep failing (found
// by the cluster test, docs/reliability.md "Containers under faults").
// 10 s is gRPC's smallest ping interval, above etcd's default
// --grpc-keepalive-min-time (5 s), which would refuse faster pings.
const (
	etcdKeepAliveTime    = 10 * time.Second
	etcdKeepAliveTimeout = 3 * time.Second
)

// storeConfig is the etcd store's configuration of cfg.
func storeConfig(cfg config.Config, log *slog.Logger) etcdstore.Config {
	c := etcdstore.Config{Endpoints: cfg.Endpoints, DialTimeout: cfg.DialTimeout,
		DialOptions: []grpc.DialOption{grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: etcdKeepAliveTime, Timeout: etcdKeepAliveTimeout, PermitWithoutStream: true})},
		Options: etcdstore.Options{Root: cfg.Prefix, Logger: log}}
	if cfg.TLS() {
		c.TLS = &etcdstore.TLSFiles{CAFile: cfg.CACert, CertFile: cfg.Cert, KeyFile: cfg.Key, ServerName: cfg.ServerName}
	}
	return c
}

// dial connects to etcd, retrying while it is unreachable (a pod may start
// before the members answer) until ctx ends. Any other error (a TLS file
// that cannot be used, a bad prefix) is fatal.
func (s *service) dial(ctx context.Context, inst *etcdobserve.Instrumentation) (*etcdstore.Store, error) {
	cfg := inst.Config(storeConfig(s.cfg, s.log.With("component", "store")))
	wait := dialRetryInitial
	for attempt := 1; ; attempt++ {
		store, err := etcdstore.Dial(ctx, cfg)
		if err == nil {
			return store, nil
		}
		if !errors.Is(err, location.ErrUnavailable) {
			return nil, fmt.Errorf("connect to etcd: %w", err)
		}
		s.log.Warn("etcd does not answer yet; retrying", "attempt", attempt, "retryIn", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, dialRetryMax)
	}
}

// nodeOptions are the node's options: its descriptor, timing, transport,
// metrics and the event hook that fences the listener.
func (s *service) nodeOptions(store meshnode.Store, exec autoconnect.Executor, metrics observe.NodeHooks) meshnode.Options {
	o := meshnode.Options{
		Store: store, Executor: exec, Descriptor: descriptor(s.cfg), PublishPeerRow: true,
		Session: session.Options{TTL: s.cfg.LeaseTTL, RenewInterval: s.cfg.RenewInterval, RenewTimeout: s.cfg.RenewTimeout,
			FencingMargin: s.cfg.FencingMargin},
		Logger: s.log, OnEvent: s.onEvent, Metrics: metrics,
	}
	if s.cfg.PollInterval > 0 {
		o.AutoConnect.PollingInterval = &s.cfg.PollInterval
	}
	return o
}

// joinLogOnly joins store as the node cfg describes, without logs, with a
// transport that only logs (no listener, no dialing) and no event
// handler: how checkConfig tries the node's options. Close the transport
// after the node's Leave.
func joinLogOnly(ctx context.Context, cfg config.Config, store meshnode.Store) (*meshnode.Node, *meshTransport, error) {
	quiet := slog.New(slog.DiscardHandler)
	s := &service{cfg: cfg, log: quiet}
	logOnly, err := newMeshTransport("", transportOptions{NodeID: cfg.NodeID, Mesh: cfg.Mesh, Log: quiet})
	if err != nil {
		return nil, nil, err
	}
	o := s.nodeOptions(store, logOnly, nil)
	o.OnEvent = nil
	node, err := meshnode.Join(ctx, o)
	if err != nil {
		logOnly.Close()
		return nil, nil, err
	}
	return node, logOnly, nil
}

// descriptor is the node's mesh-node descriptor: a serving node that hosts
// the example's actors, without capacity limits.
func descriptor(cfg config.Config) location.MeshNodeDescriptor {
	return location.MeshNodeDescriptor{
		MeshName: cfg.Mesh, RID: location.RoutingID(cfg.NodeID), OwnerID: cfg.NodeID,
		Endpoint: cfg.MeshEndpoint(), ObjectRole: location.RoleServer, State: location.StateServing,
		PlacementWeight: 100, ActivationConcurrency: location.ActivationConcurrency{Limit: 100},
		ChannelWeights: map[string]int64{cfg.Mesh: 100}, ApplicationVersion: 1,
		SpotTypes:          []string{},
		ObjectCapabilities: []location.ObjectCapability{{ObjectKind: location.ObjectActor, StableType: actorType, Policy: location.PolicyRecreate}},
		SecurityIdentity:   "meshnode-example",
	}
}

// onEvent follows the node's incarnations: the listener serves the
// current one only while its lease is trusted, and a lost lease drops
// every inbound connection at once (the node disconnects the outbound
// ones). The node logs the events itself.
func (s *service) onEvent(e meshnode.Event) {
	switch e.Kind {
	case meshnode.EventJoined:
		inc := e.Incarnation
		s.admitted.Store(&inc)
	case meshnode.EventLeaseLost:
		s.admitted.Store(nil)
		s.transport.DropInbound("lease no longer trusted")
		rec := statedoc.Fence{Incarnation: e.Incarnation.Number, Lease: statedoc.Lease{LeaseGeneration: e.Incarnation.Token.LeaseGeneration,
			LifecycleGeneration: e.Incarnation.LifecycleGeneration, TrustedUntil: e.TrustedUntil},
			LeaseLostAt: e.At, InboundDroppedAt: time.Now()}
		if e.Incarnation.Session != nil {
			rec.LastRenewal = e.Incarnation.Session.Status().LastRenewal
		}
		if e.Err != nil {
			rec.Cause = e.Err.Error()
		}
		s.mu.Lock()
		s.fences = append(s.fences, rec)
		if len(s.fences) > keptFences {
			s.fences = s.fences[len(s.fences)-keptFences:]
		}
		s.mu.Unlock()
	case meshnode.EventFenced:
		s.mu.Lock()
		for i := range s.fences {
			if s.fences[i].Incarnation == e.Incarnation.Number {
				s.fences[i].FencedAt = e.At
			}
		}
		s.mu.Unlock()
	}
}

// admit is the transport's Admit: serve a peer that dials lifecycle
// generation lifecycle only while that is the joined incarnation's and its
// lease is trusted.
func (s *service) admit(lifecycle int64) error {
	inc := s.admitted.Load()
	switch {
	case s.stopping.Load():
		return errors.New("this node is leaving the mesh")
	case inc == nil:
		return errors.New("this node is not joined (or its lease is not trusted)")
	case inc.LifecycleGeneration != lifecycle:
		return fmt.Errorf("lifecycle generation %d is not this node's current one (%d)", lifecycle, inc.LifecycleGeneration)
	case !inc.Session.Valid():
		return errors.New("this node's lease is not trusted")
	}
	return nil
}

// checks are the health checks: /livez is the handler's ping only (a
// restart fixes none of these); /readyz needs etcd answering, the lease
// trusted, auto-connect reading the store, and no shutdown under way.
func (s *service) checks() []health.Check {
	return []health.Check{
		{Name: "etcd", Run: func(ctx context.Context) error {
			c := s.storeCheck.Load()
			if c == nil {
				return errors.New("not connected to etcd yet")
			}
			return c.Run(ctx)
		}},
		{Name: "session", Run: func(ctx context.Context) error {
			n := s.node.Load()
			if n == nil {
				return errors.New("not joined yet")
			}
			return health.SessionCheck(n).Run(ctx)
		}},
		{Name: "autoconnect", Run: func(ctx context.Context) error {
			n := s.node.Load()
			if n == nil {
				return errors.New("not joined yet")
			}
			return health.AutoConnectCheck(n).Run(ctx)
		}},
		{Name: "shutdown", Run: func(context.Context) error {
			if s.stopping.Load() {
				return errors.New("shutting down: leaving the mesh")
			}
			return nil
		}},
	}
}

// registerMetrics registers the example's own gauges: the open links by
// direction and the current incarnation.
func (s *service) registerMetrics(reg prometheus.Registerer) error {
	links := func(dir direction) func() float64 {
		return func() float64 {
			if s.transport == nil {
				return 0
			}
			n := 0
			for _, l := range s.transport.Links() {
				if l.Direction == string(dir) {
					n++
				}
			}
			return float64(n)
		}
	}
	var cs []prometheus.Collector
	for _, dir := range []direction{outbound, inbound} {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zlink_example_mesh_links",
			Help:        "Open mesh connections to peers, by who dialed (out: this node).",
			ConstLabels: prometheus.Labels{"direction": string(dir)}}, links(dir)))
	}
	cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zlink_example_node_incarnation",
		Help: "The node's current incarnation (1 for its first lease; +1 per rejoin); 0 before it joined."},
		func() float64 {
			if n := s.node.Load(); n != nil {
				return float64(n.Incarnation().Number)
			}
			return 0
		}))
	return observe.Register(reg, cs...)
}

// effectiveTiming is the session and auto-connect timing in effect (the
// packages' defaults for the flags left at 0).
func effectiveTiming(cfg config.Config) statedoc.Timing {
	or := func(v, def time.Duration) statedoc.Duration {
		if v == 0 {
			return statedoc.Duration(def)
		}
		return statedoc.Duration(v)
	}
	return statedoc.Timing{
		LeaseTTL: or(cfg.LeaseTTL, session.DefaultTTL), RenewInterval: or(cfg.RenewInterval, session.DefaultRenewInterval),
		RenewTimeout: or(cfg.RenewTimeout, session.DefaultRenewTimeout), FencingMargin: or(cfg.FencingMargin, session.DefaultFencingMargin),
		PollInterval: or(cfg.PollInterval, autoconnect.DefaultPollingInterval),
	}
}

// state returns the node's state document.
func (s *service) state() statedoc.State {
	d := statedoc.State{Time: time.Now(), NodeID: s.cfg.NodeID, Mesh: s.cfg.Mesh, Endpoint: s.cfg.MeshEndpoint(),
		Version: versionString(), StartedAt: s.started, Timing: effectiveTiming(s.cfg), Phase: "starting",
		Stopping: s.stopping.Load(), Peers: []string{}, Links: []statedoc.Link{}, Fences: []statedoc.Fence{}}
	if n := s.node.Load(); n != nil {
		st := n.State()
		d.Phase, d.Trusted, d.StoreFailed = string(st.Phase), st.Trusted, st.StoreFailed
		d.Desired, d.Connected, d.Ticks, d.LeaseLosses = st.Desired, st.Connected, st.Ticks, st.LeaseLosses
		d.JoinAttempts = st.JoinAttempts
		if st.LastLoss != nil {
			d.LastLoss = st.LastLoss.Error()
		}
		if st.LastJoinError != nil {
			d.LastJoinError = st.LastJoinError.Error()
		}
		inc := st.Incarnation
		d.Incarnation = &statedoc.Incarnation{Number: inc.Number, Lease: statedoc.Lease{LeaseGeneration: inc.Token.LeaseGeneration,
			LifecycleGeneration: inc.LifecycleGeneration, LastRenewal: st.Session.LastRenewal, TrustedUntil: st.Session.TrustedUntil},
			Renewals: st.Session.Renewals, RenewalFailures: st.Session.Failures}
		if st.Session.LastError != nil {
			d.Incarnation.LastRenewalError = st.Session.LastError.Error()
		}
	} else if s.store.Load() != nil {
		d.Phase = string(meshnode.PhaseJoining)
	}
	if s.transport != nil {
		d.Links = append(d.Links, s.transport.Links()...)
		for _, l := range d.Links {
			if len(d.Peers) == 0 || d.Peers[len(d.Peers)-1] != l.Peer {
				d.Peers = append(d.Peers, l.Peer)
			}
		}
	}
	s.mu.Lock()
	d.Fences = append(d.Fences, s.fences...)
	s.mu.Unlock()
	if w := s.writer.Load(); w != nil {
		st := w.Stats()
		d.Actors = &st
	}
	return d
}

// serveState answers GET /debug/state.
func (s *service) serveState(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s.state())
}

// checkConfig is --check-config: the TLS files are read and checked as the
// store reads them, the node's options (descriptor, session and
// auto-connect timing) are checked by joining an in-memory store (nothing
// is sent to etcd), and the configuration in effect is printed as JSON.
func checkConfig(ctx context.Context, cfg config.Config, w io.Writer) error {
	if _, err := storeConfig(cfg, nil).ClientConfig(); err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	node, logOnly, err := joinLogOnly(ctx, cfg, memstore.New(memstore.Options{}))
	if err != nil {
		return fmt.Errorf("the node's options: %w", err)
	}
	defer logOnly.Close()
	if err := node.Leave(ctx); err != nil {
		return fmt.Errorf("the node's options: leave the in-memory store: %w", err)
	}
	out := struct {
		Endpoints     []string          `json:"endpoints"`
		Prefix        string            `json:"prefix"`
		TLS           bool              `json:"tls"`
		CACert        string            `json:"cacert,omitempty"`
		Cert          string            `json:"cert,omitempty"`
		Key           string            `json:"key,omitempty"`
		ServerName    string            `json:"serverName,omitempty"`
		DialTimeout   statedoc.Duration `json:"dialTimeout"`
		Mesh          string            `json:"mesh"`
		NodeID        string            `json:"nodeId"`
		Endpoint      string            `json:"endpoint"`
		Listen        string            `json:"listen"`
		MetricsAddr   string            `json:"metricsAddr"`
		Timing        statedoc.Timing   `json:"timing"`
		ShutdownGrace statedoc.Duration `json:"shutdownGrace"`
		DialPeers     bool              `json:"dialPeers"`
		ActorInterval statedoc.Duration `json:"actorInterval"`
		LogJSON       bool              `json:"logJson"`
		LogLevel      string            `json:"logLevel"`
	}{cfg.Endpoints, cfg.Prefix, cfg.TLS(), cfg.CACert, cfg.Cert, cfg.Key, cfg.ServerName, statedoc.Duration(cfg.DialTimeout),
		cfg.Mesh, cfg.NodeID, cfg.MeshEndpoint(), cfg.Listen, cfg.MetricsAddr, effectiveTiming(cfg),
		statedoc.Duration(cfg.ShutdownGrace), cfg.DialPeers, statedoc.Duration(cfg.ActorInterval), cfg.LogJSON, cfg.LogLevel.String()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
