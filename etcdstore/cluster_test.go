package etcdstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// The store keeps its answers exact across a leader failure of a
// three-member cluster: every write either answers (and happened exactly
// once) or fails with an error that says whether it was applied.
func TestClusterLeaderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-member cluster")
	}
	ctx := t.Context()
	cl, err := etcdtest.StartCluster(ctx, 3, etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	client, err := cl.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	s, err := New(client, Options{Root: "/zlink/v1/", Clock: clock.NewManual(t0()).Now, MinLeaseSeconds: 600})
	require.NoError(t, err)
	claim, err := s.ClaimOwnerLease(ctx, "a", time.Minute)
	require.NoError(t, err)
	a := claim.Token

	const n = 40
	unknown := map[string]bool{}
	for i := range n {
		if i == n/2 {
			leader := cl.Leader()
			require.GreaterOrEqual(t, leader, 0)
			require.NoError(t, cl.Members[leader].Close())
		}
		id := fmt.Sprintf("s%02d", i)
		deadline := time.Now().Add(30 * time.Second)
		for {
			res, err := s.UpdateSpot(ctx, spot(id, a), location.IntentNewClaim)
			if err == nil {
				if unknown[id] && res.Status == location.RejectedConflict {
					break // the earlier attempt whose outcome was unknown had applied
				}
				require.Equal(t, location.Stored, res.Status, id)
				break
			}
			require.True(t, errors.Is(err, location.ErrUnavailable) || errors.Is(err, txn.ErrOutcomeUnknown), "%s: %v", id, err)
			if errors.Is(err, txn.ErrOutcomeUnknown) {
				unknown[id] = true
			}
			require.True(t, time.Now().Before(deadline), "%s: the cluster did not recover: %v", id, err)
		}
	}
	all, err := s.ListSpots(ctx, location.SpotFilter{}, location.PageRequest{})
	require.NoError(t, err)
	require.Len(t, all.Items, n)
	stamp, err := s.GetChangeStamp(ctx, location.ChangeStampScope{Kind: location.LocationSpot.Scope()})
	require.NoError(t, err)
	require.Equal(t, int64(n), stamp, "every row was written by exactly one transaction")
}
