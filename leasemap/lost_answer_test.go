package leasemap

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// A claim whose response was lost applied, but before it could look, its
// lease was released and another claim took the owner id: the key it finds
// holds someone else's value. That is no proof of a conflict (the claim did
// take effect): the key's history since the claim's lease was granted
// shows its put, and the claim answers with the generation it created
// (released since); when that history is gone, the outcome is unknown.
// Never "conflict".
func TestClaimLostThenClaimedAgain(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "found in the history", true: "history compacted"}[compact], func(t *testing.T) {
			f := newFixture(t)
			kv := &kvfake.LostAnswers{KV: f.client.KV}
			m := f.newMap(kv, f.client.Lease, Options{Clock: f.clock.Now})
			other := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})
			var lostGeneration int64
			kv.LoseOne(true, func() {
				got := f.ownerKV(t, "a")
				require.Len(t, got.Kvs, 1, "the lost claim applied")
				lostGeneration = got.Kvs[0].CreateRevision
				kind, err := other.Release(context.Background(), location.OwnerToken{OwnerID: "a", LeaseGeneration: lostGeneration})
				require.NoError(t, err)
				require.Equal(t, location.KindReleased, kind)
				res, err := other.Claim(context.Background(), "a", time.Minute)
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind)
				if compact {
					_, err := f.client.Compact(context.Background(), res.Token.LeaseGeneration)
					require.NoError(t, err)
				}
			})
			res, err := m.Claim(t.Context(), "a", time.Minute)
			if compact {
				require.ErrorIs(t, err, txn.ErrOutcomeUnknown, "got %+v", res)
				require.NotErrorIs(t, err, location.ErrUnavailable)
			} else {
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind)
				require.Equal(t, lostGeneration, res.Token.LeaseGeneration)
			}
			require.Len(t, f.ownerKV(t, "a").Kvs, 1, "the other claim's key is untouched")
		})
	}
}

// A claim whose answer was lost and whose resolution failed leaves a lease
// nobody can name (issue 12): every later claim of the owner id conflicted
// with it until it expired, and the caller never learnt that it was its
// own. The map remembers such a claim, and Settle settles it by reading
// the owner key: applied (the key carries the claim's nonce), the lease is
// answered as claimed, with the generation it created, and renewed; not
// applied, its etcd lease is revoked and the caller claims anew. A
// settlement that cannot read keeps the claim for the next one. Claim
// itself answers as before (a conflict with the applied claim's lease).
func TestSettleAClaimWhoseOutcomeIsUnknown(t *testing.T) {
	tests := []struct {
		name string
		// unsent: the lost claim did not reach etcd.
		unsent bool
		// refusedOnce: the first settlement cannot read either.
		refusedOnce bool
		// taken: another map claims the owner id (absent: the lost claim
		// did not apply) before the settlement.
		taken bool
	}{
		{name: "applied: held, answered as claimed"},
		{name: "not applied: not held, its lease revoked", unsent: true},
		{name: "applied, the first settlement refused: kept for the next", refusedOnce: true},
		{name: "not applied, the owner id taken meanwhile: not held, the other untouched", unsent: true, taken: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			kv := newRefusingKV(f.client.KV, kvfake.ErrRefused)
			rec := txn.NewRecorder(kv)
			m := f.newMap(rec, rec.Lease(f.client.Lease), Options{Clock: f.clock.Now})
			kv.LoseOne(!tc.unsent, nil)
			kv.reads.Set(true, 0)
			_, err := m.Claim(t.Context(), "a", ttl30s)
			require.ErrorIs(t, err, txn.ErrOutcomeUnknown)
			got := f.ownerKV(t, "a")
			var lost struct {
				generation int64
				lease      clientv3.LeaseID
			}
			if tc.unsent {
				require.Empty(t, got.Kvs, "the lost claim did not apply")
			} else {
				require.Len(t, got.Kvs, 1, "the lost claim applied")
				lost.generation, lost.lease = got.Kvs[0].CreateRevision, clientv3.LeaseID(got.Kvs[0].Lease)
			}
			if tc.refusedOnce {
				_, held, err := m.Settle(t.Context(), "a", ttl30s)
				require.ErrorIs(t, err, location.ErrUnavailable, "nothing written")
				require.ErrorContains(t, err, "settle a claim whose outcome is unknown")
				require.False(t, held)
			}
			kv.reads.Set(false, 0)
			var other location.OwnerToken
			if tc.taken {
				o := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})
				res, err := o.Claim(t.Context(), "a", ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind)
				other = res.Token
			}
			rec.Reset()

			if !tc.unsent {
				res, err := m.Claim(t.Context(), "a", ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindConflict, res.Kind, "Claim does not settle")
				rec.Reset()
			}
			res, held, err := m.Settle(t.Context(), "a", ttl30s)
			require.NoError(t, err)
			require.Equal(t, !tc.unsent, held)
			switch {
			case tc.taken:
				require.Zero(t, res)
				require.Equal(t, 1, rec.Counts()[txn.CallRevoke], "the lost claim's lease is revoked")
				require.Equal(t, other, f.read(t, "a").Token, "the other claim is untouched")
			case tc.unsent:
				require.Zero(t, res)
				require.Equal(t, 1, rec.Counts()[txn.CallRevoke], "the lost claim's lease is revoked")
				require.Zero(t, rec.Counts()[txn.CallGrant])
				require.Equal(t, location.KindMissing, f.read(t, "a").Kind)
				res, err := m.Claim(t.Context(), "a", ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindClaimed, res.Kind, "claimed anew")
				require.Equal(t, res.Token, f.read(t, "a").Token)
			default:
				require.Equal(t, location.KindClaimed, res.Kind)
				require.Equal(t, location.OwnerToken{OwnerID: "a", LeaseGeneration: lost.generation}, res.Token,
					"the lost claim's lease, with the generation it created")
				require.Equal(t, f.clock.Now().Add(ttl30s), res.LeaseExpiresAt, "renewed")
				require.Equal(t, f.clock.Now(), res.StoreNow)
				require.Zero(t, rec.Counts()[txn.CallGrant], "no new lease")
				require.Zero(t, rec.Counts()[txn.CallRevoke])
				got := f.ownerKV(t, "a")
				require.Len(t, got.Kvs, 1)
				require.Equal(t, lost.lease, clientv3.LeaseID(got.Kvs[0].Lease))
				require.Greater(t, got.Kvs[0].ModRevision, lost.generation, "the renewal rewrote the key")
				renewed, err := m.Renew(t.Context(), res.Token, ttl30s)
				require.NoError(t, err)
				require.Equal(t, location.KindRenewed, renewed.Kind, "the token is live")
			}
			again, held, err := m.Settle(t.Context(), "a", ttl30s)
			require.NoError(t, err)
			require.False(t, held, "settled: nothing pending")
			require.Zero(t, again)
			claim, err := m.Claim(t.Context(), "a", ttl30s)
			require.NoError(t, err)
			require.Equal(t, location.KindConflict, claim.Kind, "a later claim conflicts as usual")
		})
	}
}

