package main

import (
	"flag"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
)

func TestConnFlagsCheck(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    connConfig
		wantErr string
	}{
		{name: "defaults: embedded", args: nil,
			want: connConfig{Prefix: "/zlink/v1/", DialTimeout: 5 * time.Second, LogLevel: slog.LevelWarn}},
		{name: "endpoints split and trimmed", args: []string{"--endpoints", " http://a:2379, ,http://b:2379"},
			want: connConfig{Endpoints: []string{"http://a:2379", "http://b:2379"}, Prefix: "/zlink/v1/", DialTimeout: 5 * time.Second, LogLevel: slog.LevelWarn}},
		{name: "tls and user", args: []string{"--endpoints=https://a:2379", "--cacert=ca.pem", "--cert=c.pem", "--key=k.pem", "--user=alice:s3:cret", "--prefix=/t/", "--dial-timeout=2s", "--log-level=debug"},
			want: connConfig{Endpoints: []string{"https://a:2379"}, TLS: &etcdstore.TLSFiles{CertFile: "c.pem", KeyFile: "k.pem", CAFile: "ca.pem"},
				Username: "alice", Password: "s3:cret", Prefix: "/t/", DialTimeout: 2 * time.Second, LogLevel: slog.LevelDebug}},
		{name: "password flag", args: []string{"--endpoints=a:1", "--user=bob", "--password=pw"},
			want: connConfig{Endpoints: []string{"a:1"}, Username: "bob", Password: "pw", Prefix: "/zlink/v1/", DialTimeout: 5 * time.Second, LogLevel: slog.LevelWarn}},
		{name: "cacert alone", args: []string{"--endpoints=https://a:1", "--cacert=ca.pem"},
			want: connConfig{Endpoints: []string{"https://a:1"}, TLS: &etcdstore.TLSFiles{CAFile: "ca.pem"}, Prefix: "/zlink/v1/", DialTimeout: 5 * time.Second, LogLevel: slog.LevelWarn}},
		{name: "cert without key", args: []string{"--endpoints=a:1", "--cert=c.pem"}, wantErr: "--cert and --key go together"},
		{name: "key without cert", args: []string{"--endpoints=a:1", "--key=k.pem"}, wantErr: "--cert and --key go together"},
		{name: "user without password", args: []string{"--endpoints=a:1", "--user=bob"}, wantErr: "needs a password"},
		{name: "user without name", args: []string{"--endpoints=a:1", "--user=:pw"}, wantErr: "has no user name"},
		{name: "password twice", args: []string{"--endpoints=a:1", "--user=bob:x", "--password=y"}, wantErr: "not both"},
		{name: "password without user", args: []string{"--endpoints=a:1", "--password=y"}, wantErr: "--password needs --user"},
		{name: "prefix without slash", args: []string{"--prefix=/zlink"}, wantErr: "--prefix"},
		{name: "empty prefix", args: []string{"--prefix="}, wantErr: "--prefix"},
		{name: "no endpoint in list", args: []string{"--endpoints= , "}, wantErr: "names no endpoint"},
		{name: "zero dial timeout", args: []string{"--dial-timeout=0s"}, wantErr: "--dial-timeout"},
		{name: "tls on embedded", args: []string{"--cacert=ca.pem"}, wantErr: "need --endpoints"},
		{name: "user on embedded", args: []string{"--user=a:b"}, wantErr: "need --endpoints"},
		{name: "bad log level", args: []string{"--log-level=loud"}, wantErr: "--log-level"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConnFlags()
			fs := newFlagSet("test", &c)
			_, err := parseArgs(fs, tc.args)
			require.NoError(t, err)
			got, err := c.check()
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.args...)
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
		require.Contains(t, r.stdout, "--endpoints")
	}
	for _, c := range commands() {
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}} {
			r := runCmd(t, args...)
			require.Equal(t, exitOK, r.code, args)
			require.Contains(t, r.stdout, "Usage: zlinketcd "+c.name)
			require.Contains(t, r.stdout, "Connection flags:")
			require.Contains(t, r.stdout, "--dial-timeout")
		}
	}
}
