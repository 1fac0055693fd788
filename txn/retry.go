package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
)

// Reads and resolutions ride out elections (docs/reliability.md, "Reads
// and resolutions that ride out an election"): a read that fails with a
// transient etcd error is sent again, after a jittered, growing wait, until
// it succeeds or the caller's context ends. A read changes nothing, so
// sending it again is always safe; a write is never sent again here (its
// lost response is resolved by re-reading, which is a read).

// Defaults of RetryOptions.
const (
	DefaultRetryInitialBackoff = 50 * time.Millisecond
	DefaultRetryMaxBackoff     = time.Second
)

// RetryOptions configure a Retrier. The zero value is usable.
type RetryOptions struct {
	// InitialBackoff is the wait before the first retry; each later wait
	// doubles, up to MaxBackoff. Every wait is drawn at random from its
	// upper half (jitter), so that clients do not retry in step. 0 means
	// DefaultRetryInitialBackoff and DefaultRetryMaxBackoff.
	InitialBackoff, MaxBackoff time.Duration
	// OnRetry, when set, is called (synchronously, so it must be quick)
	// once for every transient failure that is retried, when the read is
	// about to be sent again. Metrics attach here.
	OnRetry func(RetryEvent)
	// Logger receives a Debug record per retry, an Info record per call
	// that succeeded after retries (it rode out an election: nothing to
	// act on), a Warn record per call that ended with a non-transient error
	// after retries or gave up; nil discards them.
	Logger *slog.Logger
}

// RetryEvent describes one retried failure.
type RetryEvent struct {
	// Op names the read ("get <key>", "read txn", "resolve history", …).
	Op string
	// Attempt is the number of the attempt that failed, from 1.
	Attempt int
	// Err is its transient error.
	Err error
	// Wait is how long the Retrier waited before sending it again.
	Wait time.Duration
}

// RetryStats are the counters of a Retrier since it was made.
type RetryStats struct {
	// Retries counts reads sent again after a transient failure.
	Retries int64
	// Recovered counts calls that succeeded after at least one retry.
	Recovered int64
	// GaveUp counts calls that had retried and ended with the caller's
	// context (their error wraps both the context's error and the last
	// transient one).
	GaveUp int64
}

// Retrier sends reads again while etcd answers transient errors (see
// IsTransient), until they succeed or the caller's context ends. One
// Retrier serves a whole store; it is safe for concurrent use.
type Retrier struct {
	initial, max time.Duration
	onRetry      func(RetryEvent)
	log          *slog.Logger

	retries, recovered, gaveUp atomic.Int64
}

// NewRetrier returns a Retrier.
func NewRetrier(opts RetryOptions) *Retrier {
	r := &Retrier{initial: opts.InitialBackoff, max: opts.MaxBackoff, onRetry: opts.OnRetry, log: opts.Logger}
	if r.initial <= 0 {
		r.initial = DefaultRetryInitialBackoff
	}
	if r.max <= 0 {
		r.max = max(DefaultRetryMaxBackoff, r.initial)
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// Stats returns the Retrier's counters.
func (r *Retrier) Stats() RetryStats {
	return RetryStats{Retries: r.retries.Load(), Recovered: r.recovered.Load(), GaveUp: r.gaveUp.Load()}
}

// Do runs read until it returns nil or an error that is not transient, or
// ctx ends. read must change nothing (it may run several times). When ctx
// ends after transient failures, the error is a *RetryError that wraps both
// the last transient error and the context's error.
func (r *Retrier) Do(ctx context.Context, op string, read func(ctx context.Context) error) error {
	start := time.Now()
	wait := r.initial
	for attempt := 1; ; attempt++ {
		err := read(ctx)
		if err == nil || !IsTransient(err) {
			if attempt > 1 {
				r.finished(op, attempt, start, err)
			}
			return err
		}
		if ctx.Err() != nil {
			return r.giveUp(ctx, op, attempt, start, err)
		}
		d := jitter(wait)
		wait = min(2*wait, r.max)
		r.log.Debug("txn: transient etcd error; retrying the read", "op", op, "attempt", attempt, "wait", d, "error", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return r.giveUp(ctx, op, attempt, start, err)
		case <-t.C:
		}
		r.retries.Add(1)
		if r.onRetry != nil {
			r.onRetry(RetryEvent{Op: op, Attempt: attempt, Err: err, Wait: d})
		}
	}
}

// finished logs a call that needed retries and ended (err nil: it
// succeeded; otherwise with an error that is not transient).
func (r *Retrier) finished(op string, attempts int, start time.Time, err error) {
	level := slog.LevelWarn
	if err == nil {
		r.recovered.Add(1)
		level = slog.LevelInfo
	}
	r.log.Log(context.Background(), level, "txn: read needed retries while etcd answered transient errors", "op", op,
		"attempts", attempts, "elapsed", time.Since(start), "error", err)
}

// giveUp returns the error of a call whose context ended while it retried.
func (r *Retrier) giveUp(ctx context.Context, op string, attempts int, start time.Time, last error) error {
	r.gaveUp.Add(1)
	err := &RetryError{Op: op, Attempts: attempts, Elapsed: time.Since(start), Last: last, Stop: context.Cause(ctx)}
	r.log.Warn("txn: read gave up: etcd kept answering transient errors until the context ended", "op", op,
		"attempts", attempts, "elapsed", err.Elapsed, "error", last)
	return err
}

// jitter returns a duration drawn uniformly from [d/2, d].
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(d-half+1)
}

// RetryError is the error of a read that etcd kept failing with transient
// errors until the caller's context ended. It wraps both Last and Stop, so
// errors.Is finds the context's error as well as the etcd one.
type RetryError struct {
	// Op names the read.
	Op string
	// Attempts counts the attempts sent; Elapsed is the time they took.
	Attempts int
	Elapsed  time.Duration
	// Last is the last transient error; Stop the context's error (cause).
	Last, Stop error
}

// Error implements error.
func (e *RetryError) Error() string {
	return fmt.Sprintf("%s: sent %d times over %v while etcd answered transient errors, until the context ended (%v); last error: %v",
		e.Op, e.Attempts, e.Elapsed.Round(time.Millisecond), e.Stop, e.Last)
}

// Unwrap returns Last and Stop.
func (e *RetryError) Unwrap() []error { return []error{e.Last, e.Stop} }

// IsTransient reports whether an etcd error may go away by itself, so that
// a read that failed with it is worth sending again: the cluster is
// electing a leader ("leader changed", "no leader"), a request timed out
// inside the server, the member is stopping or unhealthy, the connection
// was reset or refused (all gRPC Unavailable), or the server sheds load
// ("too many requests"). Errors of the request itself (invalid argument,
// permission, authentication, limits, compacted or future revision), and
// context errors, are not.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var re *RetryError
	if errors.As(err, &re) {
		return false
	}
	switch Code(err) {
	case codes.Unavailable:
		return true
	case codes.ResourceExhausted:
		return strings.Contains(err.Error(), "too many requests")
	}
	return false
}
