package autoconnect

import "time"

// Clock is the monotonic time source and timer factory of the package.
// Tests inject a manual clock; SystemClock is the real one.
type Clock interface {
	// Now returns the time elapsed since an arbitrary, fixed origin. It never
	// goes backwards.
	Now() time.Duration
	// NewTimer returns a timer that fires once, d after now.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	// C receives one value when the timer fires.
	C() <-chan struct{}
	// Stop prevents the timer from firing; it reports whether it did so.
	Stop() bool
}

// SystemClock returns a Clock on the process's monotonic clock, with its
// origin at the call.
func SystemClock() Clock { return systemClock{origin: time.Now()} }

// systemClock is the real monotonic clock.
type systemClock struct{ origin time.Time }

// Now implements Clock.
func (c systemClock) Now() time.Duration { return time.Since(c.origin) }

// NewTimer implements Clock.
func (c systemClock) NewTimer(d time.Duration) Timer {
	t := &systemTimer{c: make(chan struct{}, 1)}
	t.t = time.AfterFunc(d, func() { t.c <- struct{}{} })
	return t
}

// systemTimer adapts time.Timer to Timer without a goroutine of its own.
type systemTimer struct {
	t *time.Timer
	c chan struct{}
}

// C implements Timer.
func (t *systemTimer) C() <-chan struct{} { return t.c }

// Stop implements Timer.
func (t *systemTimer) Stop() bool { return t.t.Stop() }
