package rules

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Table is a keyed table of the store: the seven location tables of package
// location plus the internal tables below. Every table is declared once, in
// the table registry (registry below); every list of tables, value codec and
// copy of the stores derives from it.
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

// The table registry: the one declaration of the store's tables, in the
// order RemoveAllByOwner sweeps an owner's rows (the authority records,
// then the location tables in the reference's order, 03 §2), then the
// bookkeeping tables. Everything that lists tables asks it: the stores'
// value codecs and copies (etcdstore), the owner index and the sweeps
// (OwnedTables), change notifications (LocationTables), RemoveLocationRow
// and RowOwnerID. TestRegistryDeclaresEveryTable fails when a Table
// constant is declared without an entry here.
var registry = newRegistry(
	declare(TableAuthority, ownedBy(func(r AuthorityRow) string { return r.Owner.OwnerID })),
	declare(location.TableMeshNodes, locationRow(func(d location.MeshNodeDescriptor) string { return d.OwnerID },
		func(tx *Tx, d *location.MeshNodeDescriptor) error {
			if err := releaseEntrySpot(tx, d); err != nil {
				return err
			}
			bumpMeshNode(tx, d.MeshName)
			return nil
		})),
	declare(location.TablePeers, locationRow(func(p location.PeerLocation) string { return p.OwnerID },
		bumps(location.LocationPeer, func(p *location.PeerLocation) *string { return &p.MeshName }))),
	declare(location.TableSpots, locationRow(func(s location.SpotLocation) string { return s.OwnerID },
		bumps(location.LocationSpot, func(s *location.SpotLocation) *string { return &s.MeshName }))),
	declare(location.TableActors, locationRow(func(a location.ActorLocation) string { return a.OwnerID },
		bumps(location.LocationActor, func(a *location.ActorLocation) *string { return &a.MeshName }))),
	declare(location.TableRoutes, locationRow(func(r location.RouteLocation) string { return r.OwnerID },
		bumps[location.RouteLocation](location.LocationRoute, nil))),
	declare(location.TableClientServers, locationRow(func(d location.ClientServerDescriptor) string { return d.OwnerID },
		bumps(location.LocationClientServer, func(d *location.ClientServerDescriptor) *string { return &d.ChannelName }))),
	declare(location.TableFanoutPublishers, locationRow(func(d location.FanoutPublisherDescriptor) string { return d.OwnerID }, nil)),
	declare(TableEntryClaims, bookkeeping[EntryClaim]()),
	declare(TableLedger, bookkeeping[LedgerEntry]()),
	declare(TableRelocations, bookkeeping[RelocationRecord]()),
	declare(TableAggregates, bookkeeping[AggregateRecord]()),
	declare(TableTransferActive, bookkeeping[TransferPointer]()),
	declare(TableTransferRecords, bookkeeping[location.ActorTransferRecord]()),
	declare(TableReservationTerminals, bookkeeping[ReservationTerminal]()),
	declare(TableOperationTerminals, bookkeeping[location.TerminalRecord]()),
)

// TableSpec is the declaration of one table. Its methods work on the
// table's values as rules.Record.Value holds them: values of the table's Go
// type (never pointers to it).
type TableSpec struct {
	name Table
	// location: one of the seven location tables.
	location bool
	ops      valueOps
}

// Name is the table's name: its key segment below the store's root
// (keys.Layout.TablePrefix) and part of its values' format tag.
func (s *TableSpec) Name() Table { return s.name }

// Location reports whether the table is one of the seven location tables,
// whose rows carry an owner id and count as live only while that owner id
// holds a lease.
func (s *TableSpec) Location() bool { return s.location }

// Owned reports whether each row of the table is held by an owner id that
// OwnerID returns: the location tables and the authority table. An owner's
// rows of these tables are what RemoveAllByOwner removes and what an owner
// index lists.
func (s *TableSpec) Owned() bool { return s.ops.owned() }

// Type is the Go type of the table's values.
func (s *TableSpec) Type() reflect.Type { return s.ops.goType() }

// Holds reports whether v is a value of the table's type.
func (s *TableSpec) Holds(v any) bool { return reflect.TypeOf(v) == s.ops.goType() }

