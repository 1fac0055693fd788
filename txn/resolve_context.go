package txn

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ResolveContext returns the context of the reads that resolve a lost
// response (decision E-9). It keeps the caller's values and ends:
//
//   - when the caller's context is cancelled (its Err is context.Canceled,
//     whatever the cause): at once. A caller that cancels has stopped
//     waiting (it shuts down, or its own bound, kept on another clock,
//     passed), and the write it sent is reported ErrOutcomeUnknown without
//     more reading, never guessed;
//   - when the caller's deadline has passed (its Err is
//     context.DeadlineExceeded): once at least floor has passed since the
//     call, so that a caller whose deadline is what lost the response
//     still learns the outcome;
//   - otherwise with the caller's context: a resolution has the caller's
//     whole deadline to ride out an election.
//
// Call cancel when done.
func ResolveContext(ctx context.Context, floor time.Duration) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if cancelled(ctx) {
		cancel(context.Cause(ctx))
		return rctx, func() { cancel(context.Canceled) }
	}
	var floorPassed atomic.Bool
	// Whichever ends the resolution last cancels it: ctx ends before its
	// AfterFunc runs, and floorPassed is set before the timer checks ctx.
	timer := time.AfterFunc(floor, func() {
		floorPassed.Store(true)
		if ctx.Err() != nil {
			cancel(context.Cause(ctx))
		}
	})
	stop := context.AfterFunc(ctx, func() {
		if floorPassed.Load() || cancelled(ctx) {
			cancel(context.Cause(ctx))
		}
	})
	return rctx, func() {
		timer.Stop()
		stop()
		cancel(context.Canceled)
	}
}

// cancelled reports whether ctx ended by a cancellation rather than by its
// deadline.
func cancelled(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }
