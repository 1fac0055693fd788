package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestOwnerLeases(t *testing.T) {
	t0 := lsT0()
	tok := func(owner string, g int64) location.OwnerToken {
		return location.OwnerToken{OwnerID: owner, LeaseGeneration: g}
	}
	t.Run("LS-001 claim issues a lease", func(t *testing.T) {
		f := newLSFix(t)
		res, err := f.s.ClaimOwnerLease(f.ctx, "owner-a", 30*time.Second)
		require.NoError(t, err)
		require.Equal(t, location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: tok("owner-a", 1), LeaseExpiresAt: t0.Add(30 * time.Second), StoreNow: t0}, res)
		require.Equal(t, location.OwnerLeaseReadResult{Kind: location.KindFound, Token: tok("owner-a", 1), LeaseExpiresAt: t0.Add(30 * time.Second), StoreNow: t0}, f.readLease("owner-a"))
	})
	t.Run("LS-002 generations are global and increasing", func(t *testing.T) {
		f := newLSFix(t)
		require.Equal(t, int64(1), f.claim("a").LeaseGeneration)
		require.Equal(t, int64(2), f.claim("b").LeaseGeneration)
		require.Equal(t, int64(3), f.claim("c").LeaseGeneration)
	})
	t.Run("LS-003 re-claiming a live lease conflicts and consumes nothing", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.noEffect(func() {
			res, err := f.s.ClaimOwnerLease(f.ctx, "a", time.Minute)
			require.NoError(t, err)
			require.Equal(t, location.OwnerLeaseClaimResult{Kind: location.KindConflict}, res)
		})
		require.Equal(t, t0.Add(30*time.Second), f.readLease("a").LeaseExpiresAt)
		require.Equal(t, int64(2), f.claim("b").LeaseGeneration)
	})
	t.Run("LS-004 claim after expiry", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.expire("a")
		f.clk.Advance(time.Second)
		res, err := f.s.ClaimOwnerLease(f.ctx, "a", 30*time.Second)
		require.NoError(t, err)
		require.Equal(t, location.OwnerLeaseClaimResult{Kind: location.KindClaimed, Token: tok("a", 3), LeaseExpiresAt: t0.Add(31 * time.Second), StoreNow: t0.Add(time.Second)}, res)
	})
	t.Run("LS-005 claim after release", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		rel, err := f.s.ReleaseOwnerLease(f.ctx, a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, rel)
		require.Equal(t, int64(2), f.claim("a").LeaseGeneration)
	})
	t.Run("LS-006 claim validation", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			owner string
			ttl   time.Duration
			class location.ErrorClass
		}{
			{name: "empty owner", owner: "", ttl: time.Second, class: location.ClassType},
			{name: "blank owner", owner: "   ", ttl: time.Second, class: location.ClassType},
			{name: "ttl 0", owner: "a", ttl: 0, class: location.ClassRange},
			{name: "ttl -5 ms", owner: "a", ttl: -5 * time.Millisecond, class: location.ClassRange},
			{name: "ttl under 1 ms", owner: "a", ttl: 999 * time.Microsecond, class: location.ClassRange},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := newLSFix(t)
				f.noEffect(func() {
					_, err := f.s.ClaimOwnerLease(f.ctx, c.owner, c.ttl)
					requireInputError(t, err, c.class)
				})
				require.Equal(t, int64(1), f.claim("a").LeaseGeneration)
			})
		}
	})
	t.Run("whole milliseconds", func(t *testing.T) {
		f := newLSFix(t)
		res, err := f.s.ClaimOwnerLease(f.ctx, "a", 1500*time.Microsecond)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Millisecond), res.LeaseExpiresAt)
	})
	t.Run("LS-007 generation exhaustion", func(t *testing.T) {
		f := newLSFix(t)
		require.NoError(t, f.s.SetOwnerLeaseCounter(location.MaxGeneration))
		for range 2 {
			f.noEffect(func() {
				res, err := f.s.ClaimOwnerLease(f.ctx, "a", time.Second)
				require.NoError(t, err)
				require.Equal(t, location.OwnerLeaseClaimResult{Kind: location.KindGenerationExhausted}, res)
			})
			require.Equal(t, location.KindMissing, f.readLease("a").Kind)
		}
		require.NoError(t, f.s.SetOwnerLeaseCounter(location.MaxGeneration-1))
		require.Equal(t, location.MaxGeneration, f.claim("a").LeaseGeneration)
		requireInputError(t, f.s.SetOwnerLeaseCounter(-1), location.ClassRange)
	})
	t.Run("LS-008 read of an unknown owner", func(t *testing.T) {
		f := newLSFix(t)
		require.Equal(t, location.OwnerLeaseReadResult{Kind: location.KindMissing}, f.readLease("nobody"))
	})
	t.Run("LS-009 read after expiry", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.expire("a")
		require.Equal(t, location.OwnerLeaseReadResult{Kind: location.KindMissing}, f.readLease("a"))
		require.NotContains(t, f.state().leases, "a", "an expired entry is deleted by a read (A-20)")
		require.Equal(t, int64(2), f.claim("a").LeaseGeneration)
	})
	t.Run("LS-010 read validation", func(t *testing.T) {
		f := newLSFix(t)
		_, err := f.s.ReadOwnerLease(f.ctx, "  ")
		requireInputError(t, err, location.ClassType)
	})
	t.Run("LS-011 renew extends from now", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.clk.Advance(10 * time.Second)
		res, err := f.s.RenewOwnerLease(f.ctx, a, time.Minute)
		require.NoError(t, err)
		require.Equal(t, location.OwnerLeaseRenewResult{Kind: location.KindRenewed, LeaseExpiresAt: t0.Add(70 * time.Second), StoreNow: t0.Add(10 * time.Second)}, res)
		require.Equal(t, location.OwnerLeaseReadResult{Kind: location.KindFound, Token: a, LeaseExpiresAt: t0.Add(70 * time.Second), StoreNow: t0.Add(10 * time.Second)}, f.readLease("a"))
	})
	t.Run("LS-012 renew may shorten", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		res, err := f.s.RenewOwnerLease(f.ctx, a, time.Second)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Second), res.LeaseExpiresAt)
		require.Equal(t, t0.Add(time.Second), f.readLease("a").LeaseExpiresAt)
	})
	t.Run("LS-013 renew with a wrong generation", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.noEffect(func() {
			res, err := f.s.RenewOwnerLease(f.ctx, tok("a", a.LeaseGeneration+1), time.Minute)
			require.NoError(t, err)
			require.Equal(t, location.OwnerLeaseRenewResult{Kind: location.KindStale}, res)
		})
	})
	t.Run("LS-014 renew after expiry", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.expire("a")
		f.noEffect(func() {
			res, err := f.s.RenewOwnerLease(f.ctx, a, 30*time.Second)
			require.NoError(t, err)
			require.Equal(t, location.KindStale, res.Kind)
		})
		require.Equal(t, location.KindMissing, f.readLease("a").Kind)
	})
	t.Run("LS-015 renew of an unknown owner", func(t *testing.T) {
		f := newLSFix(t)
		res, err := f.s.RenewOwnerLease(f.ctx, tok("nobody", 1), 30*time.Second)
		require.NoError(t, err)
		require.Equal(t, location.KindStale, res.Kind)
	})
	t.Run("LS-016 renew validation", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.noEffect(func() {
			_, err := f.s.RenewOwnerLease(f.ctx, tok("  ", 1), 30*time.Second)
			requireInputError(t, err, location.ClassType)
			_, err = f.s.RenewOwnerLease(f.ctx, a, 0)
			requireInputError(t, err, location.ClassRange)
		})
	})
	t.Run("LS-017 release", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		rel, err := f.s.ReleaseOwnerLease(f.ctx, a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, rel)
		require.Equal(t, location.KindMissing, f.readLease("a").Kind)
		res, err := f.s.RenewOwnerLease(f.ctx, a, time.Second)
		require.NoError(t, err)
		require.Equal(t, location.KindStale, res.Kind)
	})
	t.Run("LS-018 release rejections", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		for _, bad := range []location.OwnerToken{tok("a", a.LeaseGeneration+1), tok("nobody", 1)} {
			rel, err := f.s.ReleaseOwnerLease(f.ctx, bad)
			require.NoError(t, err)
			require.Equal(t, location.KindStale, rel)
		}
		require.Equal(t, location.KindFound, f.readLease("a").Kind)
		for _, want := range []location.ResultKind{location.KindReleased, location.KindStale} {
			rel, err := f.s.ReleaseOwnerLease(f.ctx, a)
			require.NoError(t, err)
			require.Equal(t, want, rel)
		}
	})
	t.Run("LS-019 A-20 release of an expired lease", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.expire("a")
		rel, err := f.s.ReleaseOwnerLease(f.ctx, a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, rel, "the expired entry is still present")

		g := newLSFix(t)
		a = g.claim("a")
		g.expire("a")
		require.Equal(t, location.KindMissing, g.readLease("a").Kind)
		rel, err = g.s.ReleaseOwnerLease(g.ctx, a)
		require.NoError(t, err)
		require.Equal(t, location.KindStale, rel, "the read deleted the entry")
	})
	t.Run("LS-020 LS-021 LS-022 release keeps rows, which become claimable", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		require.Equal(t, lsStored(1, t0), f.updateSpot(f.spot("a"), location.IntentNewClaim))
		require.Equal(t, lsStored(1, t0), f.updatePeer(lsPeer("a", 0), location.IntentNewClaim))
		stampsBefore := f.state().stamps
		rel, err := f.s.ReleaseOwnerLease(f.ctx, a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, rel)
		require.NotNil(t, f.resolveSpot(lsSpotKey()))
		require.Len(t, f.peers(location.PeerFilter{}), 1)
		require.Equal(t, stampsBefore, f.state().stamps)

		f.claim("b")
		require.Equal(t, lsStored(2, t0), f.updateSpot(f.spot("b"), location.IntentNewClaim))
		require.Equal(t, lsStored(2, t0), f.updatePeer(lsPeer("b", 0), location.IntentNewClaim))
		require.Equal(t, "b", f.resolveSpot(lsSpotKey()).OwnerID)

		rowsBefore := f.state().tables
		require.Equal(t, int64(3), f.claim("a").LeaseGeneration, "LS-022")
		require.Equal(t, rowsBefore, f.state().tables)
	})
	t.Run("LS-206 concurrent claims of one owner id yield one lease", func(t *testing.T) {
		f := newLSFix(t)
		const n = 16
		results := make(chan location.ResultKind, n)
		for range n {
			go func() {
				res, err := f.s.ClaimOwnerLease(f.ctx, "owner-z", time.Minute)
				if err != nil {
					results <- ""
					return
				}
				results <- res.Kind
			}()
		}
		claimed := 0
		for range n {
			kind := <-results
			require.Contains(t, []location.ResultKind{location.KindClaimed, location.KindConflict}, kind)
			if kind == location.KindClaimed {
				claimed++
			}
		}
		require.Equal(t, 1, claimed)
	})
}
