package autoconnect

import "context"

// recordStoreFailure notes a failed store interaction: the failure streak
// starts (if it has not), the local row counts as unpublished, and, while
// the streak is younger than the grace window, the targets of the last
// successful listing that are neither active nor on a lost endpoint are
// dialed again. Existing connections are kept; nothing is reported.
// Redialing stops when ctx is done.
func (r *Reconciler) recordStoreFailure(ctx context.Context, cause error) {
	now := r.clock.Now()
	r.mu.Lock()
	if !r.failureStarted {
		r.failureStart, r.failureStarted = now, true
	}
	r.storeFailed = true
	r.localPublished = false
	grace := r.timing.storeFailureGrace
	if grace <= 0 || now-r.failureStart > grace {
		r.mu.Unlock()
		r.log.Warn("autoconnect: store failure; keeping connections", "mesh", r.local.MeshName, "err", cause)
		return
	}
	var retry []Target
	for _, t := range r.lastDesired.list() {
		if _, lost := r.failed[t.Endpoint]; !r.active.has(t.Key) && !lost {
			retry = append(retry, t)
		}
	}
	r.mu.Unlock()
	r.log.Warn("autoconnect: store failure; keeping connections and redialing the last desired peers",
		"mesh", r.local.MeshName, "redial", len(retry), "err", cause)

	for _, t := range retry {
		if ctx.Err() != nil {
			return
		}
		if !r.executor.Connect(ctx, t.clone()) {
			continue
		}
		r.mu.Lock()
		if _, lost := r.failed[t.Endpoint]; !r.active.has(t.Key) && !lost {
			r.active.set(t)
		}
		r.mu.Unlock()
	}
}

// recordLostEndpoint is the executor's loss handler: it drops every active
// target on endpoint and, if there was one, marks the endpoint failed so that
// store-failure retries skip it until a connect to it succeeds.
func (r *Reconciler) recordLostEndpoint(endpoint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	removed := false
	for _, t := range r.active.list() {
		if t.Endpoint == endpoint {
			r.active.remove(t.Key)
			removed = true
		}
	}
	if removed {
		r.failed[endpoint] = struct{}{}
	}
}
