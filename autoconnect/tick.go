package autoconnect

import (
	"context"
	"errors"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Tick runs one reconciliation:
//
//  1. publish the local row (a store error ends the tick as a store failure;
//     a rejected publication does not);
//  2. in publish-only mode, clear the failure state and stop;
//  3. list the live peers (an error ends the tick as a store failure);
//  4. if the local row was published but is missing from the listing (a
//     restarted store), publish it again (failing that is a store failure);
//  5. after a failure streak, open the recovery window (no removals until
//     it ends);
//  6. plan, hand candidates and not-required peers to the executor, and
//     connect, replace, and (outside the recovery window) remove targets;
//  7. report one DesiredSetChange if anything was connected or disconnected.
//
// Store failures are recorded (StoreFailed) and not returned: the tick keeps
// existing connections and, within the grace window, redials the last
// desired targets. Tick returns an error only when ctx is done: before it
// starts (then it does nothing) or during a store call (then the tick is
// abandoned, see failTick).
func (r *Reconciler) Tick(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("autoconnect: tick: %w", err)
	}
	r.tickMu.Lock()
	defer r.tickMu.Unlock()
	ctx = withTickReads(ctx)

	if _, err := r.publishLocal(ctx); err != nil {
		return r.failTick(ctx, err)
	}
	if r.publishOnly {
		r.mu.Lock()
		r.storeFailed = false
		r.failureStarted = false
		r.mu.Unlock()
		return nil
	}

	localType, mesh := r.local.AutoConnectType, r.local.MeshName
	rows, err := r.source.ListLivePeers(ctx, location.PeerFilter{AutoConnectType: &localType, MeshName: &mesh})
	if err != nil {
		return r.failTick(ctx, err)
	}

	if r.localRowLost(rows) {
		ok, err := r.publishLocal(ctx)
		if err == nil && !ok {
			err = errors.New("autoconnect: local peer row vanished and could not be claimed again")
		}
		if err != nil {
			return r.failTick(ctx, err)
		}
		r.log.Info("autoconnect: local peer row published again after it vanished", "mesh", mesh)
	}

	r.mu.Lock()
	if r.storeFailed {
		r.storeFailed = false
		r.failureStarted = false
		r.recoveryDeferUntil = r.clock.Now() + r.timing.ownerLeaseTTL
		r.log.Info("autoconnect: store recovered; removals deferred", "mesh", mesh, "for", r.timing.ownerLeaseTTL)
	}
	r.members = make(map[location.RoutingID]struct{}, len(rows))
	for _, row := range rows {
		if row.NodeRID != nil {
			r.members[*row.NodeRID] = struct{}{}
		}
	}
	r.mu.Unlock()

	targets := newRowTargets(rows)
	candidates := candidateMap(r.local, targets)
	now := r.clock.Now()
	if r.expecter != nil {
		r.expecter.ExpectPeers(cloneTargets(candidates.list()))
	}
	if r.notRequired != nil {
		r.notRequired.ReplaceNotRequired(notRequired(r.local, targets))
	}

	desired := r.desiredTargets(targets)
	var change DesiredSetChange
	r.connectDesired(ctx, desired, &change)

	r.mu.Lock()
	deferred := now < r.recoveryDeferUntil
	r.removalsDeferred = deferred
	r.mu.Unlock()
	if !deferred {
		if r.sweeper != nil {
			r.sweeper.DisconnectStalePeers(cloneTargets(candidates.list()))
		}
		r.removeStale(desired, &change)
	}
	r.report(change)
	return nil
}

// localRowLost reports whether the local row was published but is missing
// from rows; if so it marks the row unpublished. The row is matched by its
// peer identity: role and rid, or, without a rid, a rid-less row with the
// same endpoint. (The framework matches the rid alone, so that any rid-less
// row hides the loss of a rid-less local row.)
func (r *Reconciler) localRowLost(rows []location.PeerLocation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.localPublished || r.localRow == nil {
		return false
	}
	for i := range rows {
		if sameIdentity(&rows[i], r.localRow) {
			return false
		}
	}
	r.localPublished = false
	return true
}

// desiredTargets computes the tick's desired set: the non-draining targets
// this side dials, plus every draining one that is already active (a peer
// that starts draining keeps its connection; a draining peer is never newly
// dialed). Failed endpoints no longer desired are forgotten, and the result
// becomes lastDesired.
func (r *Reconciler) desiredTargets(rt *rowTargets) *targetMap {
	desired := desiredMap(r.local, rt, false)
	endpoints := make(map[string]struct{}, desired.len())
	for _, t := range desired.list() {
		endpoints[t.Endpoint] = struct{}{}
	}
	existing := desiredMap(r.local, rt, true)

	r.mu.Lock()
	defer r.mu.Unlock()
	for ep := range r.failed {
		if _, ok := endpoints[ep]; !ok {
			delete(r.failed, ep)
		}
	}
	for _, t := range existing.list() {
		if r.active.has(t.Key) {
			desired.set(t)
		}
	}
	r.lastDesired = desired
	return desired
}

