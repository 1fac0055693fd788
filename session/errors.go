package session

import "errors"

// Sentinel errors. Test with errors.Is: the errors the package returns wrap
// them with details.
var (
	// ErrLeaseLost: the lease ended without the session ending it: a
	// renewal answered stale (the lease expired, was revoked or released,
	// or the owner id was claimed again), or the store reported the loss
	// between renewals. The token is dead; a new session claims a new one.
	ErrLeaseLost = errors.New("session: owner lease lost")
	// ErrDeadlinePassed: no renewal was confirmed before the deadline
	// until which the lease could be trusted (the last confirmed renewal's
	// lease time minus the fencing margin). The lease may still live in
	// the store, but the session can no longer vouch for it. The error also
	// wraps the last renewal attempt's error, if any.
	ErrDeadlinePassed = errors.New("session: no owner-lease renewal confirmed before the trusted deadline")
	// ErrClosed: Close ended the session.
	ErrClosed = errors.New("session: closed")
	// ErrOrphaned: Orphan ended the session, leaving its lease alive.
	ErrOrphaned = errors.New("session: orphaned (lease left alive)")
	// ErrLeaseHeld: New found the owner id holding a live lease (its own
	// from an earlier process included): claim again once it has expired
	// or been released, or Adopt its token.
	ErrLeaseHeld = errors.New("session: the owner id holds a live lease")
	// ErrGenerationExhausted: the store has issued its last lease
	// generation; no claim can ever succeed again.
	ErrGenerationExhausted = errors.New("session: the store's lease generations are exhausted")
)
