package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Retry waits after a failed attempt: from minRetryWait, doubling, at most
// the renew interval, each drawn from its upper half.
const minRetryWait = 100 * time.Millisecond

// Session keeps one owner lease alive (see the package documentation).
// Safe for concurrent use.
type Session struct {
	store location.OwnerLeaseStore
	o     Options
	clk   clock.Clock
	log   *slog.Logger
	token location.OwnerToken

	// ctx is the session's life (the caller's context); end cancels it,
	// which cancels the store call in flight too, and closes done. stopped
	// closes once the renewal loop, and the store call it waits for, have
	// returned.
	ctx     context.Context
	cancel  context.CancelCauseFunc
	done    chan struct{}
	stopped chan struct{}
	timeout error // the cause of an attempt that exceeded RenewTimeout

	mu           sync.Mutex
	trustedUntil time.Time
	lastRenewal  time.Time
	lastErr      error
	failures     int
	renewals     int64
	keptAlive    bool
	endedAt      time.Time
	err          error
	deadline     clock.Timer

	closeOnce sync.Once
	closeErr  error

	// Used by the renewal loop only.
	kept     location.KeptOwnerLease
	noKeeper bool
}

// Status is a snapshot of a session's state.
type Status struct {
	// Token is the lease the session holds.
	Token location.OwnerToken
	// TrustedUntil is the deadline until which the lease may be trusted
	// (see Session.TrustedUntil).
	TrustedUntil time.Time
	// LastRenewal is when the last confirmed claim or renewal was sent
	// (session clock).
	LastRenewal time.Time
	// LastError is the error of the last renewal attempt if it failed (nil
	// once a later one is confirmed); Failures counts the attempts that
	// failed since the last confirmed one.
	LastError error
	Failures  int
	// Renewals counts the confirmed renewals (the claim not included).
	Renewals int64
	// KeptAlive reports that renewals go through the store's
	// location.OwnerLeaseKeeper (known after the first renewal).
	KeptAlive bool
	// EndedAt is when the session ended (zero while it runs), and Err why.
	EndedAt time.Time
	Err     error
}

