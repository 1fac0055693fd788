package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// TestHooks checks the test hooks memstore gives the conformance harness:
// what they change, how they validate, and that they honour a context.
func TestHooks(t *testing.T) {
	t.Run("ExpireOwnerLease ends the lease now and keeps the entry", func(t *testing.T) {
		f := newMemFix(t)
		a := f.claim("a")
		f.clk.Advance(time.Second)
		f.expire("a")
		require.Equal(t, ownerLease{token: a, expiresAt: fixture.T0().Add(time.Second)}, f.state().leases["a"])
		g, live := (&source{s: f.s, now: f.clk.Now()}).LiveLease("a")
		require.False(t, live)
		require.Zero(t, g)
		f.noEffect(func() { f.expire("nobody") })
	})
	t.Run("ExpireOwnerLease checks its context first", func(t *testing.T) {
		f := newMemFix(t)
		f.claim("a")
		ctx, cancel := context.WithCancel(f.ctx)
		cancel()
		f.noEffect(func() { require.ErrorIs(t, f.s.ExpireOwnerLease(ctx, "a"), context.Canceled) })
	})
	t.Run("SetOwnerLeaseCounter sets the last issued generation", func(t *testing.T) {
		f := newMemFix(t)
		require.NoError(t, f.s.SetOwnerLeaseCounter(41))
		require.Equal(t, int64(42), f.claim("a").LeaseGeneration)
		requireInputError(t, f.s.SetOwnerLeaseCounter(-1), location.ClassRange)
	})
	t.Run("SetAuthorityCounters sets the last issued values", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		ptr := func(v int64) *int64 { return &v }
		require.NoError(t, f.s.SetAuthorityCounters(ptr(41), ptr(7), nil))
		reserve := func(id string) location.ReserveResult {
			return f.reserved(f.s.Reserve(f.ctx, fixture.SpotRequest(location.ObjectUserSpot, id, fixture.Target(na), "room")))
		}
		r := reserve("c1")
		require.Equal(t, location.StoreVersion("42"), r.Creating.StoreVersion)
		require.Equal(t, int64(8), r.Creating.ObjectGeneration)
		require.Equal(t, int64(1), r.Creating.AuthorityOwnerGeneration, "a nil counter is left alone")
		require.NoError(t, f.s.SetAuthorityCounters(nil, nil, ptr(100)))
		require.Equal(t, int64(101), reserve("c2").Creating.AuthorityOwnerGeneration)
		f.noEffect(func() {
			neg := int64(-1)
			requireInputError(t, f.s.SetAuthorityCounters(nil, &neg, nil), location.ClassRange)
		})
	})
}
