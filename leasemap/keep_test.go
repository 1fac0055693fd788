package leasemap

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// keepFixture is a fixture whose map watches (so that Keep works), with
// its etcd Lease behind a switch that can make Revoke fail.
type keepFixture struct {
	*fixture
	lease *revokeSwitch
}

func newKeepFixture(t *testing.T) *keepFixture {
	t.Helper()
	f := newFixture(t)
	sw := &revokeSwitch{Lease: f.rec.Lease(f.client.Lease)}
	f.m = New(f.rec, sw, f.layout, Options{Clock: f.clock.Now, Watcher: f.client.Watcher})
	return &keepFixture{fixture: f, lease: sw}
}

// revokeSwitch fails Revoke while failRevoke is set (as when etcd cannot
// be reached right after a release deleted the owner key).
type revokeSwitch struct {
	clientv3.Lease
	failRevoke atomic.Bool
}

func (r *revokeSwitch) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	if r.failRevoke.Load() {
		return nil, rpctypes.ErrGRPCTimeout
	}
	return r.Lease.Revoke(ctx, id)
}

func (f *keepFixture) keep(t *testing.T, tok location.OwnerToken) *Kept {
	t.Helper()
	res, k, err := f.m.Keep(t.Context(), tok, ttl30s)
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)
	require.NotNil(t, k)
	t.Cleanup(k.Close)
	return k
}

func (f *keepFixture) record(t *testing.T, ownerID string) (Record, *mvccKV) {
	t.Helper()
	kv := f.ownerKV(t, ownerID).Kvs[0]
	rec, err := decodeRecord(kv.Value)
	require.NoError(t, err)
	return rec, kv
}

// waitLost waits for the kept lease to report its end.
func waitLost(t *testing.T, k *Kept) {
	t.Helper()
	select {
	case <-k.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the kept lease did not report the end of its lease")
	}
}

func TestKeepRenewsWithoutWriting(t *testing.T) {
	f := newKeepFixture(t)
	a := f.claim(t, "a")
	f.clock.Advance(time.Second)
	k := f.keep(t, a)
	rec, kv := f.record(t, "a")
	require.True(t, rec.KeepAlive, "Keep marks the key")
	require.Equal(t, a.LeaseGeneration, kv.CreateRevision)
	written := kv.ModRevision

	for i := range 3 {
		f.clock.Advance(time.Second)
		f.rec.Reset()
		res, err := k.Renew(t.Context())
		require.NoError(t, err)
		now := t0().Add(time.Duration(i+2) * time.Second)
		require.Equal(t, location.OwnerLeaseRenewResult{Kind: location.KindRenewed, LeaseExpiresAt: now.Add(ttl30s), StoreNow: now}, res)
		require.Equal(t, map[string]int{txn.CallKeepAliveOnce: 1}, f.rec.Counts(), "one keep-alive, no write")
	}
	_, kv = f.record(t, "a")
	require.Equal(t, written, kv.ModRevision, "the owner key was not rewritten")
	select {
	case <-k.Lost():
		t.Fatal("a live lease is not lost")
	default:
	}
}

// ReadOwnerLease stays correct for every reader while a lease is kept
// alive by keep-alives only: found, same generation, and an expiry from
// etcd's remaining TTL (now + the whole seconds left + 1 s), never in the
// past.
func TestReadOfAKeptLease(t *testing.T) {
	f := newKeepFixture(t)
	a := f.claim(t, "a")
	k := f.keep(t, a)
	_, err := k.Renew(t.Context())
	require.NoError(t, err)
	f.clock.Advance(40 * time.Second) // past the expiry the key records

	for _, reader := range []struct {
		name string
		m    *Map
	}{
		{name: "the keeping map (TTL asked beside the key)", m: f.m},
		{name: "another process's map", m: New(f.client.KV, f.client.Lease, f.layout, Options{Clock: f.clock.Now})},
	} {
		t.Run(reader.name, func(t *testing.T) {
			got, err := reader.m.Read(t.Context(), "a")
			require.NoError(t, err)
			require.Equal(t, location.KindFound, got.Kind)
			require.Equal(t, a, got.Token)
			now := t0().Add(40 * time.Second)
			require.Equal(t, now, got.StoreNow)
			left := got.LeaseExpiresAt.Sub(got.StoreNow)
			// etcd keeps the lease 30 s from the last keep-alive; the read
			// answers the whole seconds left (29 or 30 just after it) + 1 s.
			require.GreaterOrEqual(t, left, 29*time.Second, "never earlier than etcd's expiry")
			require.LessOrEqual(t, left, 31*time.Second)
			require.Zero(t, left%time.Second)
		})
	}
}

func TestKeptLeaseLearnsOfItsEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, f *keepFixture, tok location.OwnerToken)
	}{
		{name: "revoked (expired)", end: func(t *testing.T, f *keepFixture, _ location.OwnerToken) {
			require.NoError(t, f.m.Expire(t.Context(), "a"))
		}},
		{name: "released", end: func(t *testing.T, f *keepFixture, tok location.OwnerToken) {
			kind, err := New(f.client.KV, f.client.Lease, f.layout, Options{}).Release(t.Context(), tok)
			require.NoError(t, err)
			require.Equal(t, location.KindReleased, kind)
		}},
		{name: "released, and the revoke failed: the etcd lease lingers", end: func(t *testing.T, f *keepFixture, tok location.OwnerToken) {
			f.lease.failRevoke.Store(true)
			kind, err := f.m.Release(t.Context(), tok)
			require.NoError(t, err)
			require.Equal(t, location.KindReleased, kind)
		}},
		{name: "released and claimed again", end: func(t *testing.T, f *keepFixture, tok location.OwnerToken) {
			other := New(f.client.KV, f.client.Lease, f.layout, Options{})
			_, err := other.Release(t.Context(), tok)
			require.NoError(t, err)
			res, err := other.Claim(t.Context(), "a", time.Minute)
			require.NoError(t, err)
			require.Equal(t, location.KindClaimed, res.Kind)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newKeepFixture(t)
			a := f.claim(t, "a")
			k := f.keep(t, a)
			tc.end(t, f, a)
			waitLost(t, k)
			res, err := k.Renew(t.Context())
			require.NoError(t, err)
			require.Equal(t, location.KindStale, res.Kind, "a lingering etcd lease does not keep a dead generation alive")
		})
	}
}

// A holder of the same token that renews with RenewOwnerLease rewrites the
// key without the mark (and the reported expiry is then the recorded one,
// as the conformance scenarios expect); the kept lease marks it again at
// its next renewal, with one write, and renews by keep-alive after that.
func TestKeptLeaseMarksAgainAfterARewrite(t *testing.T) {
	f := newKeepFixture(t)
	a := f.claim(t, "a")
	k := f.keep(t, a)
	_, err := New(f.client.KV, f.client.Lease, f.layout, Options{Clock: f.clock.Now}).Renew(t.Context(), a, ttl30s)
	require.NoError(t, err)
	rec, kv := f.record(t, "a")
	require.False(t, rec.KeepAlive)
	got := f.read(t, "a")
	require.Equal(t, t0().Add(ttl30s), got.LeaseExpiresAt, "the recorded expiry")

	require.Eventually(t, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		return !k.marked && k.seenRev >= kv.ModRevision
	}, 10*time.Second, time.Millisecond, "the watch saw the rewrite")
	f.rec.Reset()
	res, err := k.Renew(t.Context())
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)
	require.Equal(t, 1, f.rec.Counts()[txn.CallTxn], "one write marks the key again")
	rec, _ = f.record(t, "a")
	require.True(t, rec.KeepAlive)

	f.rec.Reset()
	_, err = k.Renew(t.Context())
	require.NoError(t, err)
	require.Equal(t, map[string]int{txn.CallKeepAliveOnce: 1}, f.rec.Counts())
}

// Renewing with another TTL moves the key to a new etcd lease; the kept
// lease's keep-alive then finds its old lease gone, and renews fully (which
// moves the key back to a lease of its own TTL).
func TestKeptLeaseFollowsAMove(t *testing.T) {
	f := newKeepFixture(t)
	a := f.claim(t, "a")
	k := f.keep(t, a)
	res, err := f.m.Renew(t.Context(), a, 2*ttl30s)
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)
	res, err = k.Renew(t.Context())
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)
	rec, kv := f.record(t, "a")
	require.True(t, rec.KeepAlive)
	require.Equal(t, int64(30), rec.LeaseSeconds)
	require.Equal(t, a.LeaseGeneration, kv.CreateRevision, "the generation never changes")
	select {
	case <-k.Lost():
		t.Fatal("a moved lease is not lost")
	default:
	}
}

func TestKeepNeedsAWatcher(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	_, k, err := f.m.Keep(t.Context(), a, ttl30s)
	require.ErrorIs(t, err, location.ErrUnsupported)
	require.Nil(t, k)
}

func TestKeepOfADeadLeaseIsStale(t *testing.T) {
	f := newKeepFixture(t)
	a := f.claim(t, "a")
	require.NoError(t, f.m.Expire(t.Context(), "a"))
	res, k, err := f.m.Keep(t.Context(), a, ttl30s)
	require.NoError(t, err)
	require.Equal(t, location.KindStale, res.Kind)
	require.Nil(t, k)
}
