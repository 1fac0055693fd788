package scratch

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

func TestNew(t *testing.T) {
	tests := []struct {
		name, base, purpose string
		wantPrefix          string
		wantErr             string
	}{
		{name: "ok", base: "/zlink/v1/", purpose: "check", wantPrefix: "/zlink/v1/zlinketcd-check-"},
		{name: "base without slash", base: "/zlink/v1", purpose: "check", wantErr: "must end with '/'"},
		{name: "bad purpose", base: "/z/", purpose: "Check!", wantErr: "lower-case letters"},
		{name: "empty purpose", base: "/z/", purpose: "", wantErr: "empty purpose"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.base, tc.purpose)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(p, tc.wantPrefix), p)
			require.Len(t, p, len(tc.wantPrefix)+9)
			require.True(t, strings.HasSuffix(p, "/"))
			other, err := New(tc.base, tc.purpose)
			require.NoError(t, err)
			require.NotEqual(t, p, other)
			base, purpose, ok := Parse(p)
			require.True(t, ok)
			require.Equal(t, tc.base, base)
			require.Equal(t, tc.purpose, purpose)
		})
	}
	require.Equal(t, "/a/s7/", Sub("/a/", 7))
}

func TestParse(t *testing.T) {
	tests := []struct {
		prefix, base, purpose string
		ok                    bool
	}{
		{prefix: "/zlink/v1/zlinketcd-check-0a1b2c3d/", base: "/zlink/v1/", purpose: "check", ok: true},
		{prefix: "/zlink/v1/zlinketcd-two-words-0a1b2c3d/", base: "/zlink/v1/", purpose: "two-words", ok: true},
		{prefix: "zlinketcd-demo-0a1b2c3d/", ok: false},
		{prefix: "/zlink/v1/zlinketcd-check-0a1b2c3/"},
		{prefix: "/zlink/v1/zlinketcd-check-0A1B2C3D/"},
		{prefix: "/zlink/v1/zlinketcd-check-0a1b2c3d"},
		{prefix: "/zlink/v1/zlinketcd-0a1b2c3d/"},
		{prefix: "/zlink/v1/owner/"},
		{prefix: "/zlink/v1/zlinketcd-check-0a1b2c3d/s1/"},
	}
	for _, tc := range tests {
		base, purpose, ok := Parse(tc.prefix)
		require.Equal(t, tc.ok, ok, tc.prefix)
		require.Equal(t, tc.base, base, tc.prefix)
		require.Equal(t, tc.purpose, purpose, tc.prefix)
	}
}

