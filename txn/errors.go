package txn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Sentinel errors. Test with errors.Is.
var (
	// ErrContention: the observations of a decision kept changing between
	// its read and its commit for the whole retry budget. Nothing was
	// written. Errors that wrap it also wrap location.ErrUnavailable.
	ErrContention = errors.New("txn: too much contention, the write was not applied")
	// ErrOutcomeUnknown is location.ErrOutcomeUnknown: a transaction's
	// result was lost (deadline, lost connection) and re-reading could not
	// prove whether it was applied (for example because the history was
	// compacted meanwhile). The caller must re-read before acting on the
	// operation's effect.
	ErrOutcomeUnknown = location.ErrOutcomeUnknown
)

// contentionError wraps ErrContention and location.ErrUnavailable.
func contentionError(op string, attempts int) error {
	return fmt.Errorf("%s: gave up after %d attempts: %w (%w)", op, attempts, ErrContention, location.ErrUnavailable)
}

// Code returns the gRPC code of an etcd client error (codes.Unknown when it
// carries none); context errors map to Canceled and DeadlineExceeded.
func Code(err error) codes.Code {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code()
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	}
	return codes.Unknown
}

// IsAmbiguous reports whether a write that failed with err may nevertheless
// have been applied: the request may have reached the server before the
// deadline passed or the connection broke. Errors by which the server
// refused the request (bad request, permission, no leader, limits) are not
// ambiguous.
func IsAmbiguous(err error) bool {
	if err == nil {
		return false
	}
	switch Code(err) {
	case codes.InvalidArgument, codes.OutOfRange, codes.ResourceExhausted, codes.NotFound,
		codes.FailedPrecondition, codes.PermissionDenied, codes.Unauthenticated,
		codes.AlreadyExists, codes.Unimplemented:
		return false
	case codes.Unavailable:
		// The server answers "no leader" before proposing anything.
		return !strings.Contains(err.Error(), "no leader")
	}
	return true
}

// IsCompacted reports whether err says that a revision was compacted.
func IsCompacted(err error) bool {
	return errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrGRPCCompacted) ||
		(Code(err) == codes.OutOfRange && strings.Contains(err.Error(), "compacted"))
}

// IsLeaseNotFound reports whether err says that a lease does not exist.
func IsLeaseNotFound(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaseNotFound) || errors.Is(err, rpctypes.ErrGRPCLeaseNotFound) ||
		(Code(err) == codes.NotFound && strings.Contains(err.Error(), "lease not found"))
}

// Unavailable wraps an etcd error that proves nothing was applied (or a
// failed read) into an error wrapping location.ErrUnavailable, unless it is
// a context error of the caller, which is wrapped as is. A *RetryError (the
// caller's context ended while etcd kept answering transient errors) wraps
// location.ErrUnavailable as well as the context's error.
func Unavailable(op string, err error) error {
	var re *RetryError
	if !errors.As(err, &re) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, location.ErrUnavailable, err)
}
