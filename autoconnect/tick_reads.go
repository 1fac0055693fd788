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
	byTracker map[*LeaseTracker]*trackerTick
}

// trackerTick is what one tracker left in a tick.
type trackerTick struct {
	// reads are the answers it read; the map is the tracker's, read and
	// written with its mu held.
	reads map[string]leaseSnapshot
	// version is the live-owner version the tick's listing left
	// (listOwners), if versioned.
	version   int64
	versioned bool
	// stamp is the owner liveness stamp its LiveOwnerSetVersion call found
	// its followed owners' liveness at, if stamped.
	stamp   int64
	stamped bool
}

// tickReadsKey is the context key of a tick's tickReads.
type tickReadsKey struct{}

// withTickReads returns ctx carrying a tickReads: the one it already
// carries, or a new one.
func withTickReads(ctx context.Context) context.Context {
	if tickReadsOf(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, tickReadsKey{}, &tickReads{byTracker: map[*LeaseTracker]*trackerTick{}})
}

// tickReadsOf returns ctx's tickReads, or nil.
func tickReadsOf(ctx context.Context) *tickReads {
	t, _ := ctx.Value(tickReadsKey{}).(*tickReads)
	return t
}

// with calls fn with lt's entry (created when missing) under the lock; a
// nil *tickReads calls nothing and reports false.
func (t *tickReads) with(lt *LeaseTracker, fn func(e *trackerTick)) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byTracker[lt]
	if e == nil {
		e = &trackerTick{}
		t.byTracker[lt] = e
	}
	fn(e)
	return true
}

// of returns the answers lt read during the tick, nil for a nil
// *tickReads; a new map has room for size answers. The map is lt's: it is
// read and written with lt.mu held.
func (t *tickReads) of(lt *LeaseTracker, size int) map[string]leaseSnapshot {
	var reads map[string]leaseSnapshot
	t.with(lt, func(e *trackerTick) {
		if e.reads == nil {
			e.reads = make(map[string]leaseSnapshot, size)
		}
		reads = e.reads
	})
	return reads
}

// noteVersion records the live-owner version lt's listing left.
func (t *tickReads) noteVersion(lt *LeaseTracker, version int64) {
	t.with(lt, func(e *trackerTick) { e.version, e.versioned = version, true })
}

// listingVersion returns the live-owner version lt's listing in the tick
// left, if one did.
func (t *tickReads) listingVersion(lt *LeaseTracker) (v int64, ok bool) {
	t.with(lt, func(e *trackerTick) { v, ok = e.version, e.versioned })
	return v, ok
}

// noteStamp records that lt's followed owners' liveness was found at stamp
// during the tick.
func (t *tickReads) noteStamp(lt *LeaseTracker, stamp int64) {
	t.with(lt, func(e *trackerTick) { e.stamp, e.stamped = stamp, true })
}

// stampOf returns the stamp noted for lt during the tick, if any.
func (t *tickReads) stampOf(lt *LeaseTracker) (stamp int64, ok bool) {
	t.with(lt, func(e *trackerTick) { stamp, ok = e.stamp, e.stamped })
	return stamp, ok
}
