package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// lsClaimKey is the entry-claim key of an entry spot id.
func lsClaimKey(t *testing.T, id string) location.AuthorityKey {
	t.Helper()
	key, err := EntryClaimKey(id)
	require.NoError(t, err)
	return key
}

// lsWriteMN runs UpdateMeshNode and applies it.
func lsWriteMN(t *testing.T, src *lsSource, d location.MeshNodeDescriptor, intent location.WriteIntent) location.WriteResult {
	t.Helper()
	res, _ := lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateMeshNode(tx, d, intent) })
	return res
}

// lsEntryClaimedByA returns a source where owner a, on its live lease 1,
// has created mesh node node-a (fixture.MNE), which holds the claim of
// entry spot entry-1.
func lsEntryClaimedByA(t *testing.T) *lsSource {
	t.Helper()
	src := newLSSource()
	src.lease("a", 1, true)
	require.Equal(t, lsStored(1, fixture.T0()), lsWriteMN(t, src, fixture.MNE(fixture.Token("a", 1)), location.IntentNewClaim))
	return src
}

// lsWithRID returns d on another rid.
func lsWithRID(d location.MeshNodeDescriptor, rid location.RoutingID) location.MeshNodeDescriptor {
	d.RID = rid
	return d
}

func TestEntryClaimKey(t *testing.T) {
	key, err := EntryClaimKey("entry-1")
	require.NoError(t, err)
	want, err := location.EncodeAuthorityKey(location.ObjectUserSpot, "entry-1")
	require.NoError(t, err)
	require.Equal(t, want, key)
}