// New claims an owner lease for ownerID in store and returns the session
// that keeps it. Options are checked first: bad ones are an
// *location.InputError, and nothing is written. A claim the store answers
// with an error wrapping location.ErrUnavailable (nothing written) or
// location.ErrOutcomeUnknown (its answer was lost and could not be
// settled) is tried again, after a jittered wait, until ctx ends; each
// attempt is bounded by RenewTimeout. When the store is a
// location.OwnerLeaseClaimSettler (etcdstore), each attempt first settles
// the store's earlier claim of ownerID whose outcome was unknown (of this
// call or an earlier one): if that claim holds the lease, the session
// keeps that lease. A live lease of the owner id is ErrLeaseHeld.
//
// ctx bounds the session's life too: when it ends, the session ends
// (Done), without releasing the lease (call Close for that).
func New(ctx context.Context, store location.OwnerLeaseStore, ownerID string, opts Options) (*Session, error) {
	s, err := newSession(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	if err := location.ValidateOwnerID(ownerID); err != nil {
		s.cancel(err)
		return nil, fmt.Errorf("session: %w", err)
	}
	var res location.OwnerLeaseClaimResult
	var sent, answered time.Time
	unknown := false // an attempt's outcome was unknown
	err = s.retry(s.ctx, "claim owner lease "+ownerID, claimRetryable, func() error {
		actx, cancel := s.attemptContext(s.ctx)
		defer cancel()
		var err error
		sent = s.clk.Now()
		res, err = settleAndClaim(actx, store, ownerID, s.o.TTL)
		answered = s.clk.Now()
		err = s.attemptError(actx, err)
		unknown = unknown || errors.Is(err, location.ErrOutcomeUnknown)
		s.observe(Renewal{Token: res.Token, Sent: sent, Answered: answered, Kind: res.Kind, Err: err})
		return err
	})
	switch {
	case err != nil:
		err = fmt.Errorf("session: claim owner lease %q: %w", ownerID, err)
	case res.Kind == location.KindConflict && unknown:
		err = fmt.Errorf("%w: owner id %q (maybe by an earlier claim of this call whose outcome is unknown, "+
			"which the store cannot settle: it expires within the TTL)", ErrLeaseHeld, ownerID)
	case res.Kind == location.KindConflict:
		err = fmt.Errorf("%w: owner id %q", ErrLeaseHeld, ownerID)
	case res.Kind == location.KindGenerationExhausted:
		err = fmt.Errorf("%w (claiming owner id %q)", ErrGenerationExhausted, ownerID)
	case res.Kind != location.KindClaimed:
		err = fmt.Errorf("session: claim owner lease %q: unexpected answer %q", ownerID, res.Kind)
	}
	if err != nil {
		s.cancel(err)
		return nil, err
	}
	s.token = res.Token
	s.confirm(sent, answered, res.LeaseExpiresAt, res.StoreNow, false)
	s.log.Debug("session: owner lease claimed", "owner", s.token.OwnerID, "generation", s.token.LeaseGeneration,
		"trusted_until", s.TrustedUntil())
	next := answered.Add(s.o.RenewInterval)
	if _, ok := store.(location.OwnerLeaseKeeper); ok {
		// The first renewal through a keeper is a write (it marks the lease
		// as kept); sent at once, its retries have the whole trust window
		// instead of what is left of it after one renewal interval.
		next = answered
	}
	s.start(next)
	return s, nil
}

// Adopt returns a session that keeps the lease of token, claimed earlier
// (by an orphaned session of this or another process: a handover). It
// renews the lease once first: a stale answer is ErrLeaseLost; errors are
// tried again until ctx ends (bad input excepted). ctx bounds the session's
// life as in New.
func Adopt(ctx context.Context, store location.OwnerLeaseStore, token location.OwnerToken, opts Options) (*Session, error) {
	s, err := newSession(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	if err := location.ValidateOwnerID(token.OwnerID); err != nil {
		s.cancel(err)
		return nil, fmt.Errorf("session: %w", err)
	}
	s.token = token
	var res location.OwnerLeaseRenewResult
	var answered time.Time
	err = s.retry(s.ctx, "adopt owner lease "+token.OwnerID, notInput, func() error {
		var err error
		res, answered, err = s.renewOnce(s.ctx)
		return err
	})
	switch {
	case err != nil:
		err = fmt.Errorf("session: adopt owner lease %+v: %w", token, err)
	case res.Kind != location.KindRenewed:
		err = fmt.Errorf("%w: adopting %+v, the store answered %q", ErrLeaseLost, token, res.Kind)
	}
	if err != nil {
		s.cancel(err)
		s.closeKept()
		return nil, err
	}
	s.start(answered.Add(s.o.RenewInterval))
	return s, nil
}

// newSession checks the options and returns a session not yet started,
// whose life is ctx's.
func newSession(ctx context.Context, store location.OwnerLeaseStore, opts Options) (*Session, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if store == nil {
		return nil, fmt.Errorf("session: %w: nil store", location.ErrInvalidArgument)
	}
	s := &Session{store: store, o: o, clk: o.Clock, log: o.Logger, done: make(chan struct{}), stopped: make(chan struct{}),
		timeout: fmt.Errorf("session: the attempt exceeded its timeout (%v): %w", o.RenewTimeout, context.DeadlineExceeded)}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	return s, nil
}

// Token returns the session's owner token.
func (s *Session) Token() location.OwnerToken { return s.token }

// Done is closed as soon as the session has ended; Err says why. It does
// not wait for a store call in flight (Stopped does): the trust deadline,
// a lost lease, the context's end, Close and Orphan close it at once.
func (s *Session) Done() <-chan struct{} { return s.done }

// Stopped is closed once the session has ended and every goroutine it
// started has returned: the renewal loop, the store call in flight when
// the session ended (its context is cancelled then; the session ignores
// its answer, and closes a kept lease it returns), and the kept lease's
// watch. Close and Orphan wait for it; wait on it to account for a session
// that ended by itself.
func (s *Session) Stopped() <-chan struct{} { return s.stopped }

// Err returns nil while the session runs, then why it ended: an error
// wrapping ErrLeaseLost, ErrDeadlinePassed, ErrClosed, ErrOrphaned, or the
// error of the context given to New or Adopt.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// TrustedUntil returns the session-clock time until which the lease may be
// trusted: the deadline computed from the last confirmed renewal (see the
// package documentation). Once the session has ended, it is no later than
// the time it ended. Fence an action by checking that it completes before
// this time.
func (s *Session) TrustedUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trustedUntilLocked()
}

func (s *Session) trustedUntilLocked() time.Time {
	if s.err != nil && s.endedAt.Before(s.trustedUntil) {
		return s.endedAt
	}
	return s.trustedUntil
}

// Valid reports whether the session runs and the lease may be trusted now.
func (s *Session) Valid() bool {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err == nil && now.Before(s.trustedUntil)
}

// WhileTrusted returns a context derived from parent that is also done when
// the lease stops being trusted, to bound work that is worth doing only
// under the lease. It is done, with context.Cause saying why, when the
// first of these happens:
//
//   - parent is done: parent's cause;
//   - the session ends (Done): a cause wrapping Err, so errors.Is finds
//     ErrLeaseLost, ErrDeadlinePassed, ErrClosed, ErrOrphaned or the
//     error of the context given to New or Adopt;
//   - the session's clock reaches the trust deadline as it stands at the
//     call (TrustedUntil then; a later renewal does not extend it): a
//     cause wrapping ErrDeadlinePassed that names the deadline (RFC 3339).
//
// A session that has ended, or whose deadline has passed, at the call
// returns a context already done. The cancel function cancels the context
// (cause context.Canceled, unless it was done already) and stops its timer
// and the goroutine that watches the session; call it when the work is
// done, as for context.WithCancel.
func (s *Session) WhileTrusted(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	s.mu.Lock()
	ended, until := s.err, s.trustedUntilLocked()
	s.mu.Unlock()
	passed := fmt.Errorf("%w: the lease was trusted until %s", ErrDeadlinePassed, until.Format(time.RFC3339Nano))
	switch {
	case ended != nil:
		cancel(endedCause(ended))
		return ctx, func() { cancel(context.Canceled) }
	case !s.clk.Now().Before(until): // as Valid
		cancel(passed)
		return ctx, func() { cancel(context.Canceled) }
	}
	// Armed at until itself (clock.At): a clock moved since Now was read
	// cannot delay it.
	t := clock.At(s.clk, until, func() { cancel(passed) })
	go func() {
		select {
		case <-s.done:
			cancel(endedCause(s.Err()))
		case <-ctx.Done():
		}
		t.Stop()
	}()
	return ctx, func() {
		cancel(context.Canceled)
		t.Stop()
	}
}

// endedCause is WhileTrusted's cause for a session that ended with err.
func endedCause(err error) error {
	return fmt.Errorf("session: the session ended: %w", err)
}

// Status returns a snapshot of the session's state.
func (s *Session) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{
		Token: s.token, TrustedUntil: s.trustedUntilLocked(), LastRenewal: s.lastRenewal,
		LastError: s.lastErr, Failures: s.failures, Renewals: s.renewals, KeptAlive: s.keptAlive,
		EndedAt: s.endedAt, Err: s.err,
	}
}

