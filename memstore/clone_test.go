package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// A clone starts with the original's contents and then goes its own way.
func TestClone(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := New(Options{Clock: clock})
	claim, err := s.ClaimOwnerLease(ctx, "a", time.Minute)
	require.NoError(t, err)
	row := location.SpotLocation{MeshName: "play", SpotID: "s1", SpotGeneration: 1, SpotType: "game",
		OwnerNodeRID: "node-1", OwnerNodeGeneration: 1, SpotKind: location.SpotUser,
		OwnerID: "a", LeaseGeneration: claim.Token.LeaseGeneration}
	w, err := s.UpdateSpot(ctx, row, location.IntentNewClaim)
	require.NoError(t, err)
	require.Equal(t, location.Stored, w.Status)

	c := s.Clone(Options{Clock: clock})
	got, err := c.ResolveSpot(ctx, row.Key())
	require.NoError(t, err)
	require.Equal(t, "a", got.OwnerID)

	// Changes to the clone stay in the clone, and its counters continue.
	_, err = c.RemoveSpot(ctx, row.Key(), claim.Token)
	require.NoError(t, err)
	next, err := c.ClaimOwnerLease(ctx, "b", time.Minute)
	require.NoError(t, err)
	require.Equal(t, claim.Token.LeaseGeneration+1, next.Token.LeaseGeneration)
	got, err = s.ResolveSpot(ctx, row.Key())
	require.NoError(t, err)
	require.NotNil(t, got, "the original keeps its row")
	lease, err := s.ReadOwnerLease(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, location.KindMissing, lease.Kind)
}