// connectDesired connects every desired target that is not active, and
// replaces an active target whose endpoint or owner changed under the same
// key. With a DisconnectProber it drops active targets whose transport is
// gone (and redials them), and waits for an old connection of a key to close
// before dialing the key again. It stops once ctx is done (the loop is
// stopping, for example because the owner lease was lost): no connection is
// started after that.
func (r *Reconciler) connectDesired(ctx context.Context, desired *targetMap, change *DesiredSetChange) {
	for _, target := range desired.list() {
		if ctx.Err() != nil {
			return
		}
		key := target.Key
		r.mu.Lock()
		cur, isActive := r.active.get(key)
		r.mu.Unlock()

		if isActive && cur.Endpoint == target.Endpoint && cur.OwnerID == target.OwnerID &&
			r.prober != nil && r.prober.IsDisconnected(cur) {
			r.mu.Lock()
			r.active.remove(key)
			r.mu.Unlock()
			isActive = false
		}

		if !isActive {
			r.mu.Lock()
			old, closing := r.pending.get(key)
			r.mu.Unlock()
			if closing && r.prober != nil && !r.prober.IsDisconnected(old) {
				continue
			}
			r.mu.Lock()
			r.pending.remove(key)
			r.mu.Unlock()
			r.connect(ctx, target, change)
			continue
		}

		if cur.Endpoint == target.Endpoint && cur.OwnerID == target.OwnerID {
			continue
		}
		// The key now names another transport: replace it.
		r.disconnectIfNeeded(cur)
		change.DisconnectedEndpoints = append(change.DisconnectedEndpoints, cur.Endpoint)
		r.mu.Lock()
		r.active.remove(key)
		r.mu.Unlock()
		if r.prober != nil && !r.prober.IsDisconnected(cur) {
			r.mu.Lock()
			r.pending.set(cur)
			r.mu.Unlock()
			continue
		}
		r.mu.Lock()
		r.pending.remove(key)
		r.mu.Unlock()
		r.connect(ctx, target, change)
	}
}

// connect dials target and, on success, makes it active, clears its endpoint's
// failed mark and records it in change.
func (r *Reconciler) connect(ctx context.Context, target Target, change *DesiredSetChange) {
	if !r.executor.Connect(ctx, target.clone()) {
		r.log.Debug("autoconnect: connect refused", "endpoint", target.Endpoint, "key", target.Key)
		return
	}
	change.ConnectedEndpoints = append(change.ConnectedEndpoints, target.Endpoint)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active.set(target)
	delete(r.failed, target.Endpoint)
}

// removeStale disconnects every active target that is no longer desired
// (with a DisconnectProber it waits in pending until closed), then forgets
// pending targets that are not desired and have closed.
func (r *Reconciler) removeStale(desired *targetMap, change *DesiredSetChange) {
	r.mu.Lock()
	active := r.active.list()
	r.mu.Unlock()
	for _, t := range active {
		if desired.has(t.Key) {
			continue
		}
		r.disconnectIfNeeded(t)
		change.DisconnectedEndpoints = append(change.DisconnectedEndpoints, t.Endpoint)
		r.mu.Lock()
		r.active.remove(t.Key)
		if r.prober != nil {
			r.pending.set(t)
		}
		r.mu.Unlock()
	}
	if r.prober == nil {
		return
	}
	r.mu.Lock()
	pending := r.pending.list()
	r.mu.Unlock()
	for _, t := range pending {
		if !desired.has(t.Key) && r.prober.IsDisconnected(t) {
			r.mu.Lock()
			r.pending.remove(t.Key)
			r.mu.Unlock()
		}
	}
}

// report sends change to the event sink when it holds anything.
func (r *Reconciler) report(change DesiredSetChange) {
	if len(change.ConnectedEndpoints) == 0 && len(change.DisconnectedEndpoints) == 0 {
		return
	}
	change.AutoConnectType = r.local.AutoConnectType
	change.MeshName = r.local.MeshName
	r.log.Debug("autoconnect: desired set changed", "mesh", change.MeshName,
		"connected", change.ConnectedEndpoints, "disconnected", change.DisconnectedEndpoints)
	if r.events != nil {
		r.events.DesiredSetChanged(change)
	}
}

// failTick ends a tick whose store call failed. A failure caused by the
// tick's own context ending (the loop stopping) is not a store failure: the
// tick is abandoned and the reconciler's state is left as it was, so that the
// shutdown that follows still removes a local row believed published.
func (r *Reconciler) failTick(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("autoconnect: tick abandoned: %w", ctxErr)
	}
	r.recordStoreFailure(ctx, err)
	return nil
}

// settled reports whether a tick would have nothing to do as long as the
// listing and its owners' liveness stay as they are: the local row is
// published (or there is none), every target of the last desired set is
// connected (a refused Connect or a lost connection is retried by the next
// tick), no old connection is waiting to close, and the last tick did not
// defer removals. A Loop skips a tick only when its reconciler is settled.
func (r *Reconciler) settled() bool {
	r.mu.Lock()
	if (r.localRow != nil && !r.localPublished) || r.storeFailed || r.removalsDeferred || r.pending.len() > 0 {
		r.mu.Unlock()
		return false
	}
	desired := r.lastDesired.list()
	active := make([]Target, 0, len(desired))
	for _, t := range desired {
		cur, ok := r.active.get(t.Key)
		if !ok {
			r.mu.Unlock()
			return false
		}
		active = append(active, cur)
	}
	r.mu.Unlock()
	if r.prober != nil {
		for _, t := range active {
			if r.prober.IsDisconnected(t) {
				return false
			}
		}
	}
	return true
}
