package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
)

// A clone starts with the original's contents and then goes its own way.
func TestClone(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := New(Options{Clock: clock})
	claim := storetest.Claim(t, ctx, s, "a", time.Minute)
	row := location.SpotLocation{MeshName: "play", SpotID: "s1", SpotGeneration: 1, SpotType: "game",
		OwnerNodeRID: "node-1", OwnerNodeGeneration: 1, SpotKind: location.SpotUser,
		OwnerID: "a", LeaseGeneration: claim.LeaseGeneration}
	w, err := s.UpdateSpot(ctx, row, location.IntentNewClaim)
	require.NoError(t, err)
	require.Equal(t, location.Stored, w.Status)

	c := s.Clone(Options{Clock: clock})
	got, err := c.ResolveSpot(ctx, row.Key())
	require.NoError(t, err)
	require.Equal(t, "a", got.OwnerID)

	// Changes to the clone stay in the clone, and its counters continue.
	_, err = c.RemoveSpot(ctx, row.Key(), claim)
	require.NoError(t, err)
	next := storetest.Claim(t, ctx, c, "b", time.Minute)
	require.Equal(t, claim.LeaseGeneration+1, next.LeaseGeneration)
	got, err = s.ResolveSpot(ctx, row.Key())
	require.NoError(t, err)
	require.NotNil(t, got, "the original keeps its row")
	lease, err := s.ReadOwnerLease(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, location.KindMissing, lease.Kind)
}
