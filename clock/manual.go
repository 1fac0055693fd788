// Package clock provides a settable clock for tests and conformance runs.
package clock

import (
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Manual is a clock that moves only when told to. Safe for concurrent use.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a clock set to t (truncated to milliseconds).
func NewManual(t time.Time) *Manual { return &Manual{now: location.Millis(t)} }

// Now returns the clock's time. Its method value is a location.Clock.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Set moves the clock to t (truncated to milliseconds).
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = location.Millis(t)
}

// Advance moves the clock forward by d (truncated to milliseconds).
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = location.Millis(m.now.Add(d))
}
