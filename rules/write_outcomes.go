package rules

import (
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// storedResult is a successful write result.
func storedResult(generation int64, updatedAt time.Time) location.WriteResult {
	return location.WriteResult{Status: location.Stored, Generation: generation, UpdatedAt: updatedAt}
}

// ignoredStaleResult is the result of a write that lost to newer state; like every
// failure it carries generation 0 and the epoch.
func ignoredStaleResult() location.WriteResult {
	return location.WriteResult{Status: location.IgnoredStale, UpdatedAt: location.Epoch()}
}

// rejectedConflictResult is the result of a write that conflicts with another
// owner's live claim (or with the writer's own lease state).
func rejectedConflictResult() location.WriteResult {
	return location.WriteResult{Status: location.RejectedConflict, UpdatedAt: location.Epoch()}
}

// ownerIDLive reports whether ownerID holds a live owner lease of any
// generation (the reference's OwnerLive: liveness by id only).
func ownerIDLive(tx *Tx, ownerID string) bool {
	_, live := tx.Source().LiveLease(ownerID)
	return live
}

// exactLeaseLive reports whether ownerID holds a live owner lease of exactly
// the given generation.
func exactLeaseLive(tx *Tx, ownerID string, generation int64) bool {
	g, live := tx.Source().LiveLease(ownerID)
	return live && g == generation
}

// takeoverAllowed is the reference's takeover test (02 §1.2): may a writer
// (nextOwner, nextGeneration) replace a row written by (curOwner,
// curGeneration) under intent?
func takeoverAllowed(tx *Tx, curOwner string, curGeneration int64, nextOwner string, nextGeneration int64, intent location.WriteIntent) bool {
	if intent == location.IntentTakeover {
		return true // explicit handoff: no liveness or owner check
	}
	if intent != location.IntentNewClaim {
		return false
	}
	liveGeneration, live := tx.Source().LiveLease(curOwner)
	if !live {
		return true // the row's owner is gone
	}
	// Same owner restarted: the row is from an older incarnation and the
	// writer holds the owner's current live lease.
	return curOwner == nextOwner && curGeneration != nextGeneration && liveGeneration == nextGeneration
}

// readRow reads (t, key) as a value of type T: the decision's own copy.
func readRow[T any](tx *Tx, t Table, key string) (T, Record, bool, error) {
	rec, ok := tx.Get(t, key)
	return rowAs[T](rec, ok, t, key)
}

// peekRow is readRow for a decision that only looks at the row (compares
// its fields, copies out its scalars): the value may be shared with the
// source or with the decision's own writes (Tx.GetShared), so the decision
// must not modify anything it references, nor return or write it.
func peekRow[T any](tx *Tx, t Table, key string) (T, Record, bool, error) {
	rec, ok := tx.GetShared(t, key)
	return rowAs[T](rec, ok, t, key)
}

// rowAs returns the value of a record read from (t, key) as a T.
func rowAs[T any](rec Record, ok bool, t Table, key string) (T, Record, bool, error) {
	var zero T
	if !ok {
		return zero, Record{}, false, nil
	}
	v, ok := rec.Value.(T)
	if !ok {
		return zero, Record{}, false, fmt.Errorf("%w: table %s key %q holds %T, want %T", location.ErrInternal, t, key, rec.Value, zero)
	}
	return v, rec, true, nil
}

// ownedTable is a table whose rows carry their owner's token (owner id and
// lease generation): the descriptor tables and the spot and actor tables.
type ownedTable[R any] struct {
	table Table
	// token returns the row's owner token (the row by value: a row passed
	// by pointer to a function value escapes to the heap).
	token func(R) location.OwnerToken
}

// removeOwnedRow is the shared remove of a row that carries its owner's
// token (02 §2.3, §2.6, §2.7 for descriptors, §4.2 for spots and actors):
// the row goes when owner is its exact owner token, with no liveness check;
// IgnoredStale otherwise. (The reference's fallback to the table
// generation for lease rows without a lease generation is unreachable in
// Go.)
func removeOwnedRow[R any](tx *Tx, ot ownedTable[R], key string, owner location.OwnerToken) (location.WriteStatus, error) {
	cur, _, exists, err := readRow[R](tx, ot.table, key)
	if err != nil {
		return "", err
	}
	if !exists || ot.token(cur) != owner {
		return location.IgnoredStale, nil
	}
	if err := RemoveLocationRow(tx, ot.table, key); err != nil {
		return "", err
	}
	return location.Stored, nil
}
