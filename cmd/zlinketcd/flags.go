package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/keys"
)

// DefaultCommandTimeout bounds every etcd request, as etcdctl's
// --command-timeout does.
const DefaultCommandTimeout = 5 * time.Second

// connFlags are the flags every subcommand shares, in etcdctl's style: how
// to reach the cluster and under which prefix the store lives.
type connFlags struct {
	endpoints          string
	cacert             string
	cert               string
	key                string
	serverName         string
	insecureSkipVerify bool
	user               string
	password           string
	prefix             string
	dialTimeout        time.Duration
	commandTimeout     time.Duration
	embedded           bool
	logLevel           string
}

// connFlagSpec is one shared flag: its name, the environment variable
// etcdctl reads for it (empty: none), the field it sets (a *string, *bool
// or *time.Duration) and its usage.
type connFlagSpec struct {
	name, env string
	field     any
	usage     string
}

// specs lists the shared flags, bound to c's fields.
func (c *connFlags) specs() []connFlagSpec {
	return []connFlagSpec{
		{"endpoints", "ETCDCTL_ENDPOINTS", &c.endpoints, "comma-separated etcd client URLs"},
		{"cacert", "ETCDCTL_CACERT", &c.cacert, "verify the servers' certificates with this CA bundle (PEM)"},
		{"cert", "ETCDCTL_CERT", &c.cert, "client certificate (PEM) for clusters that verify clients"},
		{"key", "ETCDCTL_KEY", &c.key, "private key (PEM) of --cert"},
		{"server-name", "", &c.serverName, "name sent as SNI and required in the servers' certificates, when it differs from the endpoint host"},
		{"insecure-skip-tls-verify", "ETCDCTL_INSECURE_SKIP_TLS_VERIFY", &c.insecureSkipVerify, "do not verify the servers' certificates (testing only)"},
		{"user", "ETCDCTL_USER", &c.user, "etcd user as name:password (or name with --password)"},
		{"password", "ETCDCTL_PASSWORD", &c.password, "password of --user"},
		{"prefix", "", &c.prefix, "root prefix of the store's keys (must end with '/')"},
		{"dial-timeout", "ETCDCTL_DIAL_TIMEOUT", &c.dialTimeout, "how long to wait for the cluster to answer at first"},
		{"command-timeout", "ETCDCTL_COMMAND_TIMEOUT", &c.commandTimeout, "how long any one etcd request may take"},
		{"embedded", "", &c.embedded, "start a throw-away single-member etcd in a temporary directory instead of --endpoints"},
		{"log-level", "", &c.logLevel, "log level on stderr: debug, info, warn or error"},
	}
}

// define adds the flag to fs, its current value as the default; the usage
// names the environment variable.
func (s connFlagSpec) define(fs *flag.FlagSet) {
	usage := s.usage
	if s.env != "" {
		usage += " [$" + s.env + "]"
	}
	switch p := s.field.(type) {
	case *string:
		fs.StringVar(p, s.name, *p, usage)
	case *bool:
		fs.BoolVar(p, s.name, *p, usage)
	case *time.Duration:
		fs.DurationVar(p, s.name, *p, usage)
	}
}

// etcdctlEnv maps the flags that copy etcdctl's to the environment
// variables etcdctl reads for them. A flag given on the command line wins.
func etcdctlEnv() map[string]string {
	env := map[string]string{}
	for _, s := range new(connFlags).specs() {
		if s.env != "" {
			env[s.name] = s.env
		}
	}
	return env
}

// register adds the shared flags to fs, bound to c, except those named in
// skip. Both the top-level flag set and every subcommand's register them,
// so they may be given before or after the subcommand's name.
func (c *connFlags) register(fs *flag.FlagSet, skip ...string) {
	for _, s := range c.specs() {
		if !slices.Contains(skip, s.name) {
			s.define(fs)
		}
	}
}

// defaultConnFlags are the shared flags' defaults.
func defaultConnFlags() connFlags {
	return connFlags{prefix: keys.DefaultRoot, dialTimeout: etcdstore.DefaultDialTimeout,
		commandTimeout: DefaultCommandTimeout, logLevel: "warn"}
}

// applyEnv copies the ETCDCTL_* variables into the flags of fs that the
// command line did not give (given names them). An invalid value is a
// usage error that names the variable.
func applyEnv(fs *flag.FlagSet, given map[string]bool, getenv func(string) string) error {
	env := etcdctlEnv()
	for _, name := range slices.Sorted(maps.Keys(env)) {
		v := getenv(env[name])
		if v == "" || given[name] || fs.Lookup(name) == nil {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return usageErrorf("%s=%q is not a valid --%s: %v", env[name], v, name, err)
		}
	}
	return nil
}

// connConfig is the checked meaning of connFlags.
type connConfig struct {
	// Endpoints is empty when Embedded.
	Endpoints []string
	// Embedded starts a throw-away member instead.
	Embedded           bool
	TLS                *etcdstore.TLSFiles
	InsecureSkipVerify bool
	Username           string
	Password           string
	Prefix             string
	DialTimeout        time.Duration
	CommandTimeout     time.Duration
	LogLevel           slog.Level
}

