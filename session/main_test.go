package session_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// TestMain runs the tests with one embedded etcd member shared by the etcd
// tests (those that stop a member start their own), and fails them when
// any goroutine outlives them. The member stops before the leak check.
func TestMain(m *testing.M) { goleak.VerifyTestMain(etcdtest.Shared(m)) }