func TestClean(t *testing.T) {
	c := etcdtest.Connect(t)
	prefix, err := New(etcdtest.UniquePrefix(t), "test")
	require.NoError(t, err)
	s, err := etcdstore.New(c, etcdstore.Options{Root: Sub(prefix, 1), MinLeaseSeconds: 600})
	require.NoError(t, err)
	claim, err := s.ClaimOwnerLease(t.Context(), "owner-1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindClaimed, claim.Kind)
	_, err = c.Put(t.Context(), prefix+"other", "v")
	require.NoError(t, err)
	owner, err := c.Get(t.Context(), s.Layout().OwnerKey("owner-1"))
	require.NoError(t, err)
	require.Len(t, owner.Kvs, 1)
	lease := clientv3.LeaseID(owner.Kvs[0].Lease)

	n, err := Clean(t.Context(), c, prefix)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the owner key went with its lease; the other key was deleted")
	left, err := c.Get(t.Context(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	require.Zero(t, left.Count)
	ttl, err := c.TimeToLive(t.Context(), lease)
	require.NoError(t, err)
	require.EqualValues(t, -1, ttl.TTL, "the owner's etcd lease is revoked")

	n, err = Clean(t.Context(), c, prefix)
	require.NoError(t, err)
	require.Zero(t, n, "cleaning twice is harmless")

	for _, bad := range []string{"", "/"} {
		_, err := Clean(t.Context(), c, bad)
		require.ErrorContains(t, err, "refusing")
	}
}

// A claimed prefix is in use while its marker is renewed; Stop lets it run
// out, KeepFor moves it to a lease nobody renews, and Release ends it.
func TestMarker(t *testing.T) {
	c := etcdtest.Connect(t)
	base := etcdtest.UniquePrefix(t)
	prefix, err := New(base, "check")
	require.NoError(t, err)
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, err := Claim(t.Context(), c, prefix, MarkerOptions{TTL: time.Second, Value: MarkerValue{Command: "check", Holder: "host pid 1", StartedAt: started}})
	require.NoError(t, err)
	require.Equal(t, prefix, m.Prefix())
	require.Equal(t, time.Second, m.TTL())
	f, err := Examine(t.Context(), c, prefix)
	require.NoError(t, err)
	require.Equal(t, Found{Prefix: prefix, Purpose: "check", Keys: 1, InUse: true, MarkerTTL: f.MarkerTTL,
		Marker: MarkerValue{Format: MarkerFormat, Command: "check", Holder: "host pid 1", StartedAt: started}}, f)

	// The keeper renews the one-second lease: it outlives its TTL (this
	// waits for a real lease to run out, were it not renewed).
	lease := markerLease(t, c, prefix)
	<-time.After(2500 * time.Millisecond)
	require.Equal(t, lease, markerLease(t, c, prefix), "the same lease, renewed")
	// A lease lost anyway is claimed again.
	_, err = c.Revoke(t.Context(), lease)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return markerLease(t, c, prefix) != 0 }, 10*time.Second, 10*time.Millisecond, "the marker comes back")

	require.NoError(t, m.KeepFor(t.Context(), time.Hour))
	f, err = Examine(t.Context(), c, prefix)
	require.NoError(t, err)
	require.True(t, f.InUse)
	require.True(t, f.Marker.Kept)
	require.Greater(t, f.MarkerTTL, int64(3500))
	require.NoError(t, m.Release(t.Context()), "the kept marker's lease is not the claim's any more")
	f, err = Examine(t.Context(), c, prefix)
	require.NoError(t, err)
	require.True(t, f.InUse, "Release after KeepFor leaves the kept marker")

	other, err := New(base, "bench")
	require.NoError(t, err)
	m2, err := Claim(t.Context(), c, other, MarkerOptions{})
	require.NoError(t, err)
	require.NoError(t, m2.Release(t.Context()))
	require.NoError(t, m2.Release(t.Context()), "twice is harmless")
	f, err = Examine(t.Context(), c, other)
	require.NoError(t, err)
	require.Equal(t, Found{Prefix: other, Purpose: "bench"}, f)

	_, err = Claim(t.Context(), c, "/", MarkerOptions{})
	require.ErrorContains(t, err, "refusing")
}

// markerLease is the lease of prefix's marker, or 0 without a marker.
func markerLease(t *testing.T, c *clientv3.Client, prefix string) clientv3.LeaseID {
	t.Helper()
	resp, err := c.Get(t.Context(), MarkerKey(prefix))
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return 0
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

// Find lists the scratch prefixes below a base, in use or abandoned, and
// RemoveAbandoned removes an abandoned one whole and refuses one in use.
func TestFindAndRemoveAbandoned(t *testing.T) {
	c := etcdtest.Connect(t)
	base := etcdtest.UniquePrefix(t)
	inUse, err := New(base, "check")
	require.NoError(t, err)
	m, err := Claim(t.Context(), c, inUse, MarkerOptions{TTL: time.Minute, Value: MarkerValue{Command: "check"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Release(context.Background()) })
	_, err = c.Put(t.Context(), inUse+"s1/k", "v")
	require.NoError(t, err)

	abandoned, err := New(base, "bench")
	require.NoError(t, err)
	s, err := etcdstore.New(c, etcdstore.Options{Root: abandoned + "store/", MinLeaseSeconds: 600})
	require.NoError(t, err)
	_, err = s.ClaimOwnerLease(t.Context(), "owner-1", time.Minute)
	require.NoError(t, err)
	owner, err := c.Get(t.Context(), s.Layout().OwnerKey("owner-1"))
	require.NoError(t, err)
	ownerLease := clientv3.LeaseID(owner.Kvs[0].Lease)
	_, err = c.Put(t.Context(), abandoned+"raw/x", "v")
	require.NoError(t, err)

	// Keys of the base that are no scratch prefixes are ignored.
	for _, k := range []string{base + "zlinketcd-notes", base + "zlinketcd-x/y", base + "owner/a", base + "zlinketcd-check-zzzzzzzz/k"} {
		_, err := c.Put(t.Context(), k, "v")
		require.NoError(t, err)
	}

	found, err := Find(t.Context(), c, base)
	require.NoError(t, err)
	require.Len(t, found, 2)
	byPrefix := map[string]Found{found[0].Prefix: found[0], found[1].Prefix: found[1]}
	require.True(t, byPrefix[inUse].InUse)
	require.EqualValues(t, 2, byPrefix[inUse].Keys)
	require.Equal(t, "check", byPrefix[inUse].Marker.Command)
	require.Positive(t, byPrefix[inUse].MarkerTTL)
	require.True(t, byPrefix[abandoned].Abandoned())
	require.EqualValues(t, 2, byPrefix[abandoned].Keys)

	_, err = RemoveAbandoned(t.Context(), c, inUse)
	require.ErrorIs(t, err, ErrInUse)
	_, err = RemoveAbandoned(t.Context(), c, base)
	require.ErrorContains(t, err, "not a scratch prefix")
	n, err := RemoveAbandoned(t.Context(), c, abandoned)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the owner key went with its lease; the raw key was deleted")
	ttl, err := c.TimeToLive(t.Context(), ownerLease)
	require.NoError(t, err)
	require.EqualValues(t, -1, ttl.TTL, "the owner's etcd lease is revoked")

	found, err = Find(t.Context(), c, base)
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Equal(t, inUse, found[0].Prefix)
	_, err = Find(t.Context(), c, "/no-slash")
	require.ErrorContains(t, err, "must end with '/'")
	_, err = Examine(t.Context(), c, base)
	require.ErrorContains(t, err, "not a scratch prefix")
}
