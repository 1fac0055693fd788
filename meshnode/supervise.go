package meshnode

import (
	"errors"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/session"
)

// supervise is the node's goroutine: it waits for the current
// incarnation's session to end, fences the incarnation, and rejoins (or
// ends the node), until Leave or Orphan stops it. Incarnations follow each
// other: the next one claims its lease only after the last one's loop
// stopped, so two never act at once.
func (n *Node) supervise(inc *incarnation) {
	defer n.wg.Done()
	for {
		select {
		case <-n.stopCtx.Done():
			return
		case <-inc.sess.Done():
		}
		if n.stopCtx.Err() != nil {
			return // Leave or Orphan takes it from here
		}
		cause := n.fence(inc)
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

// fence stops acting on an incarnation whose session ended: the
// application is told (EventLeaseLost), the loop stops and disconnects
// every peer without a store call (Loop.PrepareTransportShutdown), and
// EventFenced follows. A lease that may still live (the session ended by
// its deadline, not by a loss) is released before the next claim. It
// returns the session's error.
func (n *Node) fence(inc *incarnation) error {
	cause := inc.sess.Err()
	st := inc.sess.Status()
	n.mu.Lock()
	n.losses++
	n.lastLoss, n.lastLossAt = cause, st.EndedAt
	if n.phase == PhaseJoined {
		n.phase = PhaseRejoining
	}
	n.mu.Unlock()
	n.log.Warn("meshnode: owner-lease session ended; disconnecting every peer", "incarnation", inc.number,
		"generation", inc.token.LeaseGeneration, "trusted_until", st.TrustedUntil, "cause", cause)
	n.emit(Event{Kind: EventLeaseLost, At: st.EndedAt, Incarnation: inc.public(), Err: cause, TrustedUntil: st.TrustedUntil})

	inc.loop.PrepareTransportShutdown()
	n.markFenced(inc)
	inc.endSessionContext()
	at := n.o.clock.Now()
	if !errors.Is(cause, session.ErrLeaseLost) {
		n.notePending(inc.token)
	}
	n.log.Info("meshnode: every peer of the ended incarnation disconnected", "incarnation", inc.number,
		"after", at.Sub(st.EndedAt))
	n.emit(Event{Kind: EventFenced, At: at, Incarnation: inc.public(), TrustedUntil: st.TrustedUntil})
	return cause
}
