package main

import (
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
)

func TestConnFlagsCheck(t *testing.T) {
	base := connConfig{Prefix: "/zlink/v1/", DialTimeout: 5 * time.Second, CommandTimeout: 5 * time.Second, LogLevel: slog.LevelWarn}
	with := func(f func(*connConfig)) connConfig {
		c := base
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		use     connUse
		want    connConfig
		wantErr string
	}{
		{name: "no endpoints: open refuses", want: base},
		{name: "no endpoints: demo embeds", use: connEmbeddedDefault, want: with(func(c *connConfig) { c.Embedded = true })},
		{name: "explicit embedded", args: []string{"--embedded"}, want: with(func(c *connConfig) { c.Embedded = true })},
		{name: "embedded and endpoints", args: []string{"--embedded", "--endpoints=http://a:1"}, wantErr: "exclude each other"},
		{name: "empty endpoints flag", args: []string{"--endpoints="}, use: connEmbeddedDefault, wantErr: `--endpoints "" names no endpoint`},
		{name: "no endpoint in list", args: []string{"--endpoints= , "}, wantErr: "names no endpoint"},
		{name: "unexpanded variable", args: []string{"--endpoints=$(ZLINK_ETCD_ENDPOINTS)"},
			wantErr: "unexpanded variable reference $(ZLINK_ETCD_ENDPOINTS): the variable ZLINK_ETCD_ENDPOINTS is not set"},
		{name: "version needs none", use: connNone, want: base},
		{name: "endpoints split and trimmed", args: []string{"--endpoints", " http://a:2379, ,http://b:2379"},
			want: with(func(c *connConfig) { c.Endpoints = []string{"http://a:2379", "http://b:2379"} })},
		{name: "tls and user", args: []string{"--endpoints=https://a:2379", "--cacert=ca.pem", "--cert=c.pem", "--key=k.pem", "--server-name=etcd.test",
			"--user=alice:s3:cret", "--prefix=/t/", "--dial-timeout=2s", "--command-timeout=3s", "--log-level=debug", "--insecure-skip-tls-verify"},
			want: connConfig{Endpoints: []string{"https://a:2379"}, TLS: &etcdstore.TLSFiles{CertFile: "c.pem", KeyFile: "k.pem", CAFile: "ca.pem", ServerName: "etcd.test"},
				InsecureSkipVerify: true, Username: "alice", Password: "s3:cret", Prefix: "/t/", DialTimeout: 2 * time.Second,
				CommandTimeout: 3 * time.Second, LogLevel: slog.LevelDebug}},
		{name: "password flag", args: []string{"--endpoints=a:1", "--user=bob", "--password=pw"},
			want: with(func(c *connConfig) { c.Endpoints, c.Username, c.Password = []string{"a:1"}, "bob", "pw" })},
		{name: "etcdctl environment", env: map[string]string{"ETCDCTL_ENDPOINTS": "https://e:1,https://f:1", "ETCDCTL_CACERT": "ca.pem",
			"ETCDCTL_CERT": "c.pem", "ETCDCTL_KEY": "k.pem", "ETCDCTL_USER": "carol", "ETCDCTL_PASSWORD": "pw",
			"ETCDCTL_DIAL_TIMEOUT": "7s", "ETCDCTL_COMMAND_TIMEOUT": "9s", "ETCDCTL_INSECURE_SKIP_TLS_VERIFY": "true"},
			want: with(func(c *connConfig) {
				c.Endpoints, c.TLS = []string{"https://e:1", "https://f:1"}, &etcdstore.TLSFiles{CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "k.pem"}
				c.Username, c.Password, c.DialTimeout, c.CommandTimeout, c.InsecureSkipVerify = "carol", "pw", 7*time.Second, 9*time.Second, true
			})},
		{name: "flags win over the environment", args: []string{"--endpoints=http://flag:1", "--command-timeout=1s"},
			env:  map[string]string{"ETCDCTL_ENDPOINTS": "http://env:1", "ETCDCTL_COMMAND_TIMEOUT": "9s"},
			want: with(func(c *connConfig) { c.Endpoints, c.CommandTimeout = []string{"http://flag:1"}, time.Second })},
		{name: "an empty variable is unset", env: map[string]string{"ETCDCTL_ENDPOINTS": ""}, want: base},
		{name: "bad variable", args: []string{"--endpoints=a:1"}, env: map[string]string{"ETCDCTL_DIAL_TIMEOUT": "soon"},
			wantErr: `ETCDCTL_DIAL_TIMEOUT="soon" is not a valid --dial-timeout`},
		{name: "cacert alone", args: []string{"--endpoints=https://a:1", "--cacert=ca.pem"},
			want: with(func(c *connConfig) {
				c.Endpoints, c.TLS = []string{"https://a:1"}, &etcdstore.TLSFiles{CAFile: "ca.pem"}
			})},
		{name: "cert without key", args: []string{"--endpoints=a:1", "--cert=c.pem"}, wantErr: "--cert and --key go together"},
		{name: "key without cert", args: []string{"--endpoints=a:1", "--key=k.pem"}, wantErr: "--cert and --key go together"},
		{name: "user without password", args: []string{"--endpoints=a:1", "--user=bob"}, wantErr: "needs a password"},
		{name: "user without name", args: []string{"--endpoints=a:1", "--user=:pw"}, wantErr: "has no user name"},
		{name: "password twice", args: []string{"--endpoints=a:1", "--user=bob:x", "--password=y"}, wantErr: "not both"},
		{name: "password without user", args: []string{"--endpoints=a:1", "--password=y"}, wantErr: "--password needs --user"},
		{name: "prefix without slash", args: []string{"--endpoints=a:1", "--prefix=/zlink"}, wantErr: "--prefix"},
		{name: "empty prefix", args: []string{"--endpoints=a:1", "--prefix="}, wantErr: "--prefix"},
		{name: "zero dial timeout", args: []string{"--endpoints=a:1", "--dial-timeout=0s"}, wantErr: "--dial-timeout"},
		{name: "zero command timeout", args: []string{"--endpoints=a:1", "--command-timeout=0s"}, wantErr: "--command-timeout must be positive"},
		{name: "tls on embedded", args: []string{"--embedded", "--cacert=ca.pem"}, wantErr: "need --endpoints"},
		{name: "embedded default has no endpoints", use: connEmbeddedDefault, args: []string{"--endpoints=http://a:1"},
			want: with(func(c *connConfig) { c.Endpoints = []string{"http://a:1"} })},
		{name: "user on embedded", use: connEmbeddedDefault, args: []string{"--user=a:b"}, wantErr: "need --endpoints"},
		{name: "bad log level", args: []string{"--endpoints=a:1", "--log-level=loud"}, wantErr: "--log-level"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConnFlags()
			fs := newFlagSet("test", &c)
			_, err := parseArgs(fs, tc.args)
			require.NoError(t, err)
			given := givenFlags(fs)
			err = applyEnv(fs, given, func(k string) string { return tc.env[k] })
			var got connConfig
			if err == nil {
				got, err = c.check(tc.use, given)
			}
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.True(t, isUsage(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantPos  []string
		wantOut  string
		wantErr  string
		wantHelp bool
	}{
		{name: "flags then positional", args: []string{"--output", "json", "actors"}, wantPos: []string{"actors"}, wantOut: "json"},
		{name: "positional then flags", args: []string{"actors", "--output=json", "leases"}, wantPos: []string{"actors", "leases"}, wantOut: "json"},
		{name: "double dash ends flags", args: []string{"--", "--output=json"}, wantPos: []string{"--output=json"}, wantOut: "table"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
		{name: "bad value", args: []string{"--n=x"}, wantErr: "invalid value"},
		{name: "help", args: []string{"-h"}, wantHelp: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConnFlags()
			fs := newFlagSet("test", &c)
			out := fs.String("output", "table", "")
			fs.Int("n", 0, "")
			pos, err := parseArgs(fs, tc.args)
			switch {
			case tc.wantHelp:
				require.ErrorIs(t, err, flag.ErrHelp)
			case tc.wantErr != "":
				require.ErrorContains(t, err, tc.wantErr)
				require.True(t, isUsage(err))
			default:
				require.NoError(t, err)
				require.Equal(t, tc.wantPos, pos)
				require.Equal(t, tc.wantOut, *out)
			}
		})
	}
}

// Bad command lines end with one line on stderr and exit status 2, before
// any connection is made.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		fragments []string
	}{
		{name: "unknown command", args: []string{"frobnicate"}, fragments: []string{`unknown command "frobnicate"`, "demo, inspect, gc, check, bench"}},
		{name: "unknown top flag", args: []string{"--nope", "inspect"}, fragments: []string{"flag provided but not defined: -nope"}},
		{name: "unknown sub flag", args: []string{"inspect", "--nope"}, fragments: []string{"zlinketcd: inspect:", "-nope", "zlinketcd help inspect"}},
		{name: "bad output", args: []string{"inspect", "--output=yaml"}, fragments: []string{"--output \"yaml\""}},
		{name: "unknown section", args: []string{"inspect", "bogus"}, fragments: []string{`unknown section "bogus"`}},
		{name: "cert without key", args: []string{"gc", "--endpoints=http://127.0.0.1:1", "--cert=x.pem"}, fragments: []string{"--cert and --key"}},
		{name: "gc argument", args: []string{"gc", "now"}, fragments: []string{"gc takes no arguments"}},
		{name: "demo too few nodes", args: []string{"demo", "--nodes=2"}, fragments: []string{"nodes 2 must be in 3..20"}},
		{name: "demo bad duration", args: []string{"demo", "--poll=fast"}, fragments: []string{"invalid value"}},
		{name: "bench unknown operation", args: []string{"bench", "teleport"}, fragments: []string{`unknown operation "teleport"`}},
		{name: "bench conns above clients", args: []string{"bench", "--clients=2", "--conns=3"}, fragments: []string{"conns 3"}},
		{name: "check bad regexp", args: []string{"check", "--run=("}, fragments: []string{"--run"}},
		{name: "help of unknown", args: []string{"help", "nope"}, fragments: []string{`unknown command "nope"`}},
		{name: "gc terminal age zero", args: []string{"gc", "--terminal-age=0s"}, fragments: []string{"--terminal-age 0s would purge every reservation terminal"}},
		{name: "inspect consistency", args: []string{"inspect", "--consistency=x"}, fragments: []string{`--consistency "x" must be l (linearizable) or s (serializable)`}},
		{name: "auth without setup", args: []string{"auth"}, fragments: []string{"usage: zlinketcd auth setup"}},
		{name: "auth root user", args: []string{"auth", "setup", "--user=root"}, fragments: []string{"--user must not be root"}},
		{name: "version argument", args: []string{"version", "now"}, fragments: []string{"version takes no arguments"}},
		{name: "bad environment", args: []string{"inspect", "--endpoints=http://127.0.0.1:1"}, env: map[string]string{"ETCDCTL_COMMAND_TIMEOUT": "5"},
			fragments: []string{`ETCDCTL_COMMAND_TIMEOUT="5" is not a valid --command-timeout`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runWith(t, runOptions{args: tc.args, env: tc.env})
			requireOneLineError(t, r, exitUsage, tc.fragments...)
			require.Empty(t, r.stdout)
		})
	}
}

func TestHelp(t *testing.T) {
	r := runCmd(t)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "Usage: zlinketcd")

	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		r := runCmd(t, args...)
		require.Equal(t, exitOK, r.code, args)
		for _, c := range commands() {
			require.Contains(t, r.stdout, "  "+c.name+" ")
		}
		require.Contains(t, r.stdout, "--endpoints string")
		require.Contains(t, r.stdout, "[$ETCDCTL_ENDPOINTS]")
		require.Contains(t, r.stdout, "--command-timeout duration")
		requireDefaultsRight(t, r.stdout)
	}
	for _, c := range commands() {
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}} {
			r := runCmd(t, args...)
			require.Equal(t, exitOK, r.code, args)
			require.Contains(t, r.stdout, "Usage: zlinketcd "+c.name)
			requireDefaultsRight(t, r.stdout)
			if c.conn == connNone {
				require.NotContains(t, r.stdout, "Connection flags:")
				continue
			}
			require.Contains(t, r.stdout, "Connection flags:")
			require.Contains(t, r.stdout, "--dial-timeout")
		}
	}
	// help demo prints each default once, and the polling interval's
	// defaults in words (its zero value means "the default").
	r = runCmd(t, "help", "demo")
	require.Regexp(t, `\n  --poll duration\s+auto-connect polling interval \(default 200ms, 50ms with --quick\)\n`, r.stdout)
	require.Regexp(t, `\n  --lease-ttl duration\s+owner-lease TTL of every node \(default 10s\)\n`, r.stdout)
	require.Regexp(t, `\n  --nodes int\s+number of simulated nodes \(3\.\.20\) \(default 5\)\n`, r.stdout)
	// auth setup's --user is the user it creates, not the connection's.
	r = runCmd(t, "help", "auth")
	require.Regexp(t, `Flags:\n(  --.*\n)*  --user string\s+the store's user`, r.stdout)
	require.NotContains(t, r.stdout, "etcd user as name:password")
}

// requireDefaultsRight requires that no help line prints a zero default or
// two defaults.
func requireDefaultsRight(t *testing.T, help string) {
	t.Helper()
	for _, line := range strings.Split(help, "\n") {
		require.LessOrEqual(t, strings.Count(line, "(default "), 1, line)
		for _, zero := range []string{"(default 0s)", "(default 0)", "(default false)", `(default "")`} {
			require.NotContains(t, line, zero)
		}
	}
}
