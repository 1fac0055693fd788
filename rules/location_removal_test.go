package rules

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestRemoveLocationRow checks the stamps of one removed row per table
// (03 §2, §4.2; A-08 fixed: actors bump their mesh counter too), on the
// tables, keys and rows of the outcome-matrix adapters: a removed row moves
// the stamps of a changed row.
func TestRemoveLocationRow(t *testing.T) {
	for _, dt := range lsDescTables() {
		lsRequireRemoval(t, dt.name, dt.table, dt.key, dt.row("a", 1, "same"), dt.stamps, dt.meshStamps)
	}
	for _, rt := range lsLeaseRowTables() {
		lsRequireRemoval(t, rt.name, rt.table, rt.key, rt.row("a", 1), rt.stamps, nil)
	}
	for _, rt := range lsOwnerRowTables() {
		lsRequireRemoval(t, rt.name, rt.table, rt.key, rt.row("a", 1), rt.stamps, nil)
	}
	t.Run("a value of the wrong type is an internal error", func(t *testing.T) {
		src := newLSSource()
		src.put(location.TableSpots, "k", fixture.ACTOR("a", 1), 1)
		tx := NewTx(src)
		err := RemoveLocationRow(tx, location.TableSpots, "k")
		require.True(t, errors.Is(err, location.ErrInternal), "%v", err)
		require.True(t, tx.Plan().Empty())
		_, ok := RowOwnerID(EntryClaim{})
		require.False(t, ok)
	})
}

// lsRequireRemoval removes row, of owner a, stored at (table, key) and
// checks the plan: the delete, the stamps and the mesh-node stamps; and that
// removing an absent key plans nothing.
func lsRequireRemoval(t *testing.T, name string, table Table, key string, row any, stamps []StampCounter, meshStamps []string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		src := newLSSource()
		src.put(table, key, row, 3)
		tx := NewTx(src)
		require.NoError(t, RemoveLocationRow(tx, table, key))
		require.Equal(t, []Write{{Table: table, Key: key}}, tx.Plan().Writes)
		require.Equal(t, stamps, tx.Plan().Stamps)
		require.Equal(t, meshStamps, tx.Plan().MeshNodeStamps)
		owner, ok := RowOwnerID(row)
		require.True(t, ok)
		require.Equal(t, "a", owner)

		again := NewTx(src)
		require.NoError(t, RemoveLocationRow(again, table, "absent"))
		require.True(t, again.Plan().Empty(), "an absent row plans nothing")
	})
}
