package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestHooks(t *testing.T) {
	t.Run("ExpireOwnerLease ends the lease now and keeps the entry", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.clk.Advance(time.Second)
		f.expire("a")
		require.Equal(t, ownerLease{token: a, expiresAt: lsT0().Add(time.Second)}, f.state().leases["a"])
		g, live := (&source{s: f.s, now: f.clk.Now()}).LiveLease("a")
		require.False(t, live)
		require.Zero(t, g)
		f.noEffect(func() { f.expire("nobody") })
	})
	t.Run("SetOwnerLeaseCounter sets the last issued generation", func(t *testing.T) {
		f := newLSFix(t)
		require.NoError(t, f.s.SetOwnerLeaseCounter(41))
		require.Equal(t, int64(42), f.claim("a").LeaseGeneration)
		err := f.s.SetOwnerLeaseCounter(-1)
		requireInputError(t, err, location.ClassRange)
	})
}
