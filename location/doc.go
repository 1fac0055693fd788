// Package location is the domain model of the zlink location store: every row,
// key, filter, page, request and result type, the validation of every input,
// the typed errors, and the store interfaces that memstore and etcdstore
// implement.
//
// The behaviour behind the interfaces is the zlink framework's in-memory
// reference (see docs/architecture.md and docs/deviations.md). This package
// holds no behaviour of a particular store: the shared decision procedures are
// in package rules, the stores in memstore and etcdstore.
//
// Conventions:
//   - Every method takes a context.Context first and returns the context's error,
//     wrapped, before doing anything when the context is already done.
//   - Bad input is reported as an error that wraps ErrInvalidArgument and is an
//     *InputError carrying a class and a stable code; nothing is changed.
//   - Business outcomes (conflict, stale, ...) are results, not errors. A result
//     that the reference models as a tagged union is a struct with a Kind field
//     and the fields of that kind; a union whose variants carry no data is
//     returned as its ResultKind alone.
//   - Times are UTC at millisecond precision; "absent" optional values are nil
//     pointers; byte slices and nested values are copied in and out.
package location