// Close ends the session (if it has not ended yet, Err becomes ErrClosed),
// releases the lease (unless it was lost or orphaned): ReleaseOwnerLease,
// each attempt bounded by RenewTimeout and tried again after a failure (bad
// input excepted) until ctx ends; a lease found already ended is not an
// error. Then it waits, until ctx ends, for the session's goroutines
// (Stopped): a renewal in flight has had its context cancelled, and a
// release does not need to wait for it (a renewal that reaches the store
// after the release answers stale). Close is idempotent: later calls
// release nothing more and return the first release's result.
func (s *Session) Close(ctx context.Context) error {
	s.end(ErrClosed)
	s.closeOnce.Do(func() { s.closeErr = s.release(ctx) })
	if err := s.wait(ctx); err != nil {
		return errors.Join(s.closeErr, err)
	}
	return s.closeErr
}

// Orphan ends the session without releasing its lease (if it has not
// ended yet, Err becomes ErrOrphaned), waits for its goroutines (Stopped;
// a store call in flight, whose context is cancelled, for at most
// RenewTimeout on the session clock), and returns the token, for another
// process to Adopt before the lease expires. A later Close releases
// nothing.
func (s *Session) Orphan() location.OwnerToken {
	s.end(ErrOrphaned)
	ctx, cancel := s.attemptContext(context.Background())
	defer cancel()
	if err := s.wait(ctx); err != nil {
		s.log.Warn("session: orphaned with a store call still in flight; it ends when the store answers",
			"owner", s.token.OwnerID, "generation", s.token.LeaseGeneration, "error", err)
	}
	return s.token
}