// Clone returns a deep copy of a value of the table (the type's Clone
// method); a value of another type is returned as it is.
func (s *TableSpec) Clone(v any) any { return s.ops.clone(v) }

// OwnerID returns the owner id of a value of an owned table; ok is false for
// a table that is not owned or a value of another type.
func (s *TableSpec) OwnerID(v any) (ownerID string, ok bool) { return s.ops.ownerID(v) }

// DecodeJSON decodes a value of the table from its JSON (the encoding of
// the Go type).
func (s *TableSpec) DecodeJSON(raw []byte) (any, error) { return s.ops.decodeJSON(raw) }

// NewValueSlot returns a slot that a JSON decoder fills with one value of
// the table in place, so that a value embedded in a larger document is
// decoded in the same pass as the document (see ValueSlot).
func (s *TableSpec) NewValueSlot() ValueSlot { return s.ops.newSlot() }

// ValueSlot receives one decoded value of a table.
type ValueSlot interface {
	// Target is what to decode into: for encoding/json, a pointer to a nil
	// pointer to the table's type, left nil when the JSON is absent or null.
	Target() any
	// Value returns the decoded value; ok is false when nothing (or null)
	// was decoded.
	Value() (v any, ok bool)
}

// Tables returns the declaration of every table, in registry order.
func Tables() []*TableSpec { return append([]*TableSpec(nil), registry.all...) }

// Lookup returns the declaration of table t; ok is false for an unknown
// table.
func Lookup(t Table) (spec *TableSpec, ok bool) {
	spec, ok = registry.byName[t]
	return spec, ok
}

// LocationTables returns the seven location tables in the order
// RemoveAllByOwner sweeps them (the reference's order, 03 §2).
func LocationTables() []Table { return append([]Table(nil), registry.location...) }

// OwnedTables returns the owned tables (TableSpec.Owned) in the order an
// owner's rows are removed: the authority records first, then
// LocationTables.
func OwnedTables() []Table { return append([]Table(nil), registry.owned...) }

// RowOwnerID returns the owner id of a location-table row value (any of the
// seven row types); ok is false for any other value.
func RowOwnerID(v any) (ownerID string, ok bool) {
	spec, found := registry.byType[reflect.TypeOf(v)]
	if !found || !spec.location {
		return "", false
	}
	return spec.OwnerID(v)
}

// RemoveLocationRow plans the deletion of one row of a location table
// together with what the reference does alongside (03 §2, §4.2), as the
// table's declaration says:
//
//   - mesh node: release its entry-spot claim if the claim matches the row
//     exactly; stamps (Peer, mesh) and the mesh-node stamp;
//   - peer: (Peer, mesh); spot: (Spot, mesh); actor: (Actor, mesh) (anomaly
//     A-08 fixed: RemoveAllByOwner bumps the mesh counter too);
//   - route: (Route) only; client server: (ClientServer, channel);
//   - fanout publisher: no stamp.
//
// Every (kind, mesh) bump also moves the kind's global counter. An absent row
// plans nothing. It does not check ownership or leases: the individual
// removes and RemoveAllByOwner do that first.
func RemoveLocationRow(tx *Tx, t location.Table, key string) error {
	rec, ok := tx.Get(t, key)
	if !ok {
		return nil
	}
	spec, found := registry.byName[t]
	if !found || !spec.location || !spec.Holds(rec.Value) {
		return fmt.Errorf("%w: table %s key %q holds %T, which is not a row of that location table", location.ErrInternal, t, key, rec.Value)
	}
	if err := spec.ops.alongside(tx, rec.Value); err != nil {
		return err
	}
	tx.Delete(t, key)
	return nil
}

// tableRegistry indexes the declarations.
type tableRegistry struct {
	all      []*TableSpec
	byName   map[Table]*TableSpec
	byType   map[reflect.Type]*TableSpec
	location []Table
	owned    []Table
}

