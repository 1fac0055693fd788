package etcdobserve_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// TestMain runs the tests with one embedded etcd member shared by them
// (the health test starts its own, to stop it), and fails them when any
// goroutine outlives them. The member stops before the leak check.
func TestMain(m *testing.M) { goleak.VerifyTestMain(etcdtest.Shared(m)) }