// wait waits until the session's goroutines have stopped, or ctx ends.
func (s *Session) wait(ctx context.Context) error {
	select {
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("session: a store call of the session has not returned yet: %w", context.Cause(ctx))
	}
}

// release releases the lease of an ended session, unless it is known gone
// or was handed over.
func (s *Session) release(ctx context.Context) error {
	if err := s.Err(); errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrOrphaned) {
		return nil
	}
	var kind location.ResultKind
	// Releasing again is harmless (a release that applied makes the next
	// answer stale), so every failure but bad input is tried again.
	err := s.retry(ctx, "release owner lease "+s.token.OwnerID, notInput, func() error {
		actx, cancel := s.attemptContext(ctx)
		defer cancel()
		var err error
		kind, err = s.store.ReleaseOwnerLease(actx, s.token)
		return s.attemptError(actx, err)
	})
	if err != nil {
		return fmt.Errorf("session: release owner lease %+v: %w", s.token, err)
	}
	s.log.Info("session: owner lease released", "owner", s.token.OwnerID, "generation", s.token.LeaseGeneration, "answer", kind)
	return nil
}

// end ends the session with cause (the first cause wins): it cancels the
// session's context (the renewal loop's, and the store call's in flight)
// and closes Done at once, without waiting for anything.
func (s *Session) end(cause error) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.err, s.endedAt = cause, s.clk.Now()
	if s.deadline != nil {
		s.deadline.Stop()
	}
	s.mu.Unlock()
	s.cancel(cause)
	close(s.done)
	level := slog.LevelInfo
	if errors.Is(cause, ErrLeaseLost) || errors.Is(cause, ErrDeadlinePassed) {
		level = slog.LevelWarn
	}
	s.log.Log(context.Background(), level, "session: ended", "owner", s.token.OwnerID,
		"generation", s.token.LeaseGeneration, "reason", cause)
}

// start runs the session once its lease is claimed or adopted: the
// renewal loop, from next, and its end when the context given to New or
// Adopt ends (at once, also while a store call is in flight).
func (s *Session) start(next time.Time) {
	context.AfterFunc(s.ctx, func() { s.end(fmt.Errorf("session: context ended: %w", context.Cause(s.ctx))) })
	go s.run(next)
}