// newRegistry indexes specs; it panics on a name or type declared twice,
// which the package's tests would meet at once (a programming error, not
// input).
func newRegistry(specs ...*TableSpec) *tableRegistry {
	r := &tableRegistry{byName: map[Table]*TableSpec{}, byType: map[reflect.Type]*TableSpec{}}
	for _, s := range specs {
		if _, dup := r.byName[s.name]; dup {
			panic(fmt.Sprintf("rules: table %q declared twice", s.name))
		}
		if _, dup := r.byType[s.Type()]; dup {
			panic(fmt.Sprintf("rules: value type %v declared for two tables", s.Type()))
		}
		r.all = append(r.all, s)
		r.byName[s.name] = s
		r.byType[s.Type()] = s
		if s.location {
			r.location = append(r.location, s.name)
		}
		if s.Owned() {
			r.owned = append(r.owned, s.name)
		}
	}
	return r
}

// cloner is a value type with a deep copy (location.Cloner).
type cloner[T any] interface{ Clone() T }

// tableClass says what kind of table a declaration makes.
type tableClass[T any] struct {
	location bool
	// owner returns a row's owner id; it takes the row by value, so that
	// asking for it does not move the row to the heap.
	owner func(T) string
	// removal plans what removing a location row does besides deleting it
	// (nil: nothing).
	removal func(tx *Tx, row *T) error
}

// bookkeeping declares an internal table whose rows no owner holds.
func bookkeeping[T any]() tableClass[T] { return tableClass[T]{} }

// ownedBy declares an internal table whose rows an owner id holds.
func ownedBy[T any](owner func(T) string) tableClass[T] { return tableClass[T]{owner: owner} }

// locationRow declares a location table: rows held by an owner id, and
// what removing one plans besides deleting it (planned before the delete;
// nil for nothing).
func locationRow[T any](owner func(T) string, removal func(tx *Tx, row *T) error) tableClass[T] {
	return tableClass[T]{location: true, owner: owner, removal: removal}
}

// bumps is a removal that moves the row's change stamp: (kind, mesh), mesh
// nil for the kind's global stamp only.
func bumps[T any](kind location.LocationKind, mesh func(*T) *string) func(tx *Tx, row *T) error {
	return func(tx *Tx, row *T) error {
		var m *string
		if mesh != nil {
			m = mesh(row)
		}
		tx.Bump(kind, m)
		return nil
	}
}

// declare makes the declaration of table name whose values are T.
func declare[T cloner[T]](name Table, c tableClass[T]) *TableSpec {
	return &TableSpec{name: name, location: c.location, ops: valueOf[T]{owner: c.owner, removal: c.removal}}
}

// valueOps are the operations on one table's values.
type valueOps interface {
	goType() reflect.Type
	owned() bool
	clone(v any) any
	ownerID(v any) (string, bool)
	decodeJSON(raw []byte) (any, error)
	newSlot() ValueSlot
	alongside(tx *Tx, v any) error
}

// valueOf implements valueOps for values of type T.
type valueOf[T cloner[T]] struct {
	owner   func(T) string
	removal func(tx *Tx, row *T) error
}

func (valueOf[T]) goType() reflect.Type { return reflect.TypeFor[T]() }

func (o valueOf[T]) owned() bool { return o.owner != nil }

func (valueOf[T]) clone(v any) any {
	if x, ok := v.(T); ok {
		return x.Clone()
	}
	return v
}

func (o valueOf[T]) ownerID(v any) (string, bool) {
	x, ok := v.(T)
	if !ok || o.owner == nil {
		return "", false
	}
	return o.owner(x), true
}

func (valueOf[T]) decodeJSON(raw []byte) (any, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

func (valueOf[T]) newSlot() ValueSlot { return &slotOf[T]{} }

func (o valueOf[T]) alongside(tx *Tx, v any) error {
	x, ok := v.(T)
	if !ok || o.removal == nil {
		return nil
	}
	return o.removal(tx, &x)
}

// slotOf is the ValueSlot of values of type T.
type slotOf[T any] struct{ p *T }

func (s *slotOf[T]) Target() any { return &s.p }

func (s *slotOf[T]) Value() (any, bool) {
	if s.p == nil {
		return nil, false
	}
	return *s.p, true
}
