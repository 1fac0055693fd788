package txn

import (
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Default limits: etcd's defaults for --max-txn-ops and --max-request-bytes.
const (
	DefaultMaxTxnOps       = 128
	DefaultMaxRequestBytes = 1536 * 1024
)

// opOverhead is a generous estimate of the protobuf framing of one compare
// or one operation of a TxnRequest (tags, lengths, revisions, lease id).
const opOverhead = 48

// Limits are the server limits a transaction must respect (decision E-8).
type Limits struct {
	// MaxTxnOps bounds the compares, the Then operations and the Else
	// operations of one Txn (each separately); 0 means DefaultMaxTxnOps.
	MaxTxnOps int
	// MaxRequestBytes bounds the encoded size of one request; 0 means
	// DefaultMaxRequestBytes.
	MaxRequestBytes int
}

func (l Limits) maxOps() int {
	if l.MaxTxnOps <= 0 {
		return DefaultMaxTxnOps
	}
	return l.MaxTxnOps
}

func (l Limits) maxBytes() int {
	if l.MaxRequestBytes <= 0 {
		return DefaultMaxRequestBytes
	}
	return l.MaxRequestBytes
}

// MaxOps returns the effective operation limit.
func (l Limits) MaxOps() int { return l.maxOps() }

// MaxBytes returns the effective request size limit.
func (l Limits) MaxBytes() int { return l.maxBytes() }

// TxnShape is the size of a transaction about to be sent.
type TxnShape struct {
	Compares, Then, Else int
	// Bytes estimates the encoded request size.
	Bytes int
}

// Check returns an error wrapping location.ErrTooLarge (a *TooLargeError)
// when the shape does not fit the limits.
func (l Limits) Check(op string, s TxnShape) error {
	if max(s.Compares, s.Then, s.Else) > l.maxOps() || s.Bytes > l.maxBytes() {
		return &TooLargeError{Op: op, Shape: s, Limits: l}
	}
	return nil
}

// TooLargeError is the error of a transaction that does not fit the
// limits; it wraps location.ErrTooLarge. A batched caller can size its next
// batch from Shape.
type TooLargeError struct {
	Op     string
	Shape  TxnShape
	Limits Limits
}

// Error describes which limit the transaction exceeds.
func (e *TooLargeError) Error() string {
	l, s := e.Limits, e.Shape
	if n := max(s.Compares, s.Then, s.Else); n > l.maxOps() {
		return fmt.Sprintf("%s: %v: %d operations in one transaction, the limit is %d (compares %d, writes %d, reads %d)",
			e.Op, location.ErrTooLarge, n, l.maxOps(), s.Compares, s.Then, s.Else)
	}
	return fmt.Sprintf("%s: %v: about %d bytes in one transaction, the limit is %d",
		e.Op, location.ErrTooLarge, s.Bytes, l.maxBytes())
}

// Unwrap returns location.ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return location.ErrTooLarge }

// keyCost estimates the bytes one key of a compare or operation costs.
func keyCost(key string) int { return len(key) + opOverhead }

// KeyCost estimates the bytes one compare or operation on key adds to a
// transaction (the estimate Check's callers use), so that a batched caller
// can size its batches.
func KeyCost(key string) int { return keyCost(key) }
