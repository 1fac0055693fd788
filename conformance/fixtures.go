package conformance

import "time"

// T0 is the clock's time at the start of every scenario:
// 2026-07-03T00:00:00.000Z.
func T0() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }
