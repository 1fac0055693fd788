package etcdstore

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// RemoveAllByOwner is batched (E-8): more rows than one transaction may
// carry are removed in several, each guarded by the owner's lease, and the
// count is exact.
func TestRemoveAllByOwnerBatches(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t, func(o *Options) { o.MaxTxnOps = 16 })
	a, b := f.claim(t, "a"), f.claim(t, "b")
	const n = 30
	for i := range n {
		storedIn(t)(f.s.UpdateSpot(ctx, spot(fmt.Sprintf("s%02d", i), a), location.IntentNewClaim))
	}
	storedIn(t)(f.s.UpdatePeer(ctx, peer("n1", "a"), location.IntentNewClaim))
	storedIn(t)(f.s.UpdateSpot(ctx, spot("other", b), location.IntentNewClaim))
	spotStamp, err := f.s.GetChangeStamp(ctx, location.ChangeStampScope{Kind: location.LocationSpot.Scope()})
	require.NoError(t, err)

	f.counts()
	removed, err := f.s.RemoveAllByOwner(ctx, a)
	require.NoError(t, err)
	require.Equal(t, int64(n+1), removed)
	require.Greater(t, f.counts()[txn.CallTxn], 2, "several transactions")

	all, err := f.s.ListSpots(ctx, location.SpotFilter{}, location.PageRequest{})
	require.NoError(t, err)
	require.Equal(t, []string{"other"}, spotIDs(all))
	peers, err := f.s.ListPeers(ctx, location.PeerFilter{})
	require.NoError(t, err)
	require.Empty(t, peers)
	after, err := f.s.GetChangeStamp(ctx, location.ChangeStampScope{Kind: location.LocationSpot.Scope()})
	require.NoError(t, err)
	require.Greater(t, after, spotStamp)
	require.Equal(t, []string{"by-owner/1:b5:spots4:play5:other"}, f.keysUnder(t, "by-owner/"))

	again, err := f.s.RemoveAllByOwner(ctx, a)
	require.NoError(t, err)
	require.Zero(t, again)
}

// A batch that the estimate gets wrong (here: every spot row in its own
// mesh, so every row touches a change stamp of its own) is refused by the
// engine before anything is sent, retried smaller from the cache, and the
// rest of the sweep uses the corrected estimate.
func TestRemoveAllByOwnerResizesBatches(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t, func(o *Options) { o.MaxTxnOps = 16 })
	a := f.claim(t, "a")
	const n = 20
	for i := range n {
		row := spot(fmt.Sprintf("s%02d", i), a)
		row.MeshName = fmt.Sprintf("m%02d", i)
		storedIn(t)(f.s.UpdateSpot(ctx, row, location.IntentNewClaim))
	}
	f.counts()
	removed, err := f.s.RemoveAllByOwner(ctx, a)
	require.NoError(t, err)
	require.Equal(t, int64(n), removed)
	// The rows are in the cache (this store wrote them), so no batch reads.
	// The estimate takes 4 rows (4 reserved + 4 × (2 + a delete fence) =
	// 16 operations), which need 4 + 4 + 4 fences + 5 stamp writes = 17:
	// refused before sending. Scaled by 17/16, batches of 3 rows fit, and
	// of 4 where two rows share a fence: six commits, where batches of the
	// first estimate, had they fitted, would have made five.
	require.Equal(t, map[string]int{txn.CallGet: 1, txn.CallTxn: 6}, f.counts())
	require.Empty(t, f.keysUnder(t, "spots/"))
	require.Empty(t, f.keysUnder(t, "by-owner/"))
}

func TestRemoveAllByOwnerNeedsTheLease(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	a := f.claim(t, "a")
	storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
	stale := location.OwnerToken{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 1}
	removed, err := f.s.RemoveAllByOwner(ctx, stale)
	require.NoError(t, err)
	require.Zero(t, removed)
	require.NoError(t, f.s.ExpireOwnerLease(ctx, "a"))
	removed, err = f.s.RemoveAllByOwner(ctx, a)
	require.NoError(t, err)
	require.Zero(t, removed)
	got, err := f.s.ResolveSpot(ctx, location.SpotKey{MeshName: "play", SpotID: "s1"})
	require.NoError(t, err)
	require.NotNil(t, got, "the row stays")
}

