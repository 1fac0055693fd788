package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
)

// Sleep returns true once the clock has moved d, and false when the context
// ends first, leaving no timer behind either way.
func TestSleep(t *testing.T) {
	c := clock.NewManual(time.UnixMilli(1_782_950_400_000))
	woke := make(chan bool)
	go func() { woke <- clock.Sleep(t.Context(), c, time.Second) }()
	require.Eventually(t, func() bool { return c.Timers() == 1 }, 10*time.Second, time.Millisecond)
	c.Advance(time.Second)
	require.True(t, <-woke)

	ctx, cancel := context.WithCancel(t.Context())
	go func() { woke <- clock.Sleep(ctx, c, time.Second) }()
	require.Eventually(t, func() bool { return c.Timers() == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	require.False(t, <-woke)
	require.Zero(t, c.Timers())
}
