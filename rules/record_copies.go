package rules

import "bytes"

// Deep copies of the internal records, in the family of location's Clone
// methods (location/clone.go): every stored value type has a Clone that
// shares no slice, map or pointer with its original, keeps nil as nil, and
// compares equal to it. Types without references return a plain copy, so
// that the table registry treats every value alike (TableSpec.Clone).

// Clone returns a copy of the claim (it holds no references).
func (c EntryClaim) Clone() EntryClaim { return c }

// Clone returns a copy of the entry (it holds no references).
func (e LedgerEntry) Clone() LedgerEntry { return e }

// Clone returns a deep copy of the record.
func (r AuthorityRow) Clone() AuthorityRow {
	r.Payload = bytes.Clone(r.Payload)
	r.Allocation = r.Allocation.Clone()
	if r.PendingCreation != nil {
		p := r.PendingCreation.Clone()
		r.PendingCreation = &p
	}
	if r.Creation != nil {
		c := *r.Creation // CreationInfo holds no references
		r.Creation = &c
	}
	return r
}

// Clone returns a deep copy of the record.
func (r RelocationRecord) Clone() RelocationRecord {
	r.Request = r.Request.Clone()
	if r.Aggregate != nil {
		fence := *r.Aggregate
		r.Aggregate = &fence
	}
	return r
}

// Clone returns a deep copy of the record.
func (r AggregateRecord) Clone() AggregateRecord {
	r.Request = r.Request.Clone()
	return r
}

// Clone returns a copy of the terminal (it holds no references).
func (t ReservationTerminal) Clone() ReservationTerminal { return t }

// Clone returns a copy of the pointer (it holds no references).
func (p TransferPointer) Clone() TransferPointer { return p }
