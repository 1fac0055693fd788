package config

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

// env is a fake environment.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// base is the environment the Kubernetes Deployment gives the node.
func base() env {
	return env{
		"ZLINK_ETCD_ENDPOINTS": "https://etcd-0.etcd.zlink.svc:2379,https://etcd-1.etcd.zlink.svc:2379",
		"ZLINK_ETCD_PREFIX":    "/zlink/v1/",
		"ZLINK_MESH":           "example",
		"POD_NAME":             "meshnode-7d9f-x2x8z",
		"POD_IP":               "10.1.2.3",
		"ZLINK_ADVERTISE":      "10.1.2.3:7100",
	}
}

// parseWith parses args over the base environment, changed by edit (nil:
// as it is).
func parseWith(args []string, edit func(env)) (Config, error) {
	e := base()
	if edit != nil {
		edit(e)
	}
	return Parse(args, e.get)
}

func TestParse(t *testing.T) {
	tlsArgs := []string{"--cacert=/etc/zlink/etcd/ca.crt", "--cert=/etc/zlink/etcd/tls.crt", "--key=/etc/zlink/etcd/tls.key", "--metrics-addr=:9090"}
	want := Config{
		Endpoints: []string{"https://etcd-0.etcd.zlink.svc:2379", "https://etcd-1.etcd.zlink.svc:2379"},
		Prefix:    "/zlink/v1/", Mesh: "example", NodeID: "meshnode-7d9f-x2x8z", Advertise: "10.1.2.3:7100",
		Listen: ":7100", MetricsAddr: ":9090",
		CACert: "/etc/zlink/etcd/ca.crt", Cert: "/etc/zlink/etcd/tls.crt", Key: "/etc/zlink/etcd/tls.key",
		DialTimeout: 5 * time.Second, ShutdownGrace: 25 * time.Second, DialPeers: true, LogLevel: slog.LevelInfo,
	}
	with := func(f func(*Config)) Config {
		c := want
		c.Endpoints = append([]string(nil), want.Endpoints...)
		f(&c)
		return c
	}
	tests := []struct {
		name string
		args []string
		env  func(env)
		want Config
	}{
		{name: "the Deployment's arguments and environment", args: tlsArgs, want: want},
		{name: "advertise defaults to POD_IP and the listen port", args: append(tlsArgs, "--listen=:7200"),
			env:  func(e env) { delete(e, "ZLINK_ADVERTISE") },
			want: with(func(c *Config) { c.Listen, c.Advertise = ":7200", "10.1.2.3:7200" })},
		{name: "an IPv6 pod address", args: tlsArgs,
			env:  func(e env) { delete(e, "ZLINK_ADVERTISE"); e["POD_IP"] = "fd00::7" },
			want: with(func(c *Config) { c.Advertise = "[fd00::7]:7100" })},
		{name: "node id from HOSTNAME without POD_NAME", args: tlsArgs,
			env:  func(e env) { delete(e, "POD_NAME"); e["HOSTNAME"] = "host-1" },
			want: with(func(c *Config) { c.NodeID = "host-1" })},
		{name: "ZLINK_NODE_ID wins over POD_NAME", args: tlsArgs,
			env:  func(e env) { e["ZLINK_NODE_ID"] = "node-9" },
			want: with(func(c *Config) { c.NodeID = "node-9" })},
		{name: "a flag wins over its variable", args: append(tlsArgs, "--mesh=games", "--node-id=n1", "--endpoints=http://127.0.0.1:2379"),
			env: func(e env) { e["ZLINK_NODE_ID"] = "node-9" },
			want: with(func(c *Config) {
				c.Mesh, c.NodeID, c.Endpoints = "games", "n1", []string{"http://127.0.0.1:2379"}
			})},
		{name: "every variable", env: func(e env) {
			for k, v := range map[string]string{
				"ZLINK_ETCD_CACERT": "/ca", "ZLINK_ETCD_CERT": "/crt", "ZLINK_ETCD_KEY": "/key", "ZLINK_ETCD_SERVER_NAME": "etcd.example",
				"ZLINK_ETCD_DIAL_TIMEOUT": "2s", "ZLINK_LISTEN": "0.0.0.0:7300", "ZLINK_METRICS_ADDR": "127.0.0.1:9191",
				"ZLINK_LEASE_TTL": "10s", "ZLINK_RENEW_INTERVAL": "2s", "ZLINK_RENEW_TIMEOUT": "1s", "ZLINK_FENCING_MARGIN": "3s",
				"ZLINK_POLL_INTERVAL": "500ms", "ZLINK_SHUTDOWN_GRACE": "20s", "ZLINK_DIAL_PEERS": "false",
				"ZLINK_ACTOR_INTERVAL": "2s", "ZLINK_LOG_FORMAT": "json", "ZLINK_LOG_LEVEL": "debug",
			} {
				e[k] = v
			}
		}, want: Config{
			Endpoints: want.Endpoints, Prefix: "/zlink/v1/", Mesh: "example", NodeID: "meshnode-7d9f-x2x8z", Advertise: "10.1.2.3:7100",
			Listen: "0.0.0.0:7300", MetricsAddr: "127.0.0.1:9191", CACert: "/ca", Cert: "/crt", Key: "/key", ServerName: "etcd.example",
			DialTimeout: 2 * time.Second, LeaseTTL: 10 * time.Second, RenewInterval: 2 * time.Second, RenewTimeout: time.Second,
			FencingMargin: 3 * time.Second, PollInterval: 500 * time.Millisecond, ShutdownGrace: 20 * time.Second,
			ActorInterval: 2 * time.Second, LogJSON: true, LogLevel: slog.LevelDebug,
		}},
		{name: "--version needs nothing else", args: []string{"--version"}, env: func(e env) { clear(e) },
			want: Config{Prefix: "/zlink/v1/", Listen: ":7100", MetricsAddr: ":9090", DialTimeout: 5 * time.Second,
				ShutdownGrace: 25 * time.Second, DialPeers: true, Version: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWith(tc.args, tc.env)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  func(env)
		want string
	}{
		{"no endpoints", nil, func(e env) { delete(e, "ZLINK_ETCD_ENDPOINTS") }, "no etcd endpoints: give --endpoints or set ZLINK_ETCD_ENDPOINTS"},
		{"endpoints of commas", []string{"--endpoints=,,"}, nil, `--endpoints ",," names no endpoint`},
		{"an endpoint without scheme", []string{"--endpoints=etcd-0:2379"}, nil, `--endpoints: "etcd-0:2379" is not an etcd client URL`},
		{"mixed schemes", []string{"--endpoints=http://a:2379,https://b:2379"}, nil, "--endpoints mixes http:// and https:// URLs"},
		{"an unexpanded variable", nil, func(e env) { e["ZLINK_ADVERTISE"] = "$(POD_IP):7100" },
			`--advertise "$(POD_IP):7100" holds the unexpanded variable reference $(POD_IP): the variable POD_IP is not set`},
		{"a prefix without the slash", []string{"--prefix=/zlink/v1"}, nil, `--prefix "/zlink/v1" must start and end with '/'`},
		{"no mesh", nil, func(e env) { delete(e, "ZLINK_MESH") }, "no mesh: give --mesh or set ZLINK_MESH"},
		{"no node id", nil, func(e env) { delete(e, "POD_NAME") }, "no node id: give --node-id, or set ZLINK_NODE_ID or POD_NAME"},
		{"a certificate without its key", []string{"--cert=/c"}, nil, "--cert and --key go together"},
		{"no advertised address", nil, func(e env) { delete(e, "ZLINK_ADVERTISE"); delete(e, "POD_IP") }, "no advertised address"},
		{"an advertised address without host", []string{"--advertise=:7100"}, nil, `--advertise ":7100" has no host`},
		{"an advertised address without port", []string{"--advertise=10.0.0.1"}, nil, `--advertise "10.0.0.1" is not host:port`},
		{"a port out of range", []string{"--listen=:70000"}, nil, `--listen ":70000": port "70000" must be a number in 1..65535`},
		{"a negative TTL", []string{"--lease-ttl=-1s"}, nil, "--lease-ttl -1s must be positive, or 0 for the default"},
		{"no shutdown grace", []string{"--shutdown-grace=0s"}, nil, "--shutdown-grace 0s must be positive"},
		{"a bad variable", nil, func(e env) { e["ZLINK_LEASE_TTL"] = "ten" }, `ZLINK_LEASE_TTL="ten" is not a valid --lease-ttl`},
		{"a bad log format", []string{"--log-format=xml"}, nil, `--log-format "xml" must be text or json`},
		{"a bad log level", []string{"--log-level=loud"}, nil, `--log-level "loud" must be debug, info, warn or error`},
		{"an unknown flag", []string{"--meshh=x"}, nil, "flag provided but not defined: -meshh"},
		{"an argument", []string{"run"}, nil, `unexpected argument "run"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseWith(tc.args, tc.env)
			var u *UsageError
			if !errors.As(err, &u) {
				t.Fatalf("Parse: %v, want a *UsageError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	if _, err := Parse([]string{"--help"}, base().get); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(--help): %v, want flag.ErrHelp", err)
	}
	var b bytes.Buffer
	Usage(&b)
	for _, s := range Settings() {
		if !strings.Contains(b.String(), "-"+s.Flag) || !strings.Contains(b.String(), "[$"+s.Env+"]") {
			t.Errorf("help does not name --%s with $%s:\n%s", s.Flag, s.Env, b.String())
		}
	}
}
