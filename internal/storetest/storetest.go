// Package storetest holds the test helpers that the tests of several
// packages need over a location store, so that each is written once.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Claim claims ownerID's owner lease on s for ttl, requires that it was
// granted, and returns its token.
func Claim(t testing.TB, ctx context.Context, s location.OwnerLeaseStore, ownerID string, ttl time.Duration) location.OwnerToken {
	t.Helper()
	res, err := s.ClaimOwnerLease(ctx, ownerID, ttl)
	require.NoError(t, err)
	require.Equal(t, location.KindClaimed, res.Kind, "claim of %q", ownerID)
	return res.Token
}
