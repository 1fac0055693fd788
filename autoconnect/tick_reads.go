package autoconnect

import (
	"context"
	"sync"
)

// tickReads holds the owner-lease answers read during one tick of a
// Reconciler or Loop, or one listing of a source, per tracker: every check
// of the tick reuses them, missing owners included (the tracker does not
// cache those from one check to the next), so that the tick reads each
// owner at most once (the liveness of a listed row is known at the
// listing's time). An InvalidateLiveness during the tick makes them stale.
// A nil *tickReads holds nothing.
type tickReads struct {
	mu        sync.Mutex
	byTracker map[*LeaseTracker]map[string]leaseSnapshot
	// versions holds, per tracker, the live-owner version the tick's
	// listing left (listOwners).
	versions map[*LeaseTracker]int64
}

// tickReadsKey is the context key of a tick's tickReads.
type tickReadsKey struct{}

// withTickReads returns ctx carrying a tickReads: the one it already
// carries, or a new one.
func withTickReads(ctx context.Context) context.Context {
	if tickReadsOf(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, tickReadsKey{}, &tickReads{
		byTracker: map[*LeaseTracker]map[string]leaseSnapshot{}, versions: map[*LeaseTracker]int64{},
	})
}

// tickReadsOf returns ctx's tickReads, or nil.
func tickReadsOf(ctx context.Context) *tickReads {
	t, _ := ctx.Value(tickReadsKey{}).(*tickReads)
	return t
}

// get returns the answer lt read for ownerID during the tick.
func (t *tickReads) get(lt *LeaseTracker, ownerID string) (leaseSnapshot, bool) {
	if t == nil {
		return leaseSnapshot{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	snap, ok := t.byTracker[lt][ownerID]
	return snap, ok
}

// put records the answer lt read for ownerID during the tick.
func (t *tickReads) put(lt *LeaseTracker, ownerID string, snap leaseSnapshot) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byTracker[lt] == nil {
		t.byTracker[lt] = map[string]leaseSnapshot{}
	}
	t.byTracker[lt][ownerID] = snap
}

// noteVersion records the live-owner version lt's listing left.
func (t *tickReads) noteVersion(lt *LeaseTracker, version int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.versions[lt] = version
}

// listingVersion returns the live-owner version lt's listing in the tick
// left, if one did.
func (t *tickReads) listingVersion(lt *LeaseTracker) (int64, bool) {
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.versions[lt]
	return v, ok
}
