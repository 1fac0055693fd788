package meshnode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/session"
)

// errSessionEnded: the incarnation's session ended while it was starting.
const errSessionEnded = Error("meshnode: the owner-lease session ended while joining")

// incarnation is one life of the node: a session, a lifecycle generation,
// and the reconciler and loop that act for them.
type incarnation struct {
	rec  *autoconnect.Reconciler
	loop *autoconnect.Loop

	// Set once the lease is claimed, before the loop starts.
	number    int64
	token     location.OwnerToken
	lifecycle int64
	sess      *session.Session
	// endSession cancels the session's context (a no-op after the
	// session ended by itself or was closed).
	endSession context.CancelCauseFunc

	// loopStopped is closed once the loop stopped after a fence (fence
	// stops it in the background).
	loopStopped chan struct{}

	// Guarded by Node.mu.
	started  bool
	joinedAt time.Time
	fenced   bool
}

// public returns the incarnation as callers see it.
func (inc *incarnation) public() Incarnation {
	return Incarnation{Number: inc.number, Token: inc.token, LifecycleGeneration: inc.lifecycle, Session: inc.sess}
}

// endSessionContext releases the session's context.
func (inc *incarnation) endSessionContext() {
	if inc.endSession != nil {
		inc.endSession(context.Canceled)
	}
}

// newIncarnation builds the reconciler and loop of an incarnation that
// has not claimed its lease yet. The checks of the auto-connect options
// run here.
func (n *Node) newIncarnation() (*incarnation, error) {
	inc := &incarnation{loopStopped: make(chan struct{})}
	src, err := autoconnect.NewMeshNodeSource(n.store, n.tracker, n.o.AutoConnect)
	if err != nil {
		return nil, err
	}
	rec, err := autoconnect.NewReconciler(autoconnect.ReconcilerOptions{
		Local: n.o.local, LocalRow: n.o.localRow, Publisher: n.store, Source: src, Executor: n.o.Executor,
		Events: autoconnect.EventSinkFunc(func(c autoconnect.DesiredSetChange) {
			if n.o.Metrics != nil {
				n.o.Metrics.DesiredSetChanged(c)
			}
			n.desiredSetChanged(inc, c)
		}),
		Options: n.o.AutoConnect, Clock: n.loopClk, Logger: n.log,
	})
	if err != nil {
		return nil, err
	}
	lo := autoconnect.LoopOptions{
		Reconciler: rec, MeshName: n.o.Descriptor.MeshName, LiveOwners: n.tracker, DisableWatch: n.o.DisableWatch,
		Options: n.o.AutoConnect, Clock: n.loopClk, Logger: n.log,
		OnTick: func(t autoconnect.TickReport) {
			if n.o.Metrics != nil {
				n.o.Metrics.OnTick(t)
			}
			n.ticked(inc, t)
		},
	}
	if n.stamps != nil {
		lo.Stamps = n.stamps
	}
	loop, err := autoconnect.NewLoop(lo)
	if err != nil {
		return nil, err
	}
	inc.rec, inc.loop = rec, loop
	return inc, nil
}

// join runs attempts until one starts an incarnation, ctx ends, or an
// attempt fails in a way no retry can fix (bad input, exhausted
// generations; a refused descriptor too on the first join, where it is a
// configuration error). Between attempts it waits (RejoinBackoff).
// spare, when not nil, is an incarnation built and not started yet.
func (n *Node) join(ctx context.Context, rejoin bool, spare *incarnation) (*incarnation, error) {
	n.mu.Lock()
	n.attempts, n.lastAttemptErr = 0, nil
	n.mu.Unlock()
	wait := n.o.RejoinBackoff.Initial
	for attempt := 1; ; attempt++ {
		if err := n.releasePending(ctx); err != nil {
			n.log.Debug("meshnode: the previous lease is not released yet", "error", err)
		}
		if spare == nil {
			var err error
			if spare, err = n.newIncarnation(); err != nil {
				return nil, err
			}
		}
		inc := spare
		err := n.start(ctx, inc)
		if err == nil {
			return inc, nil
		}
		if inc.sess != nil {
			spare = nil // it claimed a lease: its loop may have run
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (after %d attempts; last error: %w)", context.Cause(ctx), attempt, err)
		}
		if errors.Is(err, location.ErrInvalidArgument) || errors.Is(err, session.ErrGenerationExhausted) ||
			(!rejoin && errors.Is(err, ErrDescriptorRejected)) {
			return nil, err
		}
		d := jitter(wait)
		wait = min(2*wait, n.o.RejoinBackoff.Max)
		n.noteAttempt(err)
		msg := "meshnode: joining failed; retrying"
		if errors.Is(err, session.ErrLeaseHeld) {
			msg = "meshnode: the owner id still holds a live lease (a previous process of this owner id, or a claim whose answer was lost); waiting for it to end"
		}
		n.log.Warn(msg, "attempt", attempt, "wait", d, "error", err)
		n.emit(Event{Kind: EventJoinFailed, Err: err, Attempt: attempt, Retry: d})
		if !clock.Sleep(ctx, n.o.clock, d) {
			return nil, fmt.Errorf("%w (after %d attempts; last error: %w)", context.Cause(ctx), attempt, err)
		}
	}
}

