package rules

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// lsRowTable adapts the spot, actor, peer or route table to the outcome
// matrix tests; S is what its remove returns (a status for the lease rows,
// a result for the owner rows).
type lsRowTable[S any] struct {
	name   string
	table  Table
	key    string
	row    func(owner string, generation int64) any
	write  func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error)
	remove func(tx *Tx, owner location.OwnerToken) (S, error)
	stamps []StampCounter
}

// lsRowTableOf returns the adapter of table, its rows of type R made by row,
// written by write, and removed under k (table key tableKey(k)) by remove;
// a change moves stamps.
func lsRowTableOf[R, K, S any](name string, table Table, k K, tableKey func(K) string, row func(string, int64) R,
	write func(*Tx, R, location.WriteIntent) (location.WriteResult, error),
	remove func(*Tx, K, location.OwnerToken) (S, error), stamps ...StampCounter,
) lsRowTable[S] {
	return lsRowTable[S]{
		name: name, table: table, key: tableKey(k), stamps: stamps,
		row: func(owner string, g int64) any { return row(owner, g) },
		write: func(tx *Tx, r any, intent location.WriteIntent) (location.WriteResult, error) {
			return write(tx, r.(R), intent)
		},
		remove: func(tx *Tx, owner location.OwnerToken) (S, error) { return remove(tx, k, owner) },
	}
}

// lsOutcome is the expected outcome of a write in the outcome matrices.
type lsOutcome string

const (
	outcomeClaim    lsOutcome = "claim"    // Stored(6, now), generation 6 written
	outcomeRenew    lsOutcome = "renew"    // Stored(5, now), generation 5 kept
	outcomeStale    lsOutcome = "stale"    // IgnoredStale, nothing planned
	outcomeConflict lsOutcome = "conflict" // RejectedConflict, nothing planned
)

// requireWrite checks a matrix write's result res and the plan tx recorded:
// nothing when stale or in conflict; otherwise stored(g), the row as stored
// under its generation g, written under the table's key, the table's stamps
// and no mesh-node stamp.
func (rt lsRowTable[S]) requireWrite(t *testing.T, tx *Tx, res location.WriteResult, want lsOutcome, now time.Time, stored func(g int64) any) {
	t.Helper()
	var g int64
	switch want {
	case outcomeStale:
		require.Equal(t, lsStale(), res)
		require.True(t, tx.Plan().Empty())
		return
	case outcomeConflict:
		require.Equal(t, lsConflict(), res)
		require.True(t, tx.Plan().Empty())
		return
	case outcomeClaim:
		g = 6
	case outcomeRenew:
		g = 5 // A-01 fixed for owner rows: the stored generation is kept
	}
	require.Equal(t, lsStored(g, now), res)
	require.Equal(t, []Write{{Table: rt.table, Key: rt.key, Value: stored(g), Generation: g}}, tx.Plan().Writes)
	require.Equal(t, rt.stamps, tx.Plan().Stamps)
	require.Empty(t, tx.Plan().MeshNodeStamps)
}

// requireRemove checks the plan of a matrix remove: the row deleted and the
// table's stamps moved when removed, nothing otherwise.
func (rt lsRowTable[S]) requireRemove(t *testing.T, tx *Tx, removed bool) {
	t.Helper()
	if !removed {
		require.True(t, tx.Plan().Empty())
		return
	}
	require.Equal(t, []Write{{Table: rt.table, Key: rt.key}}, tx.Plan().Writes)
	require.Equal(t, rt.stamps, tx.Plan().Stamps)
}

// lsAt returns a deep copy (the type's Clone) of a location row value with
// UpdatedAt = at.
func lsAt(v any, at time.Time) any { return lsWith(v, "UpdatedAt", at) }

// lsStoredRow returns a deep copy of a peer or route value with Generation =
// generation and UpdatedAt = at.
func lsStoredRow(v any, generation int64, at time.Time) any {
	return lsWith(lsAt(v, at), "Generation", generation)
}

// lsRowGeneration returns the Generation field of a peer or route value.
func lsRowGeneration(v any) int64 { return reflect.ValueOf(v).FieldByName("Generation").Int() }

// lsWith returns a deep copy (the type's Clone) of a row value with one
// field set. It panics on a value without that field: a broken test.
func lsWith(v any, field string, value any) any {
	c := reflect.New(reflect.TypeOf(v)).Elem()
	c.Set(reflect.ValueOf(v).MethodByName("Clone").Call(nil)[0])
	c.FieldByName(field).Set(reflect.ValueOf(value))
	return c.Interface()
}
