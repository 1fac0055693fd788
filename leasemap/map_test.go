package leasemap

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

const ttl30s = 30 * time.Second

func (f *fixture) claim(t *testing.T, ownerID string) location.OwnerToken {
	t.Helper()
	res, err := f.m.Claim(t.Context(), ownerID, ttl30s)
	require.NoError(t, err)
	require.Equal(t, location.KindClaimed, res.Kind)
	return res.Token
}

func (f *fixture) read(t *testing.T, ownerID string) location.OwnerLeaseReadResult {
	t.Helper()
	res, err := f.m.Read(t.Context(), ownerID)
	require.NoError(t, err)
	return res
}

func TestClaim(t *testing.T) {
	t.Run("LS-001_claim_issues_a_lease", func(t *testing.T) {
		f := newFixture(t)
		res, err := f.m.Claim(t.Context(), "owner-a", ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindClaimed, res.Kind)
		require.Equal(t, "owner-a", res.Token.OwnerID)
		require.Positive(t, res.Token.LeaseGeneration)
		require.Equal(t, t0().Add(ttl30s), res.LeaseExpiresAt)
		require.Equal(t, t0(), res.StoreNow)

		got := f.read(t, "owner-a")
		require.Equal(t, location.OwnerLeaseReadResult{Kind: location.KindFound, Token: res.Token,
			LeaseExpiresAt: t0().Add(ttl30s), StoreNow: t0()}, got)

		// The generation is the owner key's CreateRevision; the key is on an
		// etcd lease of 30 s and its value is readable JSON.
		kv := f.ownerKV(t, "owner-a").Kvs[0]
		require.Equal(t, res.Token.LeaseGeneration, kv.CreateRevision)
		var rec Record
		require.NoError(t, json.Unmarshal(kv.Value, &rec))
		require.Equal(t, RecordFormat, rec.Format)
		require.Equal(t, "owner-a", rec.OwnerID)
		require.Equal(t, int64(30000), rec.TTLMs)
		require.Equal(t, t0().Add(ttl30s).UnixMilli(), rec.ExpiresAtMs)
		require.Equal(t, leaseIDText(clientv3.LeaseID(kv.Lease)), rec.LeaseID)
		require.Len(t, rec.Nonce, txn.NonceLength)
		ttl := f.leaseTTL(t, kv.Lease)
		require.Equal(t, int64(30), ttl.GrantedTTL)
	})
	t.Run("LS-002_generations_are_global_and_increasing", func(t *testing.T) {
		f := newFixture(t)
		a, b, c := f.claim(t, "a"), f.claim(t, "b"), f.claim(t, "c")
		require.Less(t, a.LeaseGeneration, b.LeaseGeneration)
		require.Less(t, b.LeaseGeneration, c.LeaseGeneration)
	})
	t.Run("LS-003_re_claiming_a_live_lease_conflicts_and_consumes_nothing", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		f.rec.Reset()
		res, err := f.m.Claim(t.Context(), "a", time.Minute)
		require.NoError(t, err)
		require.Equal(t, location.OwnerLeaseClaimResult{Kind: location.KindConflict}, res)
		// The lease granted for the refused claim is revoked at once.
		require.Equal(t, map[string]int{txn.CallGrant: 1, txn.CallTxn: 1, txn.CallRevoke: 1}, f.rec.Counts())
		got := f.read(t, "a")
		require.Equal(t, a, got.Token)
		require.Equal(t, t0().Add(ttl30s), got.LeaseExpiresAt)
		require.Greater(t, f.claim(t, "b").LeaseGeneration, a.LeaseGeneration)
	})
	t.Run("LS-004_claim_after_expiry", func(t *testing.T) {
		f := newFixture(t)
		f.claim(t, "a")
		b := f.claim(t, "b")
		require.NoError(t, f.m.Expire(t.Context(), "a"))
		f.clock.Advance(time.Second)
		res, err := f.m.Claim(t.Context(), "a", ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindClaimed, res.Kind)
		require.Greater(t, res.Token.LeaseGeneration, b.LeaseGeneration)
		require.Equal(t, t0().Add(time.Second+ttl30s), res.LeaseExpiresAt)
	})
	t.Run("LS-005_claim_after_release", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		kind, err := f.m.Release(t.Context(), a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, kind)
		require.Greater(t, f.claim(t, "a").LeaseGeneration, a.LeaseGeneration)
	})
	t.Run("LS-006_claim_validation", func(t *testing.T) {
		tests := []struct {
			name    string
			ownerID string
			ttl     time.Duration
			class   location.ErrorClass
		}{
			{"empty owner", "", ttl30s, location.ClassType},
			{"blank owner", "   ", ttl30s, location.ClassType},
			{"zero ttl", "a", 0, location.ClassRange},
			{"negative ttl", "a", -5 * time.Millisecond, location.ClassRange},
			{"sub-millisecond ttl", "a", 999 * time.Microsecond, location.ClassRange},
		}
		f := newFixture(t)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f.rec.Reset()
				_, err := f.m.Claim(t.Context(), tc.ownerID, tc.ttl)
				require.ErrorIs(t, err, location.ErrInvalidArgument)
				ie, ok := location.AsInputError(err)
				require.True(t, ok)
				require.Equal(t, tc.class, ie.Class)
				require.Zero(t, f.rec.Total(), "nothing is sent")
			})
		}
		require.Empty(t, f.ownerKV(t, "a").Kvs)
	})
	t.Run("canceled context", func(t *testing.T) {
		f := newFixture(t)
		ctx, cancel := contextCanceled(t)
		defer cancel()
		_, err := f.m.Claim(ctx, "a", ttl30s)
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, f.rec.Total())
	})
	t.Run("etcd TTL is ceil(ttl/1s)", func(t *testing.T) {
		f := newFixture(t)
		for _, tc := range []struct {
			ttl  time.Duration
			want int64
		}{{1500 * time.Millisecond, 2}, {time.Millisecond, 1}, {3 * time.Second, 3}} {
			owner := tc.ttl.String()
			res, err := f.m.Claim(t.Context(), owner, tc.ttl)
			require.NoError(t, err)
			require.Equal(t, t0().Add(tc.ttl), res.LeaseExpiresAt, "the reported expiry is exact")
			kv := f.ownerKV(t, owner).Kvs[0]
			ttl := f.leaseTTL(t, kv.Lease)
			require.Equal(t, tc.want, ttl.GrantedTTL, owner)
		}
	})
	t.Run("MinLeaseSeconds raises the etcd TTL only", func(t *testing.T) {
		f := newFixture(t)
		m := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now, MinLeaseSeconds: 60})
		res, err := m.Claim(t.Context(), "a", time.Second)
		require.NoError(t, err)
		require.Equal(t, t0().Add(time.Second), res.LeaseExpiresAt)
		kv := f.ownerKV(t, "a").Kvs[0]
		ttl := f.leaseTTL(t, kv.Lease)
		require.Equal(t, int64(60), ttl.GrantedTTL)
	})
	t.Run("LS-206_concurrent_claims_are_atomic", func(t *testing.T) {
		f := newFixture(t)
		const n = 8
		results := make([]location.OwnerLeaseClaimResult, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				res, err := f.m.Claim(t.Context(), "owner-z", ttl30s)
				require.NoError(t, err)
				results[i] = res
			})
		}
		wg.Wait()
		claimed := 0
		for _, r := range results {
			if r.Kind == location.KindClaimed {
				claimed++
				require.Equal(t, r.Token, f.read(t, "owner-z").Token)
			} else {
				require.Equal(t, location.KindConflict, r.Kind)
			}
		}
		require.Equal(t, 1, claimed)
	})
}

