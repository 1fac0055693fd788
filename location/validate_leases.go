package location

import "time"

// Validation of owner-lease inputs (03-owner-leases-transfers-stamps §1).

// Codes of owner-lease validation errors.
const (
	// CodeLeaseOwnerID: an owner id that is empty or only whitespace (Type).
	CodeLeaseOwnerID = "lease.owner_id"
	// CodeLeaseTTL: a TTL outside 1 ms .. 2^53-1 ms (Range).
	CodeLeaseTTL = "lease.ttl"
)

// MaxTTLMillis is the largest TTL in milliseconds (2^53-1, the reference's
// largest safe integer). No time.Duration exceeds it, so it never binds in
// Go; it is kept to state the contract.
const MaxTTLMillis = MaxSafeInteger

// WholeMillis converts a TTL to whole milliseconds, truncating any
// sub-millisecond remainder (toward zero), and reports whether the result is
// a usable TTL: 1 .. MaxTTLMillis.
func WholeMillis(ttl time.Duration) (ms int64, ok bool) {
	ms = ttl.Milliseconds()
	return ms, ms >= 1 && ms <= MaxTTLMillis
}

// ValidateOwnerID checks an owner id given to ClaimOwnerLease,
// ReadOwnerLease or RenewOwnerLease (TrimText: not empty and not only
// whitespace; NUL allowed; no length bound).
func ValidateOwnerID(ownerID string) error {
	if p := trimTextProblem(ownerID); p != "" {
		return NewTypeError(CodeLeaseOwnerID, "owner id %s %s", quote(ownerID), p)
	}
	return nil
}

// ValidateLeaseTTL checks an owner-lease TTL and returns it in whole
// milliseconds (a sub-millisecond remainder is truncated). A TTL under 1 ms
// after truncation is a Range error.
func ValidateLeaseTTL(ttl time.Duration) (int64, error) {
	ms, ok := WholeMillis(ttl)
	if !ok {
		return 0, NewRangeError(CodeLeaseTTL, "owner lease TTL %v is %d whole milliseconds, outside 1..%d", ttl, ms, MaxTTLMillis)
	}
	return ms, nil
}
