package location

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test with errors.Is.
var (
	// ErrInvalidArgument classifies bad input. Every validation error wraps it
	// and is an *InputError.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrTooLarge reports an operation that cannot fit in one store
	// transaction (etcd's request or operation limits). Nothing was written.
	ErrTooLarge = errors.New("operation too large for one transaction")
	// ErrInternal reports a broken store invariant (for example a capacity
	// ledger that would become negative). Nothing was written.
	ErrInternal = errors.New("internal store invariant violated")
	// ErrScanExpired reports that a location-table continuation token refers to
	// a snapshot the store can no longer read (for example after compaction).
	ErrScanExpired = errors.New("continuation snapshot expired")
	// ErrUnsupported reports an optional capability or test hook that a store
	// does not provide.
	ErrUnsupported = errors.New("unsupported by this store")
	// ErrUnavailable reports that the backing service could not be reached or
	// did not answer in time; the outcome of a write is known to be "not
	// applied" when this error is returned (ambiguous outcomes are resolved by
	// the store before it answers).
	ErrUnavailable = errors.New("store unavailable")
	// ErrOutcomeUnknown reports a write whose answer was lost (deadline, lost
	// connection) and whose outcome the store could not settle by re-reading
	// before the caller's deadline (for example because the history it
	// needed was compacted, or the backend stayed unreachable): it may or
	// may not have been applied, and may still apply. It never wraps
	// ErrUnavailable. The caller must read before acting on the write's
	// effect (decision E-9).
	ErrOutcomeUnknown = errors.New("outcome of the write is unknown")
)

// ErrorClass says which kind of bad input an InputError reports. The values
// mirror the reference's JavaScript error classes.
type ErrorClass int

// Error classes.
const (
	// ClassType is the reference's TypeError: the value has the wrong shape
	// or text (empty, NUL, wrong format, wrong combination of fields).
	ClassType ErrorClass = iota + 1
	// ClassRange is the reference's RangeError: a number or size is out of
	// bounds.
	ClassRange
)

// String returns "type" or "range".
func (c ErrorClass) String() string {
	switch c {
	case ClassType:
		return "type"
	case ClassRange:
		return "range"
	default:
		return fmt.Sprintf("ErrorClass(%d)", int(c))
	}
}

// InputError describes one rejected input. It wraps ErrInvalidArgument.
type InputError struct {
	// Class is the kind of violation.
	Class ErrorClass
	// Code is a stable identifier such as "meshnode.capacity" (see
	// docs/validation.md); tests and callers may switch on it.
	Code string
	// Message says in words what was wrong.
	Message string
}

// Error implements error.
func (e *InputError) Error() string {
	return fmt.Sprintf("invalid argument (%s, %s): %s", e.Code, e.Class, e.Message)
}

// Unwrap makes errors.Is(err, ErrInvalidArgument) hold.
func (e *InputError) Unwrap() error { return ErrInvalidArgument }

// NewTypeError returns an InputError of class ClassType.
func NewTypeError(code, format string, args ...any) *InputError {
	return &InputError{Class: ClassType, Code: code, Message: fmt.Sprintf(format, args...)}
}

// NewRangeError returns an InputError of class ClassRange.
func NewRangeError(code, format string, args ...any) *InputError {
	return &InputError{Class: ClassRange, Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsInputError returns the InputError inside err, if any.
func AsInputError(err error) (*InputError, bool) {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie, true
	}
	return nil, false
}