// run is the renewal loop: a renewal at each scheduled time (fixed rate),
// a failed one tried again sooner, until the session ends. It is the only
// goroutine that calls the store: a call in flight when the session ends
// (which cancels its context) is waited for here, and only Stopped waits
// for the loop.
func (s *Session) run(next time.Time) {
	defer s.finish()
	retryWait := minRetryWait
	for {
		if !s.sleepUntil(next) {
			return
		}
		scheduled := next
		res, answered, err := s.renewOnce(s.ctx)
		if err != nil {
			retry := answered.Add(jitter(retryWait))
			retryWait = min(2*retryWait, s.o.RenewInterval)
			next = scheduled.Add(s.o.RenewInterval)
			if retry.Before(next) {
				next = retry
			}
			// Logged even when the session ends meanwhile (its deadline
			// can pass while the failure is reported); not when the
			// session's end is what failed the renewal.
			if !errors.Is(err, context.Canceled) || s.ctx.Err() == nil {
				st := s.Status()
				s.log.Warn("session: owner-lease renewal failed; retrying", "owner", s.token.OwnerID,
					"generation", s.token.LeaseGeneration, "failed_attempts", st.Failures, "next_attempt", next,
					"trusted_for", st.TrustedUntil.Sub(answered), "error", err)
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		switch {
		case err != nil: // reported above; next is the retry
		case res.Kind != location.KindRenewed:
			s.end(fmt.Errorf("%w: renewing %+v, the store answered %q", ErrLeaseLost, s.token, res.Kind))
			return
		default:
			retryWait = minRetryWait
			next = scheduled.Add(s.o.RenewInterval)
		}
		if next.Before(answered) {
			next = answered // late: renew at once, then on schedule from here
		}
	}
}

// sleepUntil waits until the clock reaches t; false when the session ended
// meanwhile (or its kept lease was lost, which ends it).
func (s *Session) sleepUntil(t time.Time) bool {
	wake := make(chan struct{})
	timer := clock.At(s.clk, t, func() { close(wake) })
	defer timer.Stop()
	var lost <-chan struct{}
	if s.kept != nil {
		lost = s.kept.Lost()
	}
	select {
	case <-s.ctx.Done():
		return false
	case <-lost:
		s.end(fmt.Errorf("%w: the store reported %+v ended", ErrLeaseLost, s.token))
		return false
	case <-wake:
		return true
	}
}

// finish ends the loop: the session has ended (the loop stops only then),
// its kept lease stops, and Stopped closes.
func (s *Session) finish() {
	s.end(fmt.Errorf("session: context ended: %w", context.Cause(s.ctx)))
	s.closeKept()
	close(s.stopped)
}

// closeKept closes the kept lease, if any.
func (s *Session) closeKept() {
	if s.kept != nil {
		s.kept.Close()
	}
}

// renewOnce sends one renewal (bounded by RenewTimeout): through the
// store's OwnerLeaseKeeper when it has one, else RenewOwnerLease. It
// records the outcome and returns the answer's session-clock time.
func (s *Session) renewOnce(ctx context.Context) (location.OwnerLeaseRenewResult, time.Time, error) {
	actx, cancel := s.attemptContext(ctx)
	defer cancel()
	sent := s.clk.Now()
	res, kept, err := s.sendRenewal(actx)
	answered := s.clk.Now()
	err = s.attemptError(actx, err)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.failed(err)
		}
	case res.Kind == location.KindRenewed:
		s.confirm(sent, answered, res.LeaseExpiresAt, res.StoreNow, true)
	}
	s.observe(Renewal{Token: s.token, Sent: sent, Answered: answered, Kind: res.Kind, Err: err, Kept: kept})
	return res, answered, err
}

// sendRenewal is renewOnce's request; kept reports the keeper's path.
func (s *Session) sendRenewal(ctx context.Context) (res location.OwnerLeaseRenewResult, kept bool, err error) {
	if s.kept != nil {
		res, err = s.kept.Renew(ctx)
		return res, true, err
	}
	if keeper, ok := s.store.(location.OwnerLeaseKeeper); ok && !s.noKeeper {
		res, k, err := keeper.KeepOwnerLease(ctx, s.token, s.o.TTL)
		switch {
		case errors.Is(err, location.ErrUnsupported):
			s.noKeeper = true
		case k != nil:
			s.kept = k
			s.mu.Lock()
			s.keptAlive = true
			s.mu.Unlock()
			return res, true, err
		default:
			return res, true, err
		}
	}
	res, err = s.store.RenewOwnerLease(ctx, s.token, s.o.TTL)
	return res, false, err
}

// confirm records a confirmed claim or renewal sent at sent and answered at
// answered, and arms the deadline: answered + the lease time the store
// reported as left − the round trip − the fencing margin.
func (s *Session) confirm(sent, answered, expiresAt, storeNow time.Time, renewal bool) {
	left := max(expiresAt.Sub(storeNow)-answered.Sub(sent)-s.o.FencingMargin, 0)
	until := answered.Add(left)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if s.failures > 0 {
		s.log.Info("session: owner-lease renewal confirmed again", "owner", s.token.OwnerID,
			"generation", s.token.LeaseGeneration, "failed_attempts", s.failures)
	}
	s.trustedUntil, s.lastRenewal, s.lastErr, s.failures = until, sent, nil, 0
	if renewal {
		s.renewals++
	}
	if s.deadline != nil {
		s.deadline.Stop()
	}
	s.deadline = clock.At(s.clk, until, s.deadlineReached)
	s.log.Debug("session: owner lease renewed", "owner", s.token.OwnerID, "generation", s.token.LeaseGeneration,
		"trusted_until", until)
}

