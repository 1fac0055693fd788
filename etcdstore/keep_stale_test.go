package etcdstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// KeepOwnerLease of a lease that ended answers stale and no kept lease: a
// nil interface, not an interface holding a nil *leasemap.Kept (which a
// session then stored and closed: a nil-pointer panic, found by the
// node-level fault tests after a quorum loss).
func TestKeepOwnerLeaseStaleReturnsNoKeptLease(t *testing.T) {
	f := newFixture(t)
	tok := f.claim(t, "o1")
	kind, err := f.s.ReleaseOwnerLease(t.Context(), tok)
	require.NoError(t, err)
	require.Equal(t, location.KindReleased, kind)

	res, kept, err := f.s.KeepOwnerLease(t.Context(), tok, time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindStale, res.Kind)
	require.Nil(t, kept)
	require.True(t, kept == nil, "a non-nil interface holding %#v", kept)
}
