package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
)

// wrapped hides a Manual clock's AfterFuncAt: At then takes the path of a
// clock without it (the system clock's).
type wrapped struct{ clock.Clock }

// At calls f once when the clock reaches the time, not before; at once for
// a time already past; never once stopped. On a Manual clock it arms the
// timer at the time itself, so a clock moved before the timer was armed
// (another goroutine's Advance between a caller's Now and its AfterFunc)
// does not delay it.
func TestAt(t *testing.T) {
	t0 := time.UnixMilli(1_782_950_400_000)
	at := t0.Add(5 * time.Second)
	for _, tc := range []struct {
		name string
		// hide makes At use AfterFunc(t.Sub(Now())).
		hide bool
		// before moves the clock before At, after moves it after At.
		before, after time.Duration
		want          bool
	}{
		{name: "not reached", after: 4 * time.Second},
		{name: "reached", after: 5 * time.Second, want: true},
		{name: "passed", after: time.Minute, want: true},
		{name: "moved before arming, then reached", before: 2 * time.Second, after: 3 * time.Second, want: true},
		{name: "moved before arming, not reached", before: 2 * time.Second, after: 2 * time.Second},
		{name: "already past", before: 6 * time.Second, want: true},
		{name: "without AfterFuncAt: not reached", hide: true, after: 4 * time.Second},
		{name: "without AfterFuncAt: reached", hide: true, after: 5 * time.Second, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := clock.NewManual(t0)
			var c clock.Clock = m
			if tc.hide {
				c = wrapped{m}
			}
			m.Advance(tc.before)
			calls := make(chan struct{}, 2)
			clock.At(c, at, func() { calls <- struct{}{} })
			m.Advance(tc.after)
			if !tc.want {
				require.Empty(t, calls, "f ran before the clock reached the time")
				require.Equal(t, 1, m.Timers(), "the timer is still armed")
				return
			}
			select {
			case <-calls:
			case <-time.After(10 * time.Second):
				t.Fatal("f did not run")
			}
			m.Advance(time.Hour)
			require.Empty(t, calls, "f ran twice")
			require.Zero(t, m.Timers())
		})
	}

	t.Run("stopped", func(t *testing.T) {
		m := clock.NewManual(t0)
		timer := clock.At(m, at, func() { t.Error("a stopped timer ran") })
		require.True(t, timer.Stop())
		m.Advance(time.Minute)
		require.Zero(t, m.Timers())
	})
}