// TestEntryClaims checks the entry-spot claim records behind the catalogue's
// LS-060 … LS-068 (run through a store in conformance): which claim each
// decision holds, writes or releases in its plan.
func TestEntryClaims(t *testing.T) {
	nodeB := location.RoutingID("node-b")
	t.Run("a conflicting claim plans nothing and the holder keeps its claim record", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("b", 2, true)
		other := lsWithRID(fixture.MNE(fixture.Token("b", 2)), nodeB)
		other.LifecycleGeneration, other.Endpoint = 8, "tcp://10.0.0.2:7300"
		tx := NewTx(src)
		res, err := UpdateMeshNode(tx, other, location.IntentNewClaim)
		require.NoError(t, err)
		require.Equal(t, lsConflict(), res)
		require.True(t, tx.Plan().Empty())
		claim, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.True(t, held)
		require.Equal(t, EntryClaim{Descriptor: location.MeshNodeKey{MeshName: "game", RID: "node-a"}, OwnerID: "a", LeaseGeneration: 1, LifecycleGeneration: 7}, claim)
	})
	t.Run("RemoveMeshNode plans the release of its claim", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("b", 2, true)
		st, plan := lsRun(t, src, func(tx *Tx) (location.WriteStatus, error) {
			return RemoveMeshNode(tx, location.MeshNodeKey{MeshName: "game", RID: "node-a"}, location.OwnerToken{OwnerID: "a", LeaseGeneration: 1})
		})
		require.Equal(t, location.Stored, st)
		require.Contains(t, plan.Writes, Write{Table: TableEntryClaims, Key: string(lsClaimKey(t, "entry-1"))})
		_, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.False(t, held)
		require.Equal(t, lsStored(1, fixture.T0()), lsWriteMN(t, src, lsWithRID(fixture.MNE(fixture.Token("b", 2)), nodeB), location.IntentNewClaim))
	})
	t.Run("A-03 fixed: a dead holder's claim on the same key is not held and is re-bound", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("a", 1, false)
		src.lease("b", 2, true)
		_, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.False(t, held, "the holder's exact lease is not live")
		require.Equal(t, lsStored(2, fixture.T0()), lsWriteMN(t, src, fixture.MNE(fixture.Token("b", 2)), location.IntentNewClaim))
		claim, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.True(t, held)
		require.Equal(t, "b", claim.OwnerID)
		require.Equal(t, int64(2), claim.LeaseGeneration)
	})
	t.Run("A-03 fixed: a dead owner's claim on another key is free", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("a", 1, false)
		src.lease("b", 2, true)
		require.Equal(t, lsStored(1, fixture.T0()), lsWriteMN(t, src, lsWithRID(fixture.MNE(fixture.Token("b", 2)), nodeB), location.IntentNewClaim))
		claim, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.True(t, held)
		require.Equal(t, nodeB, claim.Descriptor.RID)
	})
	t.Run("A-03 fixed: a claim of an older incarnation of a live owner is free", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("a", 3, true) // a restarted; its old claim is not held
		_, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.False(t, held)
	})
	t.Run("a new owner without an entry spot plans the release of the old claim", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("a", 1, false)
		src.lease("b", 2, true)
		src.lease("c", 3, true)
		res, plan := lsRun(t, src, func(tx *Tx) (location.WriteResult, error) {
			return UpdateMeshNode(tx, fixture.MN(fixture.Token("b", 2)), location.IntentNewClaim)
		})
		require.Equal(t, lsStored(2, fixture.T0()), res)
		require.Contains(t, plan.Writes, Write{Table: TableEntryClaims, Key: string(lsClaimKey(t, "entry-1"))}, "the old claim matched the old row")
		require.Equal(t, lsStored(1, fixture.T0()), lsWriteMN(t, src, lsWithRID(fixture.MNE(fixture.Token("c", 3)), "node-c"), location.IntentNewClaim))
	})
	t.Run("a restarted owner's claim is re-bound to its new lease", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("a", 2, true)
		src.lease("b", 3, true)
		require.Equal(t, lsStored(2, fixture.T0()), lsWriteMN(t, src, fixture.MNE(fixture.Token("a", 2)), location.IntentNewClaim))
		claim, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.True(t, held)
		require.Equal(t, int64(2), claim.LeaseGeneration, "re-bound to the new lease")
		require.Equal(t, lsConflict(), lsWriteMN(t, src, lsWithRID(fixture.MNE(fixture.Token("b", 3)), nodeB), location.IntentNewClaim))
	})
	t.Run("A-02 fixed: a same-owner Takeover plans no claim write", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("b", 2, true)
		res, plan := lsRun(t, src, func(tx *Tx) (location.WriteResult, error) {
			return UpdateMeshNode(tx, fixture.MNE(fixture.Token("a", 1)), location.IntentTakeover)
		})
		require.Equal(t, lsStored(2, fixture.T0()), res)
		for _, w := range plan.Writes {
			require.NotEqual(t, TableEntryClaims, w.Table, "the claim is neither rewritten nor released")
		}
		_, held := EntryClaimHeld(NewTx(src), lsClaimKey(t, "entry-1"))
		require.True(t, held)
		require.Equal(t, lsConflict(), lsWriteMN(t, src, lsWithRID(fixture.MNE(fixture.Token("b", 2)), nodeB), location.IntentNewClaim))
	})
	t.Run("takeover by a live other owner with the same entry spot conflicts", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("b", 2, true)
		tx := NewTx(src)
		res, err := UpdateMeshNode(tx, fixture.MNE(fixture.Token("b", 2)), location.IntentTakeover)
		require.NoError(t, err)
		require.Equal(t, lsConflict(), res)
		require.True(t, tx.Plan().Empty())
	})
	t.Run("RemoveLocationRow releases the claim", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		src.lease("b", 2, true)
		lsRun(t, src, func(tx *Tx) (struct{}, error) {
			return struct{}{}, RemoveLocationRow(tx, location.TableMeshNodes, MeshNodeKey(location.MeshNodeKey{MeshName: "game", RID: "node-a"}))
		})
		require.Equal(t, lsStored(1, fixture.T0()), lsWriteMN(t, src, lsWithRID(fixture.MNE(fixture.Token("b", 2)), nodeB), location.IntentNewClaim))
	})
	t.Run("release keeps a claim that no longer matches the row", func(t *testing.T) {
		src := lsEntryClaimedByA(t)
		key := lsClaimKey(t, "entry-1")
		src.put(TableEntryClaims, string(key), EntryClaim{Descriptor: location.MeshNodeKey{MeshName: "game", RID: "node-z"}, OwnerID: "z", LeaseGeneration: 9, LifecycleGeneration: 7}, 0)
		_, plan := lsRun(t, src, func(tx *Tx) (location.WriteStatus, error) {
			return RemoveMeshNode(tx, location.MeshNodeKey{MeshName: "game", RID: "node-a"}, location.OwnerToken{OwnerID: "a", LeaseGeneration: 1})
		})
		require.NotContains(t, plan.Writes, Write{Table: TableEntryClaims, Key: string(key)})
	})
}