// start claims inc's lease, publishes the descriptor with the next
// lifecycle generation and starts the loop. On failure after the claim it
// cleans up what the attempt wrote (abandon).
func (n *Node) start(ctx context.Context, inc *incarnation) error {
	sctx, endSession := context.WithCancelCause(n.life)
	// ctx bounds the claim (session.New retries an unreachable store until
	// its context ends); the session itself lives in n.life.
	unbind := context.AfterFunc(ctx, func() { endSession(context.Cause(ctx)) })
	so := n.o.Session
	userHook := so.OnRenewal
	so.OnRenewal = func(r session.Renewal) {
		if r.Token == (location.OwnerToken{}) && r.Err != nil {
			n.noteAttempt(fmt.Errorf("claim owner lease: %w", r.Err))
		}
		if n.o.Metrics != nil {
			n.o.Metrics.OnRenewal(r)
		}
		if userHook != nil {
			userHook(r)
		}
	}
	sess, err := session.New(sctx, n.store, n.o.Descriptor.OwnerID, so)
	bound := unbind()
	if err != nil {
		endSession(err)
		return err
	}
	if n.o.Metrics != nil {
		n.o.Metrics.TrackSession(sess)
	}
	n.mu.Lock()
	n.claimed++
	inc.number, inc.token, inc.sess, inc.endSession = n.claimed, sess.Token(), sess, endSession
	if n.lastLifecycle {
		n.lifecycle++
	}
	n.lastLifecycle = true
	inc.lifecycle = n.lifecycle
	n.mu.Unlock()
	if !bound {
		n.abandon(ctx, inc)
		return fmt.Errorf("claimed lease %d, then: %w", inc.token.LeaseGeneration, context.Cause(ctx))
	}
	n.log.Info("meshnode: owner lease claimed", "incarnation", inc.number, "generation", inc.token.LeaseGeneration,
		"lifecycle", inc.lifecycle, "trusted_until", sess.TrustedUntil())

	// Every step below stops when the session ends.
	actx, cancel := untilEnded(ctx, sess)
	defer cancel()
	if err := n.publishDescriptor(actx, inc); err != nil {
		n.abandon(ctx, inc)
		return err
	}
	n.mu.Lock()
	inc.started = true
	n.mu.Unlock()
	if err := inc.loop.Start(context.WithValue(actx, incarnationKey{}, inc.public())); err != nil {
		n.abandon(ctx, inc)
		if !sess.Valid() {
			return fmt.Errorf("%w: %w", errSessionEnded, sess.Err())
		}
		return fmt.Errorf("start the auto-connect loop: %w", err)
	}
	if err := ctx.Err(); err != nil {
		n.abandon(ctx, inc)
		return fmt.Errorf("joined, then: %w", context.Cause(ctx))
	}
	now := n.o.clock.Now()
	n.mu.Lock()
	n.cur, inc.joinedAt = inc, now
	n.attempts, n.lastAttemptErr = 0, nil
	if n.phase == PhaseJoining || n.phase == PhaseRejoining {
		n.phase = PhaseJoined
	}
	n.mu.Unlock()
	n.log.Info("meshnode: joined", "incarnation", inc.number, "generation", inc.token.LeaseGeneration, "lifecycle", inc.lifecycle)
	n.emit(Event{Kind: EventJoined, At: now, Incarnation: inc.public()})
	return nil
}

// untilEnded returns ctx, also cancelled when s ends.
func untilEnded(ctx context.Context, s *session.Session) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-s.Done():
			cancel(fmt.Errorf("%w: %w", errSessionEnded, s.Err()))
		case <-c.Done():
		}
	}()
	return c, func() { cancel(context.Canceled) }
}

// publishDescriptor writes the incarnation's descriptor (NewClaim), tried
// again after a failure while the session runs and ctx lasts: a write whose
// answer was lost is replayed, which the store answers Stored without
// writing. A refusal while the lease is live is ErrDescriptorRejected.
func (n *Node) publishDescriptor(ctx context.Context, inc *incarnation) error {
	d := n.o.Descriptor
	d.ObjectCapabilities = append([]location.ObjectCapability(nil), d.ObjectCapabilities...)
	d.LeaseGeneration, d.LifecycleGeneration = inc.token.LeaseGeneration, inc.lifecycle
	permanent := func(err error) bool {
		return errors.Is(err, location.ErrInvalidArgument) || errors.Is(err, errSessionEnded) || errors.Is(err, ErrDescriptorRejected)
	}
	return n.retry(ctx, "publish the descriptor", permanent, func(ctx context.Context) error {
		if !inc.sess.Valid() {
			return fmt.Errorf("%w: %w", errSessionEnded, inc.sess.Err())
		}
		res, err := n.store.UpdateMeshNode(ctx, d, location.IntentNewClaim)
		switch {
		case err != nil:
			return fmt.Errorf("publish the descriptor: %w", err)
		case res.Status == location.Stored:
			return nil
		case res.Status == location.RejectedConflict:
			return n.explainConflict(ctx, inc)
		default:
			return fmt.Errorf("%w: the store answered %s: another live owner holds the descriptor of %s in mesh %q; "+
				"two processes publish the same routing id: stop one or give this node its own", ErrDescriptorRejected,
				res.Status, d.RID, d.MeshName)
		}
	})
}

