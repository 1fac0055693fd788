package meshnode

import (
	"errors"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/session"
)

// supervise is the node's goroutine: it waits until the current
// incarnation's lease can no longer be trusted, fences the incarnation,
// and rejoins (or ends the node), until Leave or Orphan stops it.
// Incarnations follow each other: the next one claims its lease only after
// the last one's session and loop stopped, so two never act at once.
func (n *Node) supervise(inc *incarnation) {
	defer n.wg.Done()
	for {
		if !n.waitUntrusted(inc) {
			return // Leave or Orphan takes it from here
		}
		cause := n.fence(inc)
		if !n.waitStopped(inc) {
			return
		}
		if n.o.NoRejoin {
			n.finish(fmt.Errorf("meshnode: the owner-lease session ended and the node does not rejoin: %w", cause))
			return
		}
		next, err := n.join(n.stopCtx, true, nil)
		if err != nil {
			if n.stopCtx.Err() == nil {
				n.log.Error("meshnode: the node cannot rejoin; it ends", "error", err)
				n.finish(fmt.Errorf("meshnode: rejoin: %w", err))
			}
			return
		}
		inc = next
	}
}

// waitUntrusted waits until inc's lease may no longer be trusted: its
// session ended (Done), or its trust deadline passed without a newer
// confirmed renewal. The second is watched on its own because the
// session's Done closes only once its renewal in flight returned, and a
// store may go on resolving a lost answer after the attempt's context
// ended. It reports false when the node stops first.
func (n *Node) waitUntrusted(inc *incarnation) bool {
	for {
		wake := make(chan struct{})
		t := clock.At(n.o.clock, inc.sess.TrustedUntil(), func() { close(wake) })
		select {
		case <-n.stopCtx.Done():
			t.Stop()
			return false
		case <-inc.sess.Done():
			t.Stop()
			return n.stopCtx.Err() == nil
		case <-wake:
			if !inc.sess.Valid() {
				return n.stopCtx.Err() == nil
			}
			// A renewal moved the deadline: wait for the new one.
		}
	}
}

// waitStopped waits until inc's session and loop have stopped (a store
// call in flight may outlive its context by the store's resolve timeout);
// false when the node stops first.
func (n *Node) waitStopped(inc *incarnation) bool {
	for _, ch := range []<-chan struct{}{inc.sess.Done(), inc.loopStopped} {
		select {
		case <-n.stopCtx.Done():
			return false
		case <-ch:
		}
	}
	return true
}

// fence stops acting on an incarnation whose lease can no longer be
// trusted: the application is told (EventLeaseLost), every peer is
// disconnected at once (Reconciler.DisconnectPeers), and the loop stops
// (Loop.PrepareTransportShutdown, in the background: it waits for a tick
// in flight, whose context it cancels first, so that the tick connects
// nothing more); no store call is made. EventFenced follows. A lease that
// may still live (its session did not end by a loss) is released before
// the next claim. It returns why the incarnation ended.
func (n *Node) fence(inc *incarnation) error {
	now := n.o.clock.Now()
	st := inc.sess.Status()
	cause, endedAt := st.Err, st.EndedAt
	if cause == nil {
		// The trust deadline passed and the session has not said so yet.
		cause = fmt.Errorf("%w: the last confirmed renewal was sent at %s, trusted until %s",
			session.ErrDeadlinePassed, st.LastRenewal.Format(time.RFC3339Nano), st.TrustedUntil.Format(time.RFC3339Nano))
		if st.LastError != nil {
			cause = fmt.Errorf("%w; last renewal error: %w", cause, st.LastError)
		}
		endedAt = now
	}
	n.mu.Lock()
	n.losses++
	n.lastLoss, n.lastLossAt = cause, endedAt
	if n.phase == PhaseJoined {
		n.phase = PhaseRejoining
	}
	n.mu.Unlock()
	n.log.Warn("meshnode: the owner lease can no longer be trusted; disconnecting every peer", "incarnation", inc.number,
		"generation", inc.token.LeaseGeneration, "trusted_until", st.TrustedUntil, "cause", cause)
	n.emit(Event{Kind: EventLeaseLost, At: endedAt, Incarnation: inc.public(), Err: cause, TrustedUntil: st.TrustedUntil})

	inc.rec.DisconnectPeers()
	n.markFenced(inc)
	n.stopLoop(inc)
	at := n.o.clock.Now()
	if !errors.Is(cause, session.ErrLeaseLost) {
		n.notePending(inc.token)
	}
	n.log.Info("meshnode: every peer of the ended incarnation disconnected", "incarnation", inc.number,
		"after", at.Sub(endedAt))
	n.emit(Event{Kind: EventFenced, At: at, Incarnation: inc.public(), TrustedUntil: st.TrustedUntil})
	return cause
}

// stopLoop stops inc's loop in the background (PrepareTransportShutdown:
// no store call); inc.loopStopped closes when it has stopped.
func (n *Node) stopLoop(inc *incarnation) {
	go func() {
		defer close(inc.loopStopped)
		inc.loop.PrepareTransportShutdown()
		inc.endSessionContext()
	}()
}