func TestRead(t *testing.T) {
	t.Run("LS-008_read_of_an_unknown_owner", func(t *testing.T) {
		f := newFixture(t)
		require.Equal(t, location.OwnerLeaseReadResult{Kind: location.KindMissing}, f.read(t, "nobody"))
	})
	t.Run("LS-009_read_after_expiry", func(t *testing.T) {
		f := newFixture(t)
		f.claim(t, "a")
		require.NoError(t, f.m.Expire(t.Context(), "a"))
		require.Equal(t, location.KindMissing, f.read(t, "a").Kind)
		f.claim(t, "a")
	})
	t.Run("LS-010_read_validation", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.m.Read(t.Context(), "  ")
		ie, ok := location.AsInputError(err)
		require.True(t, ok)
		require.Equal(t, location.ClassType, ie.Class)
	})
	t.Run("one request", func(t *testing.T) {
		f := newFixture(t)
		f.claim(t, "a")
		f.rec.Reset()
		f.read(t, "a")
		require.Equal(t, map[string]int{txn.CallGet: 1}, f.rec.Counts())
	})
}

func TestRenew(t *testing.T) {
	t.Run("LS-011_renew_extends_from_now", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		f.clock.Advance(10 * time.Second)
		res, err := f.m.Renew(t.Context(), a, time.Minute)
		require.NoError(t, err)
		want := t0().Add(70 * time.Second)
		require.Equal(t, location.OwnerLeaseRenewResult{Kind: location.KindRenewed, LeaseExpiresAt: want,
			StoreNow: t0().Add(10 * time.Second)}, res)
		got := f.read(t, "a")
		require.Equal(t, a, got.Token)
		require.Equal(t, want, got.LeaseExpiresAt)
	})
	t.Run("LS-012_renew_may_shorten", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		before := f.ownerKV(t, "a").Kvs[0]
		res, err := f.m.Renew(t.Context(), a, time.Second)
		require.NoError(t, err)
		require.Equal(t, t0().Add(time.Second), res.LeaseExpiresAt)
		require.Equal(t, t0().Add(time.Second), f.read(t, "a").LeaseExpiresAt)

		// A different TTL moves the key to a new etcd lease of 1 s; the
		// generation is unchanged and the old lease is revoked.
		after := f.ownerKV(t, "a").Kvs[0]
		require.Equal(t, before.CreateRevision, after.CreateRevision)
		require.NotEqual(t, before.Lease, after.Lease)
		ttl := f.leaseTTL(t, after.Lease)
		require.Equal(t, int64(1), ttl.GrantedTTL)
		old := f.leaseTTL(t, before.Lease)
		require.Equal(t, int64(-1), old.TTL, "the old lease is gone")
	})
	t.Run("LS-013_renew_with_a_wrong_generation", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		res, err := f.m.Renew(t.Context(), location.OwnerToken{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 1}, ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.OwnerLeaseRenewResult{Kind: location.KindStale}, res)
		require.Equal(t, a, f.read(t, "a").Token)
	})
	t.Run("LS-014_renew_after_expiry", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		require.NoError(t, f.m.Expire(t.Context(), "a"))
		res, err := f.m.Renew(t.Context(), a, ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindStale, res.Kind)
		require.Equal(t, location.KindMissing, f.read(t, "a").Kind)
	})
	t.Run("renew after expiry with a remembered lease", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		kv := f.ownerKV(t, "a").Kvs[0]
		// Revoke behind the map's back: it still remembers the lease.
		_, err := f.client.Revoke(t.Context(), clientv3.LeaseID(kv.Lease))
		require.NoError(t, err)
		for _, ttl := range []time.Duration{ttl30s, time.Minute} {
			res, err := f.m.Renew(t.Context(), a, ttl)
			require.NoError(t, err)
			require.Equal(t, location.KindStale, res.Kind, ttl)
		}
		require.Empty(t, f.ownerKV(t, "a").Kvs)
	})
	t.Run("LS-015_renew_of_an_unknown_owner", func(t *testing.T) {
		f := newFixture(t)
		res, err := f.m.Renew(t.Context(), location.OwnerToken{OwnerID: "nobody", LeaseGeneration: 1}, ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindStale, res.Kind)
	})
	t.Run("LS-016_renew_validation", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		_, err := f.m.Renew(t.Context(), location.OwnerToken{OwnerID: "  ", LeaseGeneration: 1}, ttl30s)
		ie, ok := location.AsInputError(err)
		require.True(t, ok)
		require.Equal(t, location.ClassType, ie.Class)
		_, err = f.m.Renew(t.Context(), a, 0)
		ie, ok = location.AsInputError(err)
		require.True(t, ok)
		require.Equal(t, location.ClassRange, ie.Class)
		require.Equal(t, t0().Add(ttl30s), f.read(t, "a").LeaseExpiresAt)
	})
	t.Run("steady state is one round trip", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		f.rec.Reset()
		res, err := f.m.Renew(t.Context(), a, ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindRenewed, res.Kind)
		// KeepAliveOnce and the value rewrite go out in parallel.
		require.Equal(t, map[string]int{txn.CallKeepAliveOnce: 1, txn.CallTxn: 1}, f.rec.Counts())
	})
	t.Run("a fresh map reads the key once", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		rec := txn.NewRecorder(f.client.KV)
		m := f.newMap(rec, rec.Lease(f.client.Lease), Options{Clock: f.clock.Now})
		res, err := m.Renew(t.Context(), a, ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindRenewed, res.Kind)
		require.Equal(t, map[string]int{txn.CallGet: 1, txn.CallKeepAliveOnce: 1, txn.CallTxn: 1}, rec.Counts())
	})
	t.Run("a concurrent move to another lease is followed", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		other := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})
		res, err := other.Renew(t.Context(), a, time.Minute)
		require.NoError(t, err)
		require.Equal(t, location.KindRenewed, res.Kind)
		// f.m still remembers the first lease; its renewal finds the key moved
		// and renews on the current lease.
		res, err = f.m.Renew(t.Context(), a, time.Minute)
		require.NoError(t, err)
		require.Equal(t, location.KindRenewed, res.Kind)
		kv := f.ownerKV(t, "a").Kvs[0]
		require.Equal(t, a.LeaseGeneration, kv.CreateRevision)
		ttl := f.leaseTTL(t, kv.Lease)
		require.Equal(t, int64(60), ttl.GrantedTTL)
	})
}

