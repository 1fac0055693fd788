package etcdstore

import (
	"bytes"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Deep copies of decoded values. A decoded value memoized on an observation
// (sharedRecord) is shared by every use of that observation, so each use
// that may modify it gets its own copy: a copy costs a few allocations where
// decoding the JSON again costs microseconds. Every table's value type is
// listed; a type missing here would merely be decoded on every use.
// TestValueCopies checks that no copy shares memory with its original, field
// by field, so that a reference field added to one of these types without a
// copy here fails it.

// copyable reports whether copyValue can copy values of v's type.
func copyable(v any) bool {
	switch v.(type) {
	case location.MeshNodeDescriptor, location.ClientServerDescriptor, location.FanoutPublisherDescriptor,
		location.PeerLocation, location.SpotLocation, location.ActorLocation, location.RouteLocation,
		location.ActorTransferRecord, location.TerminalRecord, rules.EntryClaim, rules.TransferPointer,
		rules.AuthorityRow, rules.LedgerEntry, rules.RelocationRecord, rules.AggregateRecord,
		rules.ReservationTerminal:
		return true
	}
	return false
}

// copyValue returns a deep copy of a copyable value (other values are
// returned as they are).
func copyValue(v any) any {
	switch x := v.(type) {
	case location.MeshNodeDescriptor:
		return rules.CloneMeshNode(x)
	case location.ClientServerDescriptor:
		return rules.CloneClientServer(x)
	case location.FanoutPublisherDescriptor:
		return rules.CloneFanoutPublisher(x)
	case location.PeerLocation:
		return rules.ClonePeer(x)
	case location.SpotLocation:
		return rules.CloneSpot(x)
	case location.ActorLocation:
		return rules.CloneActor(x)
	case location.RouteLocation:
		return rules.CloneRoute(x)
	case location.ActorTransferRecord:
		return rules.CloneTransferRecord(x)
	case location.TerminalRecord:
		return x.Clone()
	case rules.AuthorityRow:
		return copyAuthorityRow(x)
	case rules.RelocationRecord:
		x.Request = x.Request.Clone()
		if x.Aggregate != nil {
			fence := *x.Aggregate
			x.Aggregate = &fence
		}
		return x
	case rules.AggregateRecord:
		x.Request = x.Request.Clone()
		return x
	}
	// EntryClaim, TransferPointer, LedgerEntry and ReservationTerminal hold
	// no references: the interface holds a copy already.
	return v
}

// copyAuthorityRow returns a deep copy of an authority record.
func copyAuthorityRow(r rules.AuthorityRow) rules.AuthorityRow {
	r.Payload = bytes.Clone(r.Payload)
	r.Allocation = r.Allocation.Clone()
	if r.PendingCreation != nil {
		p := r.PendingCreation.Clone()
		r.PendingCreation = &p
	}
	if r.Creation != nil {
		c := *r.Creation
		r.Creation = &c
	}
	return r
}