// unexpanded matches a Kubernetes variable reference that was not
// expanded because the variable is not defined ("$(NAME)").
var unexpanded = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// connUse says what a subcommand needs of the connection flags.
type connUse int

const (
	// connRequired: the subcommand talks to a cluster, which --endpoints
	// (or ETCDCTL_ENDPOINTS) names, or --embedded starts.
	connRequired connUse = iota
	// connEmbeddedDefault: without endpoints the subcommand starts an
	// embedded etcd (demo).
	connEmbeddedDefault
	// connNone: the subcommand talks to no cluster (version).
	connNone
)

// check turns the flags into a connConfig, or a usage error. given names
// the flags given on the command line.
func (c connFlags) check(use connUse, given map[string]bool) (connConfig, error) {
	cfg := connConfig{Prefix: c.prefix, DialTimeout: c.dialTimeout, CommandTimeout: c.commandTimeout,
		InsecureSkipVerify: c.insecureSkipVerify}
	for name, v := range map[string]string{"endpoints": c.endpoints, "cacert": c.cacert, "cert": c.cert, "key": c.key,
		"server-name": c.serverName, "user": c.user, "prefix": c.prefix} {
		if m := unexpanded.FindStringSubmatch(v); m != nil {
			return cfg, usageErrorf("--%s %q holds the unexpanded variable reference %s: the variable %s is not set", name, v, m[0], m[1])
		}
	}
	for _, ep := range strings.Split(c.endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	}
	switch {
	case given["endpoints"] && len(cfg.Endpoints) == 0:
		return cfg, usageErrorf("--endpoints %q names no endpoint (is the variable it is made of empty?)", c.endpoints)
	case c.embedded && len(cfg.Endpoints) > 0:
		return cfg, usageErrorf("--embedded and --endpoints exclude each other")
	}
	cfg.Embedded = c.embedded || use == connEmbeddedDefault && len(cfg.Endpoints) == 0
	if c.dialTimeout <= 0 {
		return cfg, usageErrorf("--dial-timeout must be positive, got %v", c.dialTimeout)
	}
	if c.commandTimeout <= 0 {
		return cfg, usageErrorf("--command-timeout must be positive, got %v", c.commandTimeout)
	}
	if _, err := keys.NewLayout(c.prefix); err != nil || c.prefix == "" {
		return cfg, usageErrorf("--prefix %q must be non-empty and end with '/'", c.prefix)
	}
	if (c.cert == "") != (c.key == "") {
		return cfg, usageErrorf("--cert and --key go together")
	}
	if c.cacert != "" || c.cert != "" || c.serverName != "" {
		cfg.TLS = &etcdstore.TLSFiles{CertFile: c.cert, KeyFile: c.key, CAFile: c.cacert, ServerName: c.serverName}
	}
	if c.user != "" {
		name, pass, hasPass := strings.Cut(c.user, ":")
		switch {
		case name == "":
			return cfg, usageErrorf("--user has no user name")
		case hasPass && c.password != "":
			return cfg, usageErrorf("give the password either in --user name:password or in --password, not both")
		case !hasPass && c.password == "":
			return cfg, usageErrorf("--user %s needs a password: --user %s:PASSWORD, --password or ETCDCTL_PASSWORD", name, name)
		case !hasPass:
			pass = c.password
		}
		cfg.Username, cfg.Password = name, pass
	} else if c.password != "" {
		return cfg, usageErrorf("--password needs --user")
	}
	if cfg.Embedded && (cfg.TLS != nil || cfg.Username != "" || cfg.InsecureSkipVerify) {
		return cfg, usageErrorf("TLS and user flags need --endpoints (the embedded etcd uses neither)")
	}
	level, err := parseLevel(c.logLevel)
	if err != nil {
		return cfg, err
	}
	cfg.LogLevel = level
	return cfg, nil
}

// errNoEndpoints is the usage error of a subcommand that needs a cluster
// and got no endpoints (reported when it connects, after its own
// arguments were checked).
func errNoEndpoints() error {
	return usageErrorf("no etcd endpoints: give --endpoints or set ETCDCTL_ENDPOINTS (--embedded starts a throw-away etcd instead)")
}

// parseLevel parses a --log-level value.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, usageErrorf("--log-level %q must be debug, info, warn or error", s)
	}
	return l, nil
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

// Error implements error.
func (e *usageError) Error() string { return e.msg }

// usageErrorf returns a usage error.
func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// isUsage reports whether err is a usage error.
func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}

// newFlagSet returns a quiet flag set for a subcommand that reports its own
// errors, with the shared flags (but those in skip) registered.
func newFlagSet(name string, conn *connFlags, skip ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	conn.register(fs, skip...)
	return fs
}

// givenFlags names the flags of fs that the command line set.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// parseArgs parses args with fs, allowing flags after positional
// arguments (as etcdctl does); "--" ends the flags. It returns the
// positional arguments. -h and --help return flag.ErrHelp.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErrorf("%s", err.Error())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// fs.Parse stops at the first positional argument, or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// isZeroDefault reports whether f's default is its type's zero value
// (which help does not print), as the flag package decides it.
func isZeroDefault(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String()
}
