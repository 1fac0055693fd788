package location

import (
	"context"
	"time"
)

// OwnerLeaseKeeper is an optional capability of an OwnerLeaseStore: renewals
// that cost the backend no write, and a signal as soon as a lease ends
// between renewals. etcdstore has it (a renewal is one etcd keep-alive; the
// owner key is watched). Package session uses it when the store has it and
// renews with RenewOwnerLease otherwise (memstore, other stores).
//
// While a lease is kept, ReadOwnerLease keeps its contract for every
// reader: found while the lease lives, missing after; the generation never
// changes; the expiry it reports is never earlier than the backend's own and
// never in the past while the lease is found (it may be later than the last
// renewal's now + TTL, by the backend's rounding).
type OwnerLeaseKeeper interface {
	// KeepOwnerLease renews t's lease with ttl exactly as RenewOwnerLease
	// does (KindRenewed or KindStale, same validation and errors) and, when
	// renewed, returns the KeptOwnerLease through which to renew it from
	// then on. The caller must Close it.
	KeepOwnerLease(ctx context.Context, t OwnerToken, ttl time.Duration) (OwnerLeaseRenewResult, KeptOwnerLease, error)
}

// KeptOwnerLease is one owner lease renewed through an OwnerLeaseKeeper.
// Implementations are safe for concurrent use.
type KeptOwnerLease interface {
	// Renew extends the lease to now + the TTL given to KeepOwnerLease, as
	// RenewOwnerLease would: KindRenewed (LeaseExpiresAt and StoreNow set)
	// or KindStale once the lease ended. An error means the renewal was not
	// confirmed; the lease then expires no earlier than it would have
	// without the call.
	Renew(ctx context.Context) (OwnerLeaseRenewResult, error)
	// Lost is closed as soon as the store learns that the lease ended
	// (expired, revoked, released, or its owner id claimed again), without
	// waiting for a renewal; Renew answers KindStale from then on.
	Lost() <-chan struct{}
	// Close stops the keeper's background work and waits for it to end. It
	// neither renews nor releases the lease. Idempotent.
	Close()
}