func TestCollectGarbage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	a, b := f.claim(t, "a"), f.claim(t, "b")
	d := meshNode("game", "node-a", a)
	entry := "entry-1"
	d.EntrySpotID = &entry
	storedIn(t)(f.s.UpdateMeshNode(ctx, d, location.IntentNewClaim))
	storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
	storedIn(t)(f.s.UpdateActor(ctx, actor("x1", a), location.IntentNewClaim))
	storedIn(t)(f.s.UpdateSpot(ctx, spot("s2", b), location.IntentNewClaim))
	storedIn(t)(f.s.UpdatePeer(ctx, peer("n9", "ghost"), location.IntentNewClaim))
	require.NoError(t, f.s.ExpireOwnerLease(ctx, "a"))
	meshStamp, ok, err := f.s.GetMeshNodeChangeStamp(ctx, "game")
	require.NoError(t, err)
	require.True(t, ok)

	dry, err := f.s.CollectGarbage(ctx, GCOptions{DryRun: true})
	require.NoError(t, err)
	require.Equal(t, GCReport{DryRun: true, DeadOwners: []string{"a", "ghost"}, Rows: 4}, dry)
	require.Len(t, f.keysUnder(t, "by-owner/"), 5, "a dry run removes nothing")

	rep, err := f.s.CollectGarbage(ctx, GCOptions{})
	require.NoError(t, err)
	require.Equal(t, GCReport{DeadOwners: []string{"a", "ghost"}, Rows: 4}, rep)
	require.Equal(t, []string{"by-owner/1:b5:spots4:play2:s2"}, f.keysUnder(t, "by-owner/"))
	require.Empty(t, f.keysUnder(t, "entryClaims/"), "the entry-spot claim went with its mesh node")
	after, _, err := f.s.GetMeshNodeChangeStamp(ctx, "game")
	require.NoError(t, err)
	require.Greater(t, after, meshStamp)
	got, err := f.s.ResolveSpot(ctx, location.SpotKey{MeshName: "play", SpotID: "s2"})
	require.NoError(t, err)
	require.NotNil(t, got, "a live owner's rows stay")

	again, err := f.s.CollectGarbage(ctx, GCOptions{})
	require.NoError(t, err)
	require.Equal(t, GCReport{}, again)
}

// The collector purges creation terminals past their expiry (E-11) and
// reservation terminals older than the configured age (Q5).
func TestCollectGarbageTerminals(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	a := f.claim(t, "a")
	target := f.creationTarget(t, a)
	actor := actorReservation("actor-1", target)
	key := actor.Key
	r, err := f.s.Reserve(ctx, actor)
	require.NoError(t, err)
	require.Equal(t, location.KindReserved, r.Kind)
	envelope := []byte("env")
	sum := sha256.Sum256(envelope)
	op := location.OperationIdentity{SourceNodeRID: "node-a", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: 1}}
	done, err := f.s.CompleteCreation(ctx, location.CompleteCreationRequest{Key: key, ReservationID: r.ReservationID,
		ExpectedStoreVersion: r.Creating.StoreVersion, Target: target,
		Completion: location.CreationCompletion{Kind: location.TerminalRejected,
			Terminal: location.TerminalPublication{Operation: op, TerminalEnvelope: envelope, TerminalEnvelopeSHA256: sum[:], OperationDeadline: t0().Add(time.Minute)}}})
	require.NoError(t, err)
	require.Equal(t, location.KindRejected, done.Kind)
	require.Len(t, f.keysUnder(t, "operationTerminals/"), 1)
	require.Len(t, f.keysUnder(t, "reservationTerminals/"), 1)

	rep, err := f.s.CollectGarbage(ctx, GCOptions{})
	require.NoError(t, err)
	require.Zero(t, rep.OperationTerminals, "still visible")

	f.clock.Advance(6 * time.Minute) // past deadline + 5 min
	read, err := f.s.ReadCreationTerminal(ctx, op)
	require.NoError(t, err)
	require.Equal(t, location.KindMissing, read.Kind, "invisible after expiry")
	rep, err = f.s.CollectGarbage(ctx, GCOptions{DryRun: true})
	require.NoError(t, err)
	require.Equal(t, int64(1), rep.OperationTerminals)
	rep, err = f.s.CollectGarbage(ctx, GCOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(1), rep.OperationTerminals)
	require.Zero(t, rep.ReservationTerminals)
	require.Empty(t, f.keysUnder(t, "operationTerminals/"))

	f.clock.Advance(DefaultReservationTerminalAge)
	rep, err = f.s.CollectGarbage(ctx, GCOptions{ReservationTerminalAge: -1})
	require.NoError(t, err)
	require.Zero(t, rep.ReservationTerminals, "a negative age keeps them")
	rep, err = f.s.CollectGarbage(ctx, GCOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(1), rep.ReservationTerminals)
	require.Empty(t, f.keysUnder(t, "reservationTerminals/"))
}