// A release whose response was lost answers by whose delete ended the
// generation (its release marker), never by the owner key's absence alone:
// of two releases of one lease, exactly one answers released.
func TestReleaseLostResponse(t *testing.T) {
	tests := []struct {
		name string
		// unsent: the release's transaction never reached the server.
		unsent bool
		// meanwhile runs after the transaction was sent (or lost) and before
		// the release looks; it returns what another caller's call answered.
		meanwhile func(f *fixture, other *Map, a location.OwnerToken) location.ResultKind
		want      location.ResultKind
		wantOther location.ResultKind
		// expired: no release ended the lease, so there is no marker.
		expired bool
	}{
		{name: "applied, then another release of the lease", meanwhile: releaseBy, want: location.KindReleased, wantOther: location.KindStale},
		{name: "not applied, another release won", unsent: true, meanwhile: releaseBy, want: location.KindStale, wantOther: location.KindReleased},
		{name: "not applied, the lease expired meanwhile (A-20)", unsent: true, want: location.KindReleased, expired: true,
			meanwhile: func(f *fixture, other *Map, a location.OwnerToken) location.ResultKind {
				require.NoError(t, other.Expire(context.Background(), a.OwnerID))
				return ""
			}},
		{name: "not applied, nothing else: tried again", unsent: true, want: location.KindReleased,
			meanwhile: func(*fixture, *Map, location.OwnerToken) location.ResultKind { return "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			a := f.claim(t, "a")
			kv := &kvfake.LostAnswers{KV: f.client.KV}
			m := f.newMap(kv, f.client.Lease, Options{Clock: f.clock.Now})
			other := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})
			var otherKind location.ResultKind
			kv.LoseOne(!tc.unsent, func() { otherKind = tc.meanwhile(f, other, a) })
			kind, err := m.Release(t.Context(), a)
			require.NoError(t, err)
			require.Equal(t, tc.want, kind)
			require.Equal(t, tc.wantOther, otherKind)
			require.Empty(t, f.ownerKV(t, "a").Kvs)
			marker, err := f.client.Get(t.Context(), f.layout.ReleaseMarkerKey("a", a.LeaseGeneration))
			require.NoError(t, err)
			require.Equal(t, !tc.expired, len(marker.Kvs) == 1, "the marker of the release that ended the lease stays until its own lease expires")
			if len(marker.Kvs) == 1 {
				require.NotZero(t, marker.Kvs[0].Lease)
			}
		})
	}
}

// releaseBy releases a's lease through other.
func releaseBy(_ *fixture, other *Map, a location.OwnerToken) location.ResultKind {
	kind, err := other.Release(context.Background(), a)
	if err != nil {
		return location.ResultKind("error: " + err.Error())
	}
	return kind
}

// A write whose response was lost and whose resolution failed answers
// "outcome unknown" naming both causes: the lost response and the error
// that stopped the resolution (not the lost response twice).
func TestResolutionErrorIsReported(t *testing.T) {
	refused := status.Error(codes.PermissionDenied, "etcdserver: permission denied (resolution refused)")
	tests := []struct {
		name string
		call func(t *testing.T, f *fixture, m *Map) error
	}{
		{"claim", func(t *testing.T, _ *fixture, m *Map) error {
			_, err := m.Claim(t.Context(), "a", time.Minute)
			return err
		}},
		{"release", func(t *testing.T, f *fixture, m *Map) error {
			a := f.claim(t, "a")
			_, err := m.Release(t.Context(), a)
			return err
		}},
		{"renew", func(t *testing.T, f *fixture, m *Map) error {
			a := f.claim(t, "a")
			_, err := m.Renew(t.Context(), a, ttl30s)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			kv := newRefusingKV(f.client.KV, refused)
			kv.LoseOne(true, func() { kv.reads.Set(true, 0) })
			m := f.newMap(kv, f.client.Lease, Options{Clock: f.clock.Now})
			err := tc.call(t, f, m)
			require.ErrorIs(t, err, txn.ErrOutcomeUnknown)
			require.NotErrorIs(t, err, location.ErrUnavailable, "the write may have applied")
			require.ErrorIs(t, err, refused, "the resolution's own error is reported: %v", err)
			require.ErrorContains(t, err, "request timed out", "and the lost response")
		})
	}
}
