package txn

import (
	"context"
	"sync/atomic"
	"time"
)

// ResolveContext returns the context of the reads that resolve a lost
// response (decision E-9): it keeps the caller's values, and ends when the
// caller's context has ended and at least floor has passed since the call,
// whichever is later. So a resolution has the caller's whole deadline to
// ride out an election, and still gets floor when the caller's own
// deadline is what lost the response. Call cancel when done.
func ResolveContext(ctx context.Context, floor time.Duration) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	var floorPassed atomic.Bool
	// Whichever of the two ends second cancels: ctx ends before its
	// AfterFunc runs, and floorPassed is set before the timer checks ctx.
	timer := time.AfterFunc(floor, func() {
		floorPassed.Store(true)
		if ctx.Err() != nil {
			cancel(context.Cause(ctx))
		}
	})
	stop := context.AfterFunc(ctx, func() {
		if floorPassed.Load() {
			cancel(context.Cause(ctx))
		}
	})
	return rctx, func() {
		timer.Stop()
		stop()
		cancel(context.Canceled)
	}
}
