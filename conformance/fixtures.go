package conformance

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
)

// T0 is the clock's time at the start of every scenario:
// 2026-07-03T00:00:00.000Z.
func T0() time.Time { return fixture.T0() }
