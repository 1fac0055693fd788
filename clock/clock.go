package clock

import (
	"context"
	"time"
)

// Clock is a source of time and of one-shot timers: System, the process's
// clock, or a Manual clock that tests move by hand.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once d has passed (at once when d ≤ 0) and returns
	// a Timer that can stop it. f must not block.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call made by Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call; it reports whether it did (false when the
	// call has run or was stopped already).
	Stop() bool
}

// System returns the process's clock: time.Now (with its monotonic
// reading) and time.AfterFunc.
func System() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// At calls f once c reaches t (at once, in a goroutine of its own, when it
// already has) and returns a Timer that can stop it. On a Manual clock the
// timer is armed at t itself, under the clock's lock: a clock advanced by
// another goroutine between reading the time and arming a timer would
// otherwise delay c.AfterFunc(t.Sub(c.Now()), f) by as much as it moved.
// On the system clock it is that AfterFunc.
func At(c Clock, t time.Time, f func()) Timer {
	if a, ok := c.(interface {
		AfterFuncAt(t time.Time, f func()) Timer
	}); ok {
		return a.AfterFuncAt(t, f)
	}
	return c.AfterFunc(t.Sub(c.Now()), f)
}

// Sleep waits d on c; it returns false when ctx ends first.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	wake := make(chan struct{})
	t := c.AfterFunc(d, func() { close(wake) })
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
		return true
	}
}
