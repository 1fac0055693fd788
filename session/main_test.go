package session_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// TestMain runs the tests with one embedded etcd member shared by the etcd
// tests (those that stop a member start their own), and fails them when
// any goroutine outlives them. The member stops before the leak check.
// The idle peer connections a stopped three-member cluster leaves behind
// (member_fault_stress_test.go) are not the session's: net/http closes
// them on its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(etcdtest.Shared(m),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).backgroundRead"))
}
