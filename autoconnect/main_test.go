package autoconnect

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// TestMain runs the package's tests with one embedded etcd member shared by
// the etcd integration tests and benchmarks, and fails them when any
// goroutine outlives them. The member is stopped before the leak check, so
// its own goroutines do not count.
func TestMain(m *testing.M) { goleak.VerifyTestMain(etcdtest.Shared(m)) }
