package scratch

import (
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
		})
	}
	require.Equal(t, "/a/s7/", Sub("/a/", 7))
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
