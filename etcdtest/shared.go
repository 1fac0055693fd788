package etcdtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EnvSharedEndpoints is the environment variable through which RunShared
// hands the shared member's endpoints to the tests of its binary (the
// package keeps no global state). Setting it by hand points the tests at
// any etcd, for example a cluster under a debugger.
const EnvSharedEndpoints = "ZLINK_EMBEDETCD_ENDPOINTS"

// RunShared starts one member for the whole test binary, runs the tests and
// stops the member. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }
//
// When EnvSharedEndpoints is already set, no member is started.
func RunShared(m *testing.M) int {
	if os.Getenv(EnvSharedEndpoints) != "" {
		return m.Run()
	}
	member, err := StartMember(context.Background(), Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest: shared member:", err)
		return 1
	}
	defer func() { _ = member.Close() }()
	if err := os.Setenv(EnvSharedEndpoints, strings.Join(member.Endpoints(), ",")); err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest: shared member:", err)
		return 1
	}
	defer func() { _ = os.Unsetenv(EnvSharedEndpoints) }()
	return m.Run()
}

// Shared returns m's run inside RunShared, for a leak checker that takes a
// Run() int (goleak.VerifyTestMain): the member stops before goroutines are
// counted, so its own do not count.
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(etcdtest.Shared(m)) }
func Shared(m *testing.M) SharedRun { return SharedRun{m: m} }

// SharedRun is a test binary's run inside RunShared (see Shared).
type SharedRun struct{ m *testing.M }

// Run runs the tests inside RunShared and returns their exit code.
func (s SharedRun) Run() int { return RunShared(s.m) }

// TB is the part of testing.TB that Connect and UniquePrefix use (so that
// runners outside go test, such as the conformance suite's, can call them).
type TB interface {
	Helper()
	Name() string
	Fatalf(format string, args ...any)
	Cleanup(func())
	Context() context.Context
}

// Connect returns a client of the shared member (see RunShared), closed when
// the test ends. Without a shared member it starts a private one for the
// test.
func Connect(t TB) *clientv3.Client {
	t.Helper()
	eps := os.Getenv(EnvSharedEndpoints)
	var endpoints []string
	if eps != "" {
		endpoints = strings.Split(eps, ",")
	} else {
		m, err := StartMember(t.Context(), Config{})
		if err != nil {
			t.Fatalf("etcdtest: %v", err)
		}
		t.Cleanup(func() { _ = m.Close() })
		endpoints = m.Endpoints()
	}
	c, err := NewClient(endpoints)
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// UniquePrefix returns a key prefix of the form "/test/<name>-<random>/"
// that no other test (or run) uses, so tests sharing a member never see each
// other's keys.
func UniquePrefix(t TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("etcdtest: random prefix: %v", err)
	}
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		default:
			return '_'
		}
	}, t.Name())
	if len(name) > 80 {
		name = name[:80]
	}
	return "/test/" + name + "-" + hex.EncodeToString(b[:]) + "/"
}
