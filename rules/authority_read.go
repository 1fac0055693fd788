package rules

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// ReadAuthority is readAuthority (04 §2.1): the row's snapshot, or missing.
// The key is assumed validated.
func ReadAuthority(tx *Tx, key location.AuthorityKey) location.AuthorityReadResult {
	return readAuthorityKey(tx, string(key))
}

// ReadCreationTerminal is readCreationTerminal (04 §2.7): the terminal
// published for op while it is visible (now < expiresAt), else missing. An
// expired record reads as missing on every store (decisions D-06 fixed, E-11);
// a store may purge it (see ExpiredCreationTerminal). The returned record's
// StoreNow is its publication time (D-14).
func ReadCreationTerminal(tx *Tx, op location.OperationIdentity) location.TerminalReadResult {
	rec, ok := visibleTerminal(tx, op)
	if !ok {
		return location.TerminalReadResult{Kind: location.KindMissing, StoreNow: tx.Now()}
	}
	return location.TerminalReadResult{Kind: location.KindFound, Record: terminalCopy(rec)}
}

// ExpiredCreationTerminal reports whether a terminal is stored for op but no
// longer visible, so that a store may purge it (memstore does, lazily).
func ExpiredCreationTerminal(tx *Tx, op location.OperationIdentity) bool {
	rec, ok := valueAt[location.TerminalRecord](tx, TableOperationTerminals, OperationKey(op))
	return ok && !terminalVisible(rec, tx.Now())
}

// visibleTerminal returns the terminal stored for op if it is still visible.
func visibleTerminal(tx *Tx, op location.OperationIdentity) (location.TerminalRecord, bool) {
	rec, ok := valueAt[location.TerminalRecord](tx, TableOperationTerminals, OperationKey(op))
	if !ok || !terminalVisible(rec, tx.Now()) {
		return location.TerminalRecord{}, false
	}
	return rec, true
}

// terminalVisible: a terminal is visible while now < expiresAt (INV-11).
func terminalVisible(rec location.TerminalRecord, now time.Time) bool {
	return rec.ExpiresAt.UnixMilli() > now.UnixMilli()
}

// readAuthorityKey reads a row by its key text.
func readAuthorityKey(tx *Tx, key string) location.AuthorityReadResult {
	row, ok := authorityRow(tx, key)
	if !ok {
		return missingResult(tx.Now())
	}
	return snapshotResult(row, tx.Now())
}

// authorityRow returns the stored row under key.
func authorityRow(tx *Tx, key string) (AuthorityRow, bool) {
	return valueAt[AuthorityRow](tx, TableAuthority, key)
}

// sharedAuthorityRow is authorityRow for a decision that may replace the
// row's fields but never modifies what they reference: the row may share
// it with the source (Tx.GetShared).
func sharedAuthorityRow(tx *Tx, key string) (AuthorityRow, bool) {
	v, _, ok, err := peekRow[AuthorityRow](tx, TableAuthority, key)
	return v, ok && err == nil
}

// reservationTerminal returns how the creation reservation id ended, or "".
func reservationTerminal(tx *Tx, reservationID string) string {
	t, _ := valueAt[ReservationTerminal](tx, TableReservationTerminals, reservationID)
	return t.State
}

// valueAt reads (t, key) as a value of type T. A value of another type is a
// broken invariant that readRow reports; the authority rules treat it as
// absent, so reads never fail.
func valueAt[T any](tx *Tx, t Table, key string) (T, bool) {
	v, _, ok, err := readRow[T](tx, t, key)
	return v, ok && err == nil
}
