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
	// stamps holds, per tracker, the owner liveness stamp its
	// LiveOwnerSetVersion call in the tick found its followed owners'
	// liveness at.
	stamps map[*LeaseTracker]int64
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
		stamps: map[*LeaseTracker]int64{},
	})
}

// tickReadsOf returns ctx's tickReads, or nil.
func tickReadsOf(ctx context.Context) *tickReads {
	t, _ := ctx.Value(tickReadsKey{}).(*tickReads)
	return t
}

// of returns the answers lt read during the tick, nil for a nil
// *tickReads; a new map has room for size answers. The map is lt's: it is
// read and written with lt.mu held.
func (t *tickReads) of(lt *LeaseTracker, size int) map[string]leaseSnapshot {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	reads := t.byTracker[lt]
	if reads == nil {
		reads = make(map[string]leaseSnapshot, size)
		t.byTracker[lt] = reads
	}
	return reads
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

// noteStamp records that lt's followed owners' liveness was found at stamp
// during the tick.
func (t *tickReads) noteStamp(lt *LeaseTracker, stamp int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stamps[lt] = stamp
}

// stampOf returns the stamp noted for lt during the tick, if any.
func (t *tickReads) stampOf(lt *LeaseTracker) (int64, bool) {
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.stamps[lt]
	return s, ok
}
