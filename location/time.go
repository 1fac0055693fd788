package location

import "time"

// Epoch returns Unix time 0 in UTC, the UpdatedAt of every failed write result.
func Epoch() time.Time { return time.UnixMilli(0).UTC() }

// Millis truncates t to millisecond precision in UTC, the resolution of every
// time the store keeps or reports.
func Millis(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// Clock supplies the store's notion of now. Stores call it once per operation
// and truncate the answer with Millis.
type Clock func() time.Time

// SystemClock is the wall clock at millisecond precision.
func SystemClock() time.Time { return Millis(time.Now()) }