func TestRelease(t *testing.T) {
	t.Run("LS-017_release", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		lease := f.ownerKV(t, "a").Kvs[0].Lease
		kind, err := f.m.Release(t.Context(), a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, kind)
		require.Equal(t, location.KindMissing, f.read(t, "a").Kind)
		res, err := f.m.Renew(t.Context(), a, ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindStale, res.Kind)
		ttl := f.leaseTTL(t, lease)
		require.Equal(t, int64(-1), ttl.TTL, "the etcd lease is revoked")
	})
	t.Run("LS-018_release_rejections", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		for _, tok := range []location.OwnerToken{
			{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 1},
			{OwnerID: "nobody", LeaseGeneration: 1},
			{OwnerID: "a", LeaseGeneration: 0},
		} {
			kind, err := f.m.Release(t.Context(), tok)
			require.NoError(t, err)
			require.Equal(t, location.KindStale, kind, tok)
		}
		require.Equal(t, location.KindFound, f.read(t, "a").Kind)
		kind, err := f.m.Release(t.Context(), a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, kind)
		kind, err = f.m.Release(t.Context(), a)
		require.NoError(t, err)
		require.Equal(t, location.KindStale, kind)
	})
	t.Run("expire hook of an unknown owner", func(t *testing.T) {
		f := newFixture(t)
		require.NoError(t, f.m.Expire(t.Context(), "nobody"))
	})
}

