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

// OwnerLivenessStamper is an optional capability of an OwnerLivenessReader
// for a process that follows many owners' liveness (package autoconnect's
// LeaseTracker): a stamp of every owner's liveness with each answer, so
// that the next read answers "nothing changed" with the stamp alone instead
// of every owner again. etcdstore has it (from its watch cache, the
// revision of the last change of the owner keys); memstore, whose leases
// end by time without a write, does not.
type OwnerLivenessStamper interface {
	// ReadOwnerLivenessSince is ReadOwnerLiveness for a caller that holds
	// the answers of an earlier call stamped since (0: none). It answers
	// as of one moment between the call and its return, as
	// ReadOwnerLiveness does: the stamp of that moment, and, unless that
	// stamp is since, every owner's liveness (Changed). The same stamp at
	// two moments means every owner's answer (Live and Token) is the same
	// at both; a stamp never returns to an earlier value, and may move
	// without any change. A zero Stamp says the store could not stamp this
	// answer (etcdstore: its watch cache is off or cannot answer now); the
	// owners are still answered. Bad input (ValidateOwnerID of any id) is
	// an *InputError and nothing is read; a done ctx is an error wrapping
	// ctx.Err().
	ReadOwnerLivenessSince(ctx context.Context, ownerIDs []string, since int64) (OwnerLivenessSince, error)
}

// OwnerLivenessSince is a ReadOwnerLivenessSince answer.
type OwnerLivenessSince struct {
	// Stamp is the stamp of the answer's moment; 0 when the store could
	// not stamp it.
	Stamp int64
	// Changed is set when Live holds every owner's liveness (in the order
	// of the ids): always unless Stamp equals the since of the call.
	Changed bool
	Live    []OwnerLiveness
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