// failed records a failed renewal attempt.
func (s *Session) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
	s.failures++
}

// deadlineReached ends the session when no renewal moved its deadline.
func (s *Session) deadlineReached() {
	now := s.clk.Now()
	s.mu.Lock()
	until, last, lastErr := s.trustedUntil, s.lastRenewal, s.lastErr
	s.mu.Unlock()
	if now.Before(until) {
		return // a renewal moved it (and armed a new timer)
	}
	cause := fmt.Errorf("%w: the last confirmed renewal of %+v was sent at %s, trusted until %s",
		ErrDeadlinePassed, s.token, last.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
	if lastErr != nil {
		cause = fmt.Errorf("%w; last renewal error: %w", cause, lastErr)
	}
	s.end(cause)
}

// observe calls Options.OnRenewal.
func (s *Session) observe(r Renewal) {
	if s.o.OnRenewal == nil {
		return
	}
	r.TrustedUntil = s.TrustedUntil()
	s.o.OnRenewal(r)
}

// attemptContext returns ctx bounded by RenewTimeout on the session clock.
func (s *Session) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancelCause(ctx)
	t := s.clk.AfterFunc(s.o.RenewTimeout, func() { cancel(s.timeout) })
	return actx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// attemptError says so when an attempt's error is its timeout.
func (s *Session) attemptError(actx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(actx), s.timeout) && !errors.Is(err, s.timeout) {
		return fmt.Errorf("%w: %w", s.timeout, err)
	}
	return err
}

// retry runs attempt until it succeeds or fails with an error retryable
// rejects, or ctx ends; it waits a jittered, growing
// time (session clock) between attempts.
func (s *Session) retry(ctx context.Context, op string, retryable func(error) bool, attempt func() error) error {
	wait := minRetryWait
	for n := 1; ; n++ {
		err := attempt()
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
		d := jitter(wait)
		wait = min(2*wait, s.o.RenewInterval)
		s.log.Warn("session: attempt failed; retrying", "op", op, "attempt", n, "wait", d, "error", err)
		if !clock.Sleep(ctx, s.clk, d) {
			return fmt.Errorf("%w (after %d attempts; last error: %w)", context.Cause(ctx), n, err)
		}
	}
}

// settleAndClaim claims ownerID's lease in store, after settling the
// store's earlier claim of ownerID whose outcome was unknown when the store
// can (location.OwnerLeaseClaimSettler): if that claim holds the lease, its
// answer is the claim's.
func settleAndClaim(ctx context.Context, store location.OwnerLeaseStore, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	if settler, ok := store.(location.OwnerLeaseClaimSettler); ok {
		res, held, err := settler.SettleOwnerLeaseClaim(ctx, ownerID, ttl)
		if err != nil || held {
			return res, err
		}
	}
	return store.ClaimOwnerLease(ctx, ownerID, ttl)
}

// claimRetryable reports a failed claim that is tried again: nothing was
// written (location.ErrUnavailable), or the outcome is unknown
// (location.ErrOutcomeUnknown: the claim may have applied; a store that
// settles its own claims, as etcdstore does, then tells whether it holds
// the lease; with another, the next attempt conflicts with it:
// ErrLeaseHeld).
func claimRetryable(err error) bool {
	return errors.Is(err, location.ErrUnavailable) || errors.Is(err, location.ErrOutcomeUnknown)
}

// notInput reports an error that is not about bad input.
func notInput(err error) bool { return !errors.Is(err, location.ErrInvalidArgument) }

// jitter returns a duration drawn uniformly from [d/2, d].
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(d-half+1)
}