// Lost responses are resolved by re-reading for the write nonce (E-9).
func TestLostResponses(t *testing.T) {
	// Each operation arms the loss of its write's answer with lose, runs,
	// and checks its answer.
	claim := func(t *testing.T, f *fixture, lose func()) {
		lose()
		res, err := f.m.Claim(t.Context(), "a", ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindClaimed, res.Kind)
		require.Equal(t, f.ownerKV(t, "a").Kvs[0].CreateRevision, res.Token.LeaseGeneration)
	}
	renew := func(ttl time.Duration) func(t *testing.T, f *fixture, lose func()) {
		return func(t *testing.T, f *fixture, lose func()) {
			a := f.claim(t, "a")
			f.clock.Advance(time.Second)
			lose()
			res, err := f.m.Renew(t.Context(), a, ttl)
			require.NoError(t, err)
			require.Equal(t, location.KindRenewed, res.Kind)
			got := f.read(t, "a")
			require.Equal(t, a, got.Token)
			require.Equal(t, t0().Add(time.Second+ttl), got.LeaseExpiresAt)
		}
	}
	release := func(t *testing.T, f *fixture, lose func()) {
		a := f.claim(t, "a")
		lose()
		kind, err := f.m.Release(t.Context(), a)
		require.NoError(t, err)
		require.Equal(t, location.KindReleased, kind)
		require.Empty(t, f.ownerKV(t, "a").Kvs)
	}
	for _, tc := range []struct {
		name    string
		applied bool
		op      func(t *testing.T, f *fixture, lose func())
	}{
		{"claim applied", true, claim},
		{"claim not applied", false, claim},
		{"renew applied", true, renew(ttl30s)},
		{"renew not applied", false, renew(ttl30s)},
		{"move applied", true, renew(time.Minute)},
		{"move not applied", false, renew(time.Minute)},
		{"release applied", true, release},
		{"release not applied", false, release},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.op(t, f, func() { f.loseNextResponse(tc.applied) })
		})
	}
	t.Run("claim lost while another holds the lease", func(t *testing.T) {
		f := newFixture(t)
		f.claim(t, "a")
		f.loseNextResponse(true)
		res, err := f.m.Claim(t.Context(), "a", ttl30s)
		require.NoError(t, err)
		require.Equal(t, location.KindConflict, res.Kind)
	})
	t.Run("definite errors are not retried", func(t *testing.T) {
		f := newFixture(t)
		ctx, cancel := contextCanceled(t)
		defer cancel()
		_, err := f.m.Read(ctx, "a")
		require.True(t, errors.Is(err, context.Canceled))
	})
}
