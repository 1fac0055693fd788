package integration

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any goroutine outlives its tests (the
// etcd servers' lingering peer connections aside, see
// etcdServerConnections).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdServerConnections()...) }