// explainConflict tells why a descriptor write was RejectedConflict: the
// writer's lease is not live (the session will end; the write is not tried
// again), or the entry spot is claimed by another node.
func (n *Node) explainConflict(ctx context.Context, inc *incarnation) error {
	lease, err := n.store.ReadOwnerLease(ctx, inc.token.OwnerID)
	if err != nil {
		return fmt.Errorf("publish the descriptor: rejected, and reading the owner lease failed: %w", err)
	}
	if lease.Kind != location.KindFound || lease.Token != inc.token {
		return fmt.Errorf("%w: the store rejected the descriptor: lease %d is no longer live", errSessionEnded, inc.token.LeaseGeneration)
	}
	spot := "(none)"
	if s := n.o.Descriptor.EntrySpotID; s != nil {
		spot = *s
	}
	return fmt.Errorf("%w: the store answered %s while the lease is live: the entry spot %s is claimed by another node",
		ErrDescriptorRejected, location.RejectedConflict, spot)
}

// abandon undoes an attempt that claimed a lease and then failed: the loop
// stops (if it started), the rows the owner id has are removed while the
// lease is live, and the lease is released (unless it was lost), within a
// bounded time. A lease whose release failed is released before the next
// claim.
func (n *Node) abandon(ctx context.Context, inc *incarnation) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), n.cleanupTimeout())
	defer cancel()
	n.mu.Lock()
	started := inc.started
	n.mu.Unlock()
	if started {
		inc.loop.PrepareTransportShutdown()
	}
	if inc.sess.Valid() {
		if _, err := n.store.RemoveAllByOwner(cctx, inc.token); err != nil {
			n.log.Warn("meshnode: removing the rows of an abandoned join failed; they go when the lease ends", "error", err)
		}
	}
	lost := errors.Is(inc.sess.Err(), session.ErrLeaseLost)
	if err := inc.sess.Close(cctx); err != nil && !lost {
		n.notePending(inc.token)
	}
	inc.endSessionContext()
}

// cleanupTimeout bounds the cleanup of an abandoned attempt and the
// release of an ended lease: the session's trust window.
func (n *Node) cleanupTimeout() time.Duration {
	ttl, margin := n.o.Session.TTL, n.o.Session.FencingMargin
	if ttl == 0 {
		ttl = session.DefaultTTL
	}
	if margin == 0 {
		margin = session.DefaultFencingMargin
	}
	return ttl - margin
}

// notePending records a lease that may still live and must be released
// before the next claim.
func (n *Node) notePending(tok location.OwnerToken) {
	n.mu.Lock()
	n.pendingRelease = &tok
	n.mu.Unlock()
}

// releasePending releases the lease of an ended incarnation that may still
// live (one attempt, bounded by the session's renew timeout): the node
// stopped acting on it, and a live lease of the owner id would refuse the
// next claim. A lease already gone is not an error.
func (n *Node) releasePending(ctx context.Context) error {
	n.mu.Lock()
	tok := n.pendingRelease
	n.mu.Unlock()
	if tok == nil {
		return nil
	}
	timeout := n.o.Session.RenewTimeout
	if timeout == 0 {
		timeout = session.DefaultRenewTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kind, err := n.store.ReleaseOwnerLease(rctx, *tok)
	if err != nil {
		return fmt.Errorf("release the ended lease %d: %w", tok.LeaseGeneration, err)
	}
	n.mu.Lock()
	if n.pendingRelease != nil && *n.pendingRelease == *tok {
		n.pendingRelease = nil
	}
	n.mu.Unlock()
	n.log.Info("meshnode: released the lease of the ended incarnation", "generation", tok.LeaseGeneration, "answer", kind)
	return nil
}

// noteAttempt records a failed join attempt (or claim).
func (n *Node) noteAttempt(err error) {
	n.mu.Lock()
	n.attempts++
	n.lastAttemptErr = err
	n.mu.Unlock()
}

// ticked records a tick of inc's loop.
func (n *Node) ticked(inc *incarnation, t autoconnect.TickReport) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if inc.fenced {
		return
	}
	n.ticks++
	n.lastTick = TickReport{Started: n.loopClk.at(t.Started), Took: t.Took, Skipped: t.Skipped, StoreFailed: t.StoreFailed, Err: t.Err}
}

// desiredSetChanged forwards a tick's change of inc.
func (n *Node) desiredSetChanged(inc *incarnation, c autoconnect.DesiredSetChange) {
	n.mu.Lock()
	fenced := inc.fenced
	n.mu.Unlock()
	if fenced {
		return
	}
	n.emit(Event{Kind: EventDesiredSetChanged, Incarnation: inc.public(), Change: &c})
}
