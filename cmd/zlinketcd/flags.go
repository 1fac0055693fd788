package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/keys"
)

// connFlags are the flags every subcommand shares, in etcdctl's style: how
// to reach the cluster and under which prefix the store lives.
type connFlags struct {
	endpoints   string
	cacert      string
	cert        string
	key         string
	serverName  string
	user        string
	password    string
	prefix      string
	dialTimeout time.Duration
	logLevel    string
}

// register adds the shared flags to fs, bound to c. Both the top-level flag
// set and every subcommand's register them, so they may be given before or
// after the subcommand's name.
func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.endpoints, "endpoints", c.endpoints, "comma-separated etcd client URLs; none starts an embedded single-member etcd")
	fs.StringVar(&c.cacert, "cacert", c.cacert, "verify the servers' certificates with this CA bundle (PEM)")
	fs.StringVar(&c.cert, "cert", c.cert, "client certificate (PEM) for clusters that verify clients")
	fs.StringVar(&c.key, "key", c.key, "private key (PEM) of --cert")
	fs.StringVar(&c.serverName, "server-name", c.serverName, "name the servers' certificates must carry, when it differs from the endpoint host")
	fs.StringVar(&c.user, "user", c.user, "etcd user as name:password (or name with --password)")
	fs.StringVar(&c.password, "password", c.password, "password of --user")
	fs.StringVar(&c.prefix, "prefix", c.prefix, "root prefix of the store's keys (must end with '/')")
	fs.DurationVar(&c.dialTimeout, "dial-timeout", c.dialTimeout, "how long to wait for the cluster to answer")
	fs.StringVar(&c.logLevel, "log-level", c.logLevel, "log level on stderr: debug, info, warn or error")
}

// defaultConnFlags are the shared flags' defaults.
func defaultConnFlags() connFlags {
	return connFlags{prefix: keys.DefaultRoot, dialTimeout: etcdstore.DefaultDialTimeout, logLevel: "warn"}
}

// connConfig is the checked meaning of connFlags.
type connConfig struct {
	// Endpoints is empty for the embedded default.
	Endpoints   []string
	TLS         *etcdstore.TLSFiles
	Username    string
	Password    string
	Prefix      string
	DialTimeout time.Duration
	LogLevel    slog.Level
}

// embedded reports whether the command starts its own etcd.
func (c connConfig) embedded() bool { return len(c.Endpoints) == 0 }

// check turns the flags into a connConfig, or a usage error.
func (c connFlags) check() (connConfig, error) {
	cfg := connConfig{Prefix: c.prefix, DialTimeout: c.dialTimeout}
	for _, ep := range strings.Split(c.endpoints, ",") {
		ep = strings.TrimSpace(ep)
		if ep != "" {
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	}
	if strings.TrimSpace(c.endpoints) != "" && len(cfg.Endpoints) == 0 {
		return cfg, usageErrorf("--endpoints %q names no endpoint", c.endpoints)
	}
	if c.dialTimeout <= 0 {
		return cfg, usageErrorf("--dial-timeout must be positive, got %v", c.dialTimeout)
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
			return cfg, usageErrorf("--user %q has no user name", c.user)
		case hasPass && c.password != "":
			return cfg, usageErrorf("give the password either in --user name:password or in --password, not both")
		case !hasPass && c.password == "":
			return cfg, usageErrorf("--user %s needs a password: --user %s:PASSWORD or --password", name, name)
		case !hasPass:
			pass = c.password
		}
		cfg.Username, cfg.Password = name, pass
	} else if c.password != "" {
		return cfg, usageErrorf("--password needs --user")
	}
	if cfg.embedded() && (cfg.TLS != nil || cfg.Username != "") {
		return cfg, usageErrorf("TLS and user flags need --endpoints (the embedded etcd uses neither)")
	}
	level, err := parseLevel(c.logLevel)
	if err != nil {
		return cfg, err
	}
	cfg.LogLevel = level
	return cfg, nil
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
// errors, with the shared flags registered.
func newFlagSet(name string, conn *connFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	conn.register(fs)
	return fs
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
