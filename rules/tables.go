package rules

import "github.com/zlink-systems/zlink-etcd/location"

// Table is a keyed table of the store: the seven location tables of package
// location plus the internal tables below.
type Table = location.Table

// Internal tables. Value types are listed with each.
const (
	// TableEntryClaims: EntryClaim, keyed by the entry spot's authority key.
	TableEntryClaims Table = "entryClaims"
	// TableTransferRecords: location.ActorTransferRecord, keyed by
	// TransferRecordKey.
	TableTransferRecords Table = "transferRecords"
	// TableTransferActive: TransferPointer, keyed by TransferSlotKey.
	TableTransferActive Table = "transferActive"
	// TableAuthority: AuthorityRow, keyed by the authority key text.
	TableAuthority Table = "authority"
	// TableLedger: LedgerEntry, keyed by Bucket.Key.
	TableLedger Table = "ledger"
	// TableRelocations: RelocationRecord, keyed by reservation id.
	TableRelocations Table = "relocations"
	// TableAggregates: AggregateRecord, keyed by AggregateKey.
	TableAggregates Table = "aggregates"
	// TableReservationTerminals: ReservationTerminal, keyed by reservation id.
	TableReservationTerminals Table = "reservationTerminals"
	// TableOperationTerminals: location.TerminalRecord, keyed by
	// OperationKey.
	TableOperationTerminals Table = "operationTerminals"
)

// Record is one stored value. Generation is the row generation of location
// rows (for peers and routes it equals the row's Generation field); other
// tables leave it 0.
type Record struct {
	Value      any
	Generation int64
}
