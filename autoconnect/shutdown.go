package autoconnect

import "context"

// DisconnectPeers disconnects every active target (skipping those the
// transport already reports closed) and forgets the active and pending
// targets. No event is reported; failed endpoints are kept.
func (r *Reconciler) DisconnectPeers() {
	r.mu.Lock()
	targets := r.active.list()
	r.mu.Unlock()
	for _, t := range targets {
		r.disconnectIfNeeded(t)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active.clear()
	r.pending.clear()
}

// Shutdown disconnects every peer, then removes the local row. Call it
// after the last Tick; the Loop's Stop does this.
func (r *Reconciler) Shutdown(ctx context.Context) error {
	r.DisconnectPeers()
	return r.UnpublishLocal(ctx)
}

// disconnectIfNeeded calls Disconnect unless the transport already reports t
// closed.
func (r *Reconciler) disconnectIfNeeded(t Target) {
	if r.prober != nil && r.prober.IsDisconnected(t) {
		return
	}
	r.executor.Disconnect(t)
}
