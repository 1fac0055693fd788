// Package clock provides the Clock interface (time and timers), the
// process's clock, and a settable clock for tests and conformance runs.
package clock

import (
	"slices"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Manual is a clock that moves only when told to. Safe for concurrent use.
// It implements Clock: its timers fire when Set or Advance moves it to or
// past their time, in the order of their times, in the goroutine that moved
// it (after the move, outside the clock's lock).
type Manual struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

// NewManual returns a clock set to t (truncated to milliseconds).
func NewManual(t time.Time) *Manual { return &Manual{now: location.Millis(t)} }

// Now returns the clock's time. Its method value is a location.Clock.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Set moves the clock to t (truncated to milliseconds) and fires the timers
// that are due.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	m.now = location.Millis(t)
	m.fire()
}

// Advance moves the clock forward by d (truncated to milliseconds) and
// fires the timers that are due.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	m.now = location.Millis(m.now.Add(d))
	m.fire()
}

// AfterFunc implements Clock: f runs when the clock reaches now + d (at
// once, in a goroutine of its own, when d ≤ 0).
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.armLocked(m.now.Add(d), f)
}

// AfterFuncAt makes f run when the clock reaches at (at once, in a
// goroutine of its own, when it has): the time is read and the timer armed
// under one lock, so moving the clock meanwhile cannot delay it (clock.At).
func (m *Manual) AfterFuncAt(at time.Time, f func()) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.armLocked(at, f)
}

// armLocked arms a timer for at; m.mu is held.
func (m *Manual) armLocked(at time.Time, f func()) Timer {
	t := &manualTimer{m: m, f: f, at: at}
	if !at.After(m.now) {
		t.fired = true
		go f()
		return t
	}
	m.timers = append(m.timers, t)
	return t
}

// Timers returns the number of pending timers (for tests that wait until
// a component has armed its timer before moving the clock).
func (m *Manual) Timers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// fire runs the due timers; m.mu is held on entry and released.
func (m *Manual) fire() {
	var due []*manualTimer
	m.timers = slices.DeleteFunc(m.timers, func(t *manualTimer) bool {
		if t.at.After(m.now) {
			return false
		}
		t.fired = true
		due = append(due, t)
		return true
	})
	m.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *manualTimer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// manualTimer is a Manual clock's pending call.
type manualTimer struct {
	m     *Manual
	at    time.Time
	f     func()
	fired bool // guarded by m.mu
}

// Stop implements Timer.
func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	if t.fired {
		return false
	}
	t.fired = true
	t.m.timers = slices.DeleteFunc(t.m.timers, func(o *manualTimer) bool { return o == t })
	return true
}
