// Package config is the example mesh node's configuration: its flags, the
// environment variable behind each flag, the defaults the Kubernetes
// Deployment relies on (the node id from POD_NAME, the advertised address
// from POD_IP), and the checks run before anything connects.
//
// It depends on the standard library only, so that the deploy module's
// tests can run Parse on the Deployment's arguments and environment
// without building the binary (deploy/meshnode_config_test.go).
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of the flags that have one of their own (the session and
// auto-connect timings default to their packages' defaults: 0 here).
const (
	DefaultPrefix        = "/zlink/v1/"
	DefaultListen        = ":7100"
	DefaultMetricsAddr   = ":9090"
	DefaultDialTimeout   = 5 * time.Second
	DefaultShutdownGrace = 25 * time.Second
)

// Config is the checked configuration.
type Config struct {
	// Endpoints are the etcd client URLs.
	Endpoints []string
	// Prefix is the store's root prefix.
	Prefix string
	// Mesh is the mesh the node joins; NodeID its routing id and owner id.
	Mesh   string
	NodeID string
	// Advertise is host:port where the other nodes reach this one's mesh
	// listener; it is published as the descriptor's endpoint tcp://Advertise.
	Advertise string
	// Listen is the mesh listener's address; MetricsAddr the address of
	// /metrics, /livez, /readyz and /debug/state.
	Listen      string
	MetricsAddr string
	// CACert, Cert, Key and ServerName are the etcd client's TLS files
	// (all empty: plain connections).
	CACert, Cert, Key, ServerName string
	// DialTimeout bounds each attempt to reach etcd at start.
	DialTimeout time.Duration
	// LeaseTTL, RenewInterval, RenewTimeout and FencingMargin are the
	// owner-lease session's timing, PollInterval auto-connect's; 0 means
	// the packages' defaults (session.DefaultTTL, …).
	LeaseTTL, RenewInterval, RenewTimeout, FencingMargin time.Duration
	PollInterval                                         time.Duration
	// ShutdownGrace bounds the graceful leave after SIGTERM.
	ShutdownGrace time.Duration
	// DialPeers makes the executor open a TCP connection to every peer it
	// connects to; without it the executor only logs.
	DialPeers bool
	// ActorInterval, when positive, makes the node create one actor on
	// itself per interval (authority record and actor row).
	ActorInterval time.Duration
	// LogJSON selects JSON logs; LogLevel their level.
	LogJSON  bool
	LogLevel slog.Level
	// CheckConfig: print the configuration and exit. Version: print the
	// version and exit.
	CheckConfig bool
	Version     bool
}

// TLS reports whether the etcd client uses TLS.
func (c Config) TLS() bool {
	return c.CACert != "" || c.Cert != "" || c.Key != "" || c.ServerName != ""
}

// MeshEndpoint is the endpoint the node publishes: tcp://Advertise.
func (c Config) MeshEndpoint() string { return "tcp://" + c.Advertise }

// UsageError is a configuration the node refuses: the process exits with
// status 2 and the message.
type UsageError struct{ msg string }

// Error implements error.
func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// Setting is one flag and the environment variable that sets it when the
// flag is not given.
type Setting struct {
	Flag, Env string
}

// Settings lists every flag that an environment variable can set, in the
// order of the help. POD_NAME, HOSTNAME and POD_IP are read too (see
// Parse); GOMEMLIMIT is the Go runtime's.
func Settings() []Setting {
	return []Setting{
		{"endpoints", "ZLINK_ETCD_ENDPOINTS"},
		{"prefix", "ZLINK_ETCD_PREFIX"},
		{"cacert", "ZLINK_ETCD_CACERT"},
		{"cert", "ZLINK_ETCD_CERT"},
		{"key", "ZLINK_ETCD_KEY"},
		{"server-name", "ZLINK_ETCD_SERVER_NAME"},
		{"dial-timeout", "ZLINK_ETCD_DIAL_TIMEOUT"},
		{"mesh", "ZLINK_MESH"},
		{"node-id", "ZLINK_NODE_ID"},
		{"advertise", "ZLINK_ADVERTISE"},
		{"listen", "ZLINK_LISTEN"},
		{"metrics-addr", "ZLINK_METRICS_ADDR"},
		{"lease-ttl", "ZLINK_LEASE_TTL"},
		{"renew-interval", "ZLINK_RENEW_INTERVAL"},
		{"renew-timeout", "ZLINK_RENEW_TIMEOUT"},
		{"fencing-margin", "ZLINK_FENCING_MARGIN"},
		{"poll-interval", "ZLINK_POLL_INTERVAL"},
		{"shutdown-grace", "ZLINK_SHUTDOWN_GRACE"},
		{"dial-peers", "ZLINK_DIAL_PEERS"},
		{"actor-interval", "ZLINK_ACTOR_INTERVAL"},
		{"log-format", "ZLINK_LOG_FORMAT"},
		{"log-level", "ZLINK_LOG_LEVEL"},
	}
}

// raw holds the flags as parsed, before the checks.
type raw struct {
	endpoints, prefix, cacert, cert, key, serverName string
	mesh, nodeID, advertise, listen, metricsAddr     string
	logFormat, logLevel                              string
	dialTimeout, ttl, renewInterval, renewTimeout    time.Duration
	margin, poll, grace, actorInterval               time.Duration
	dialPeers, checkConfig, version                  bool
}

// flagSet returns the flag set Parse uses, bound to r; its usage strings
// name each flag's environment variable.
func (r *raw) flagSet(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("meshnode", flag.ContinueOnError)
	fs.SetOutput(out)
	env := map[string]string{}
	for _, s := range Settings() {
		env[s.Flag] = s.Env
	}
	u := func(name, text string) string {
		if e, ok := env[name]; ok {
			return text + " [$" + e + "]"
		}
		return text
	}
	fs.StringVar(&r.endpoints, "endpoints", "", u("endpoints", "comma-separated etcd client URLs (required)"))
	fs.StringVar(&r.prefix, "prefix", DefaultPrefix, u("prefix", "root prefix of the store's keys (ends with '/')"))
	fs.StringVar(&r.cacert, "cacert", "", u("cacert", "CA bundle that verifies the etcd servers (PEM)"))
	fs.StringVar(&r.cert, "cert", "", u("cert", "etcd client certificate (PEM); its CommonName is the etcd user"))
	fs.StringVar(&r.key, "key", "", u("key", "private key of --cert (PEM)"))
	fs.StringVar(&r.serverName, "server-name", "", u("server-name", "name required in the etcd servers' certificates, when it differs from the endpoints' hosts"))
	fs.DurationVar(&r.dialTimeout, "dial-timeout", DefaultDialTimeout, u("dial-timeout", "how long each attempt to reach etcd at start may take"))
	fs.StringVar(&r.mesh, "mesh", "", u("mesh", "name of the mesh to join (required)"))
	fs.StringVar(&r.nodeID, "node-id", "", u("node-id", "the node's routing id and owner id (default $POD_NAME, else $HOSTNAME)"))
	fs.StringVar(&r.advertise, "advertise", "", u("advertise", "host:port where the other nodes reach this one (default $POD_IP and the port of --listen)"))
	fs.StringVar(&r.listen, "listen", DefaultListen, u("listen", "address of the mesh listener"))
	fs.StringVar(&r.metricsAddr, "metrics-addr", DefaultMetricsAddr, u("metrics-addr", "address of /metrics, /livez, /readyz and /debug/state"))
	fs.DurationVar(&r.ttl, "lease-ttl", 0, u("lease-ttl", "owner-lease TTL (0: the session package's default, 15s)"))
	fs.DurationVar(&r.renewInterval, "renew-interval", 0, u("renew-interval", "owner-lease renewal interval (0: default, 5s)"))
	fs.DurationVar(&r.renewTimeout, "renew-timeout", 0, u("renew-timeout", "bound of one renewal (0: default, 3s)"))
	fs.DurationVar(&r.margin, "fencing-margin", 0, u("fencing-margin", "the lease is trusted until TTL minus this after a confirmed renewal (0: default, 5s)"))
	fs.DurationVar(&r.poll, "poll-interval", 0, u("poll-interval", "auto-connect polling interval (0: default, 1s)"))
	fs.DurationVar(&r.grace, "shutdown-grace", DefaultShutdownGrace, u("shutdown-grace", "after SIGTERM, the time the graceful leave may take (keep it under terminationGracePeriodSeconds)"))
	fs.BoolVar(&r.dialPeers, "dial-peers", true, u("dial-peers", "open a TCP connection to each peer connected to (false: only log)"))
	fs.DurationVar(&r.actorInterval, "actor-interval", 0, u("actor-interval", "create one actor on this node per interval (0: none)"))
	fs.StringVar(&r.logFormat, "log-format", "text", u("log-format", "log format on stdout: text or json"))
	fs.StringVar(&r.logLevel, "log-level", "info", u("log-level", "log level: debug, info, warn or error"))
	fs.BoolVar(&r.checkConfig, "check-config", false, "check the flags and environment (and that the TLS files can be used), print the configuration as JSON and exit")
	fs.BoolVar(&r.version, "version", false, "print the version and exit")
	return fs
}

// Usage writes the flags' help to w.
func Usage(w io.Writer) {
	var r raw
	fs := r.flagSet(w)
	fmt.Fprintf(w, "usage: meshnode [flags]\n\nA zlink mesh node on etcd (examples/meshnode). Every flag but --check-config and --version\ncan also be set by the environment variable in brackets; a flag given wins.\n\n")
	fs.PrintDefaults()
}

// unexpanded matches a Kubernetes variable reference that was not
// expanded because the variable is not defined ("$(NAME)").
var unexpanded = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// Parse reads the configuration from the command line (args, without the
// program name) and the environment (getenv): a flag given on the command
// line wins over its variable, the variable over the default. Besides the
// variables of Settings it reads POD_NAME and HOSTNAME (the default node
// id, in this order) and POD_IP (with the port of --listen, the default
// advertised address). -h and --help return flag.ErrHelp. Every other
// error is a *UsageError that names the flag or the variable to fix.
func Parse(args []string, getenv func(string) string) (Config, error) {
	var r raw
	fs := r.flagSet(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return Config{}, usagef("unexpected argument %q: meshnode takes flags only", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range Settings() {
		v := getenv(s.Env)
		if v == "" || given[s.Flag] {
			continue
		}
		if err := fs.Set(s.Flag, v); err != nil {
			return Config{}, usagef("%s=%q is not a valid --%s: %v", s.Env, v, s.Flag, err)
		}
	}
	return r.check(getenv)
}

// check turns the parsed flags into a Config.
func (r raw) check(getenv func(string) string) (Config, error) {
	c := Config{
		Prefix: r.prefix, Mesh: strings.TrimSpace(r.mesh), NodeID: r.nodeID, Advertise: r.advertise,
		Listen: r.listen, MetricsAddr: r.metricsAddr,
		CACert: r.cacert, Cert: r.cert, Key: r.key, ServerName: r.serverName,
		DialTimeout: r.dialTimeout, LeaseTTL: r.ttl, RenewInterval: r.renewInterval, RenewTimeout: r.renewTimeout,
		FencingMargin: r.margin, PollInterval: r.poll, ShutdownGrace: r.grace,
		DialPeers: r.dialPeers, ActorInterval: r.actorInterval,
		CheckConfig: r.checkConfig, Version: r.version,
	}
	if c.Version {
		return c, nil
	}
	if c.NodeID == "" {
		c.NodeID = getenv("POD_NAME")
	}
	if c.NodeID == "" {
		c.NodeID = getenv("HOSTNAME")
	}
	for _, v := range []struct{ flag, value string }{
		{"endpoints", r.endpoints}, {"prefix", c.Prefix}, {"mesh", c.Mesh}, {"node-id", c.NodeID},
		{"advertise", c.Advertise}, {"listen", c.Listen}, {"metrics-addr", c.MetricsAddr},
		{"cacert", c.CACert}, {"cert", c.Cert}, {"key", c.Key}, {"server-name", c.ServerName},
	} {
		if m := unexpanded.FindStringSubmatch(v.value); m != nil {
			return c, usagef("--%s %q holds the unexpanded variable reference %s: the variable %s is not set (in Kubernetes, define it before the variable that uses it)", v.flag, v.value, m[0], m[1])
		}
	}
	var err error
	if c.Endpoints, err = parseEndpoints(r.endpoints); err != nil {
		return c, err
	}
	switch {
	case c.Prefix == "" || !strings.HasPrefix(c.Prefix, "/") || !strings.HasSuffix(c.Prefix, "/"):
		return c, usagef("--prefix %q must start and end with '/' (ZLINK_ETCD_PREFIX)", c.Prefix)
	case c.Mesh == "":
		return c, usagef("no mesh: give --mesh or set ZLINK_MESH")
	case strings.TrimSpace(c.NodeID) == "":
		return c, usagef("no node id: give --node-id, or set ZLINK_NODE_ID or POD_NAME")
	case (c.Cert == "") != (c.Key == ""):
		return c, usagef("--cert and --key go together (ZLINK_ETCD_CERT, ZLINK_ETCD_KEY)")
	}
	if _, err := splitHostPort("listen", c.Listen, true); err != nil {
		return c, err
	}
	if _, err := splitHostPort("metrics-addr", c.MetricsAddr, true); err != nil {
		return c, err
	}
	if c.Advertise == "" {
		ip := getenv("POD_IP")
		if ip == "" {
			return c, usagef("no advertised address: give --advertise host:port, or set ZLINK_ADVERTISE or POD_IP")
		}
		_, port, _ := net.SplitHostPort(c.Listen)
		c.Advertise = net.JoinHostPort(ip, port)
	}
	if _, err := splitHostPort("advertise", c.Advertise, false); err != nil {
		return c, err
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
		zero bool
	}{
		{"dial-timeout", c.DialTimeout, false}, {"shutdown-grace", c.ShutdownGrace, false},
		{"lease-ttl", c.LeaseTTL, true}, {"renew-interval", c.RenewInterval, true}, {"renew-timeout", c.RenewTimeout, true},
		{"fencing-margin", c.FencingMargin, true}, {"poll-interval", c.PollInterval, true}, {"actor-interval", c.ActorInterval, true},
	} {
		if d.v < 0 || d.v == 0 && !d.zero {
			want := "positive"
			if d.zero {
				want = "positive, or 0 for the default"
			}
			return c, usagef("--%s %v must be %s", d.flag, d.v, want)
		}
	}
	switch r.logFormat {
	case "text", "json":
		c.LogJSON = r.logFormat == "json"
	default:
		return c, usagef("--log-format %q must be text or json", r.logFormat)
	}
	if err := c.LogLevel.UnmarshalText([]byte(r.logLevel)); err != nil {
		return c, usagef("--log-level %q must be debug, info, warn or error", r.logLevel)
	}
	return c, nil
}

// parseEndpoints splits --endpoints and checks that each is an http:// or
// https:// URL with a host and nothing after it.
func parseEndpoints(s string) ([]string, error) {
	var eps []string
	for _, ep := range strings.Split(s, ",") {
		if ep = strings.TrimSpace(ep); ep == "" {
			continue
		}
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, usagef("--endpoints: %q is not an etcd client URL (http://host:port or https://host:port)", ep)
		}
		eps = append(eps, ep)
	}
	if len(eps) == 0 {
		if s != "" {
			return nil, usagef("--endpoints %q names no endpoint", s)
		}
		return nil, usagef("no etcd endpoints: give --endpoints or set ZLINK_ETCD_ENDPOINTS")
	}
	if schemes := slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, ep := range eps {
			u, _ := url.Parse(ep)
			if !yield(u.Scheme) {
				return
			}
		}
	})); len(schemes) > 1 {
		return nil, usagef("--endpoints mixes http:// and https:// URLs: %s", strings.Join(eps, ","))
	}
	return eps, nil
}

// splitHostPort checks a host:port flag; anyHost allows an empty host (all
// interfaces), which an advertised address may not have.
func splitHostPort(flagName, addr string, anyHost bool) (int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, usagef("--%s %q is not host:port: %v", flagName, addr, err)
	}
	if host == "" && !anyHost {
		return 0, usagef("--%s %q has no host: the other nodes could not reach it", flagName, addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return 0, usagef("--%s %q: port %q must be a number in 1..65535", flagName, addr, port)
	}
	return n, nil
}
