package leasemap

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

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
			kv := &afterLossKV{KV: f.client.KV, unsent: tc.unsent}
			m := f.newMap(kv, f.client.Lease, Options{Clock: f.clock.Now})
			other := f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})
			var otherKind location.ResultKind
			kv.after = func() { otherKind = tc.meanwhile(f, other, a) }
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
