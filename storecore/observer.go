package storecore

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Op names one operation of a store.
type Op struct {
	// Name is the method's name, for example "UpdateSpot".
	Name string
	// Table is the table the operation reads or writes first (for example
	// location.TableSpots for UpdateSpot, rules.TableAuthority for Reserve);
	// "" for operations on owner leases, change stamps, change watches and
	// all of an owner's rows.
	Table location.Table
}

// Observer sees every operation of a Store: Start when it begins, before
// anything else (the context check included), and End once when it ends,
// whatever the outcome. It is the one place where per-operation
// instrumentation belongs (latency, counts by result kind and error class,
// a tracing span per operation), for every store built on Store. Its methods
// run on the caller's goroutine, concurrently for concurrent calls, so they
// must be safe for concurrent use and should not block.
type Observer interface {
	// Start is called when op begins. The context it returns is the one the
	// operation runs with and the one End receives (a tracer puts its span
	// there); return ctx itself to change nothing.
	Start(ctx context.Context, op Op) context.Context
	// End is called when op ends, with the context Start returned.
	End(ctx context.Context, op Op, out Outcome)
}

// Outcome is how an operation ended.
type Outcome struct {
	// Result is the operation's result as returned to the caller (nil for
	// operations without one); on an error it is whatever the operation
	// returned with it (usually the zero value).
	Result any
	// Err is the error returned to the caller, nil on success.
	Err error
	// Elapsed is the operation's duration on the monotonic clock, from just
	// before Start to just before End.
	Elapsed time.Duration
}

// Kind returns the result's kind: the Kind field of results that have one
// (location.ResultKind, for example "conflict"), the Status of a write
// result (location.WriteStatus), a result that is itself a ResultKind or
// WriteStatus; "" for results without a kind (rows, pages, counts) and on
// an error.
func (o Outcome) Kind() string {
	if o.Err != nil || o.Result == nil {
		return ""
	}
	switch r := o.Result.(type) {
	case location.ResultKind:
		return string(r)
	case location.WriteStatus:
		return string(r)
	case location.WriteResult:
		return string(r.Status)
	}
	v := reflect.ValueOf(o.Result)
	if v.Kind() != reflect.Struct {
		return ""
	}
	if f := v.FieldByName("Kind"); f.IsValid() && f.Type() == reflect.TypeFor[location.ResultKind]() {
		return f.String()
	}
	return ""
}

// Error classes (ErrorClass).
const (
	ClassNone             = ""
	ClassCanceled         = "canceled"
	ClassDeadlineExceeded = "deadline_exceeded"
	ClassInvalidArgument  = "invalid_argument"
	ClassTooLarge         = "too_large"
	ClassScanExpired      = "scan_expired"
	ClassUnsupported      = "unsupported"
	ClassUnavailable      = "unavailable"
	ClassInternal         = "internal"
	ClassOther            = "other"
)

// ErrorClass classifies an error by the sentinel it wraps, for counting:
// ClassNone for nil, the caller's context (canceled, deadline exceeded),
// then the location sentinels (invalid argument, too large, scan expired,
// unsupported, unavailable, internal), ClassOther for anything else (an
// etcd outcome that stayed unknown, for example).
func ErrorClass(err error) string {
	switch {
	case err == nil:
		return ClassNone
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ClassDeadlineExceeded
	case errors.Is(err, location.ErrInvalidArgument):
		return ClassInvalidArgument
	case errors.Is(err, location.ErrTooLarge):
		return ClassTooLarge
	case errors.Is(err, location.ErrScanExpired):
		return ClassScanExpired
	case errors.Is(err, location.ErrUnsupported):
		return ClassUnsupported
	case errors.Is(err, location.ErrUnavailable):
		return ClassUnavailable
	case errors.Is(err, location.ErrInternal):
		return ClassInternal
	}
	return ClassOther
}
