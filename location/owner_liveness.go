package location

import (
	"context"
	"time"
)

// OwnerLivenessReader is an optional capability of an OwnerLeaseStore: which
// of many owners hold a live lease, in one read. A process that follows the
// liveness of every node of a mesh (package autoconnect's LeaseTracker)
// asks it once per tick instead of reading each owner's lease: etcdstore
// answers it with one request whatever the number of owners (from its
// watch-fed cache, docs/caching.md), memstore under its lock.
//
// Stores without it are read one owner at a time with ReadOwnerLease.
type OwnerLivenessReader interface {
	// ReadOwnerLiveness reports, for each of ownerIDs (in the same order;
	// an id may appear more than once), whether it holds a live lease and
	// its token, all as of one moment between the call and its return:
	// every claim, release, expiry and lease end that completed before the
	// call is reflected, and Live is exactly what ReadOwnerLease's found
	// (KindFound) would say at that moment. Nothing is written, and no
	// expired entry is removed (unlike ReadOwnerLease in memory, A-20).
	// Bad input (ValidateOwnerID of any id) is an *InputError and nothing
	// is read; a done ctx is an error wrapping ctx.Err().
	ReadOwnerLiveness(ctx context.Context, ownerIDs []string) ([]OwnerLiveness, error)
}

// OwnerLiveness is one owner's answer of ReadOwnerLiveness.
type OwnerLiveness struct {
	// Live reports whether the owner id holds a live lease; Token is then
	// its token (the id and the lease generation), the zero token
	// otherwise.
	Live  bool
	Token OwnerToken
	// LeaseExpiresAt and StoreNow are the lease's expiry and the store time
	// of the answer, as ReadOwnerLease reports them, when the store knows
	// the expiry without asking for it lease by lease (memstore). Both are
	// zero when the store knows only that the lease is live now: on etcd a
	// lease ends when etcd ends it (expiry or revocation deletes its owner
	// key), which a watcher of the store learns at once
	// (ChangeWatcher), so the store does not ask etcd for each lease's
	// remaining time.
	LeaseExpiresAt, StoreNow time.Time
}

// ValidateOwnerIDs checks every id of a ReadOwnerLiveness call
// (ValidateOwnerID); the first bad one is the error.
func ValidateOwnerIDs(ownerIDs []string) error {
	for _, id := range ownerIDs {
		if err := ValidateOwnerID(id); err != nil {
			return err
		}
	}
	return nil
}
