// Package session keeps one owner lease alive for as long as a process
// needs it, and tells the process when it can no longer trust it.
//
// A Session is what etcd's concurrency.Session is for etcd leases, for the
// owner leases of any location.OwnerLeaseStore (etcdstore, memstore, or
// another provider): New claims a lease for an owner id (Adopt takes over a
// token claimed before, for a handover), and a goroutine renews it every
// RenewInterval, each attempt bounded by RenewTimeout, retrying a failed
// attempt sooner (jittered backoff) while the lease may still be trusted.
//
// The session trusts its lease, and so may its user (TrustedUntil, Valid,
// and WhileTrusted, a context done when the lease stops being trusted),
// up to a local deadline computed from each confirmed renewal as the
// framework's location runtime does: the time the store's answer arrived,
// plus the lease time the store reported as left (LeaseExpiresAt −
// StoreNow), minus the request's round trip, minus FencingMargin. With the
// usual answer (TTL left), that is the time the renewal was sent + TTL −
// FencingMargin. The margin covers clock drift and the delay between the
// store's expiry and a new owner's first write.
//
// Done is closed, and Err says why, when:
//
//   - the context given to New or Adopt ends (Err wraps its error);
//   - the lease is lost: a renewal answered stale (expired, revoked,
//     released, or the owner id claimed again), or the store's
//     location.OwnerLeaseKeeper reported the loss between renewals
//     (ErrLeaseLost);
//   - no renewal was confirmed before the deadline above (ErrDeadlinePassed);
//   - Close (ErrClosed) or Orphan (ErrOrphaned) was called.
//
// Done closes the moment the session ends, whatever it is doing: a store
// call in flight then (a renewal whose answer the store is still settling)
// has its context cancelled and is no longer waited for; its answer is
// ignored. Stopped closes once that call, and every other goroutine of the
// session, has returned.
//
// Close ends the session and releases the lease, as etcd's Session.Close
// revokes its lease; Orphan ends it and leaves the lease to expire or to be
// adopted by another process. Both wait for Stopped (Close until its
// context ends, Orphan for at most RenewTimeout). When the context ends or
// the deadline passes, the lease is not released until Close.
//
// Renewals go through the store's location.OwnerLeaseKeeper capability
// when it has one (etcdstore: one etcd keep-alive per renewal, no write, and
// the owner key is watched, so a revoked lease ends the session at once;
// see docs/sessions.md), and through RenewOwnerLease otherwise.
//
// Timing follows the framework's defaults and startup rule: TTL 15 s,
// renew interval 5 s, renew timeout 3 s, fencing margin 5 s, and
// RenewInterval + RenewTimeout < TTL − FencingMargin, so that a renewal
// sent on time and answered within its timeout always lands before the
// deadline.
package session
