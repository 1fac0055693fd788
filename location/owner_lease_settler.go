package location

import (
	"context"
	"time"
)

// OwnerLeaseClaimSettler is an optional capability of an OwnerLeaseStore:
// it tells the caller of a claim whose outcome was unknown whether that
// claim holds the lease. ClaimOwnerLease answers such a claim with an error
// wrapping ErrOutcomeUnknown; it may have applied, and then every later
// claim of the owner id is a conflict until its lease ends. etcdstore has
// it (the store remembers its own claims whose outcome is unknown and
// settles them by re-reading). Package session uses it before it claims
// again after an unknown outcome.
type OwnerLeaseClaimSettler interface {
	// SettleOwnerLeaseClaim settles the last claim of ownerID made through
	// this store whose outcome was unknown, by re-reading, never guessing.
	// held is true when it applied and its lease is live: the lease is then
	// renewed with ttl, and res is KindClaimed with its token, as the claim
	// would have answered. held is false when it did not apply (the store
	// makes sure that it never will), when its lease has ended since, and
	// when no such claim is pending. An error wrapping ErrUnavailable means
	// it could not be settled now and stays pending; nothing was written.
	SettleOwnerLeaseClaim(ctx context.Context, ownerID string, ttl time.Duration) (res OwnerLeaseClaimResult, held bool, err error)
}
