package inspect

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/leasemap"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// storeFixture is an etcd store over a fresh prefix of the shared member,
// on a manual clock, and a reader of it whose clock is the same.
type storeFixture struct {
	s     *etcdstore.Store
	clock *clock.Manual
	r     *Reader
}

func newStoreFixture(t *testing.T, opts ...ReaderOption) *storeFixture {
	t.Helper()
	c := etcdtest.Connect(t)
	f := &storeFixture{clock: clock.NewManual(fixture.T0())}
	s, err := etcdstore.New(c, etcdstore.Options{Root: etcdtest.UniquePrefix(t), Clock: f.clock.Now})
	require.NoError(t, err)
	f.s = s
	f.r = NewReader(c, s, opts...)
	f.r.now = f.clock.Now
	return f
}

// claim claims ownerID's owner lease for a minute.
func (f *storeFixture) claim(t *testing.T, ownerID string) location.OwnerToken {
	return storetest.Claim(t, t.Context(), f.s, ownerID, time.Minute)
}

// Owner leases show the expiry ReadOwnerLease reports: the recorded one,
// or, for a lease kept alive by keep-alives (whose key keeps the expiry of
// its last write), the one etcd's remaining TTL gives.
func TestReadOwnerLeases(t *testing.T) {
	f := newStoreFixture(t)
	plain := f.claim(t, "plain")
	kept := f.claim(t, "kept")
	res, k, err := f.s.KeepOwnerLease(t.Context(), kept, time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)
	defer k.Close()
	// Keep-alives do not rewrite the key: its recorded expiry goes stale.
	f.clock.Advance(10 * time.Minute)
	res, err = k.Renew(t.Context())
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)

	snap, err := f.r.Read(t.Context(), SectionOwnerLeases)
	require.NoError(t, err)
	require.Len(t, snap.OwnerLeases, 2)
	byOwner := map[string]OwnerLease{}
	for _, l := range snap.OwnerLeases {
		byOwner[l.OwnerID] = l
	}
	p, kl := byOwner["plain"], byOwner["kept"]
	require.Equal(t, plain.LeaseGeneration, p.Generation)
	require.False(t, p.KeptAlive)
	require.Equal(t, fixture.T0().Add(time.Minute), p.ExpiresAt, "the recorded expiry")
	require.Equal(t, kept.LeaseGeneration, kl.Generation)
	require.True(t, kl.KeptAlive)
	require.InDelta(t, 60, kl.RemainingSeconds, 2)
	require.Equal(t, leasemap.KeptExpiry(f.clock.Now(), kl.RemainingSeconds), kl.ExpiresAt, "derived from etcd's remaining TTL")
	read, err := f.s.ReadOwnerLease(t.Context(), "kept")
	require.NoError(t, err)
	require.WithinDuration(t, read.LeaseExpiresAt, kl.ExpiresAt, time.Second, "as ReadOwnerLease reports it")

	// A serializable reader does not ask the leader for TTLs: the expiry of
	// a kept lease is unknown, a recorded one is shown.
	ser := NewReader(etcdtest.Connect(t), f.s, Serializable())
	snap, err = ser.Read(t.Context(), SectionOwnerLeases)
	require.NoError(t, err)
	for _, l := range snap.OwnerLeases {
		require.True(t, l.RemainingUnknown)
		require.Equal(t, l.KeptAlive, l.ExpiresAt.IsZero(), l.OwnerID)
	}
}

// Rows are decoded with the store's decoder; Other counts the bookkeeping
// tables of the registry, then the stamps and the owner index; Holdings
// reads the owner index.
func TestReadRowsAndBookkeeping(t *testing.T) {
	f := newStoreFixture(t)
	a := f.claim(t, "a")
	row := location.SpotLocation{MeshName: "play", SpotID: "s1", SpotGeneration: 1, SpotType: "game",
		OwnerNodeRID: "node-1", OwnerNodeGeneration: 1, SpotKind: location.SpotUser, OwnerID: a.OwnerID, LeaseGeneration: a.LeaseGeneration}
	w, err := f.s.UpdateSpot(t.Context(), row, location.IntentNewClaim)
	require.NoError(t, err)
	require.Equal(t, location.Stored, w.Status)
	row.UpdatedAt = fixture.T0()

	snap, err := f.r.Read(t.Context(), SectionSpots, SectionOther)
	require.NoError(t, err)
	require.Len(t, snap.Spots, 1)
	got := snap.Spots[0]
	require.Equal(t, w.Generation, got.Generation)
	require.True(t, got.OwnerLive)
	require.Positive(t, got.ModRevision)
	require.Equal(t, row, got.Value)

	var parts []string
	for _, spec := range rules.Tables() {
		if !spec.Location() && !spec.Owned() {
			parts = append(parts, string(spec.Name()))
		}
	}
	require.Len(t, parts, 8)
	parts = append(parts, "stamp", "meshnode-stamp", "by-owner")
	var counted []string
	counts := map[string]int64{}
	for _, c := range snap.Other {
		counted = append(counted, c.Part)
		counts[c.Part] = c.Keys
	}
	require.Equal(t, parts, counted)
	require.Equal(t, int64(1), counts["by-owner"])
	require.Equal(t, int64(2), counts["stamp"], "(Spot, play) and the kind's global stamp")

	holdings, err := f.r.Holdings(t.Context())
	require.NoError(t, err)
	require.Equal(t, []Holdings{{OwnerID: "a", Live: true, Tables: map[string]int{string(location.TableSpots): 1}, Total: 1}}, holdings)
}
