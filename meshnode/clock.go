package meshnode

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/clock"
)

// loopClock runs the auto-connect loop on the node's clock: durations since
// origin, timers from the clock's AfterFunc.
type loopClock struct {
	c      clock.Clock
	origin time.Time
}

// Now implements autoconnect.Clock.
func (l loopClock) Now() time.Duration { return l.c.Now().Sub(l.origin) }

// NewTimer implements autoconnect.Clock.
func (l loopClock) NewTimer(d time.Duration) autoconnect.Timer {
	t := &loopTimer{ch: make(chan struct{}, 1)}
	t.t = l.c.AfterFunc(d, func() { t.ch <- struct{}{} })
	return t
}

// at converts a loop-clock reading to the node clock's time.
func (l loopClock) at(d time.Duration) time.Time { return l.origin.Add(d) }

// loopTimer is a loopClock timer.
type loopTimer struct {
	t  clock.Timer
	ch chan struct{}
}

// C implements autoconnect.Timer.
func (t *loopTimer) C() <-chan struct{} { return t.ch }

// Stop implements autoconnect.Timer.
func (t *loopTimer) Stop() bool { return t.t.Stop() }
