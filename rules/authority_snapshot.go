package rules

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// AuthoritySnapshotOf is the snapshot of a stored authority row as read at
// now. Every byte slice and nested value is a copy.
func AuthoritySnapshotOf(row AuthorityRow, now time.Time) location.AuthoritySnapshot {
	return location.AuthoritySnapshot{
		StoreVersion:             row.StoreVersion,
		Payload:                  row.Payload,
		ObjectGeneration:         row.ObjectGeneration,
		AuthorityOwnerGeneration: row.AuthorityOwnerGeneration,
		Owner:                    row.Owner,
		Allocation:               row.Allocation,
		PendingCreation:          row.PendingCreation,
		StoreNow:                 now,
	}.Clone()
}

// snapshotResult is the read result of a present row.
func snapshotResult(row AuthorityRow, now time.Time) location.AuthorityReadResult {
	s := AuthoritySnapshotOf(row, now)
	return location.AuthorityReadResult{Kind: location.KindSnapshot, Snapshot: &s, StoreNow: now}
}

// missingResult is the read result of an absent row.
func missingResult(now time.Time) location.AuthorityReadResult {
	return location.AuthorityReadResult{Kind: location.KindMissing, StoreNow: now}
}

// terminalCopy returns a deep copy of a terminal record.
func terminalCopy(r location.TerminalRecord) *location.TerminalRecord {
	c := r.Clone()
	return &c
}
