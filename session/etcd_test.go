package session_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/session"
)

// quickOptions are short timings on the system clock: trusted for
// TTL − margin = 2 s after each renewal, renewed every 200 ms.
func quickOptions() session.Options {
	return session.Options{TTL: 3 * time.Second, RenewInterval: 200 * time.Millisecond,
		RenewTimeout: 500 * time.Millisecond, FencingMargin: time.Second}
}

// leaseStore is a store under test and how to end a lease behind the
// session's back.
type leaseStore interface {
	location.OwnerLeaseStore
	ExpireOwnerLease(ctx context.Context, ownerID string) error
}

// everyStore returns memstore and etcdstore (on the shared member), both
// on the system clock.
func everyStore(t *testing.T) []struct {
	name  string
	store leaseStore
} {
	es, err := etcdstore.New(etcdtest.Connect(t), etcdstore.Options{Root: etcdtest.UniquePrefix(t)})
	require.NoError(t, err)
	return []struct {
		name  string
		store leaseStore
	}{
		{name: "memstore", store: memstore.New(memstore.Options{})},
		{name: "etcdstore", store: es},
	}
}

func readLease(t *testing.T, s location.OwnerLeaseStore, ownerID string) location.OwnerLeaseReadResult {
	t.Helper()
	res, err := s.ReadOwnerLease(context.Background(), ownerID)
	require.NoError(t, err)
	return res
}

// The session's contract holds alike on memstore and etcdstore (finding 3
// of issue 12: the holder existed only on etcdstore).
func TestSameContractOnEveryStore(t *testing.T) {
	for _, st := range everyStore(t) {
		t.Run(st.name, func(t *testing.T) {
			t.Run("renews, and Close releases", func(t *testing.T) {
				s, err := session.New(t.Context(), st.store, "close", quickOptions())
				require.NoError(t, err)
				eventually(t, func() bool { return s.Status().Renewals >= 2 }, "renewals")
				got := readLease(t, st.store, "close")
				require.Equal(t, location.KindFound, got.Kind)
				require.Equal(t, s.Token(), got.Token)
				require.True(t, got.LeaseExpiresAt.After(got.StoreNow), "the expiry is never in the past")
				require.NoError(t, s.Close(t.Context()))
				require.ErrorIs(t, s.Err(), session.ErrClosed)
				require.Equal(t, location.KindMissing, readLease(t, st.store, "close").Kind)
			})
			t.Run("Orphan keeps the lease, Adopt takes it over", func(t *testing.T) {
				s, err := session.New(t.Context(), st.store, "orphan", quickOptions())
				require.NoError(t, err)
				eventually(t, func() bool { return s.Status().Renewals >= 1 }, "a renewal")
				tok := s.Orphan()
				require.Equal(t, location.KindFound, readLease(t, st.store, "orphan").Kind)
				next, err := session.Adopt(t.Context(), st.store, tok, quickOptions())
				require.NoError(t, err)
				eventually(t, func() bool { return next.Status().Renewals >= 2 }, "renewals after the handover")
				require.NoError(t, next.Close(t.Context()))
				require.Equal(t, location.KindMissing, readLease(t, st.store, "orphan").Kind)
			})
			t.Run("an expired lease ends the session as lost", func(t *testing.T) {
				s, err := session.New(t.Context(), st.store, "expire", quickOptions())
				require.NoError(t, err)
				eventually(t, func() bool { return s.Status().Renewals >= 1 }, "a renewal")
				require.NoError(t, st.store.ExpireOwnerLease(t.Context(), "expire"))
				waitDone(t, s)
				require.ErrorIs(t, s.Err(), session.ErrLeaseLost)
				require.False(t, s.Valid())
				require.NoError(t, s.Close(t.Context()))
			})
			t.Run("the context ends the session and keeps the lease", func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				s, err := session.New(ctx, st.store, "context", quickOptions())
				require.NoError(t, err)
				cancel()
				waitDone(t, s)
				require.ErrorIs(t, s.Err(), context.Canceled)
				require.Equal(t, location.KindFound, readLease(t, st.store, "context").Kind)
				require.NoError(t, s.Close(t.Context()))
				require.Equal(t, location.KindMissing, readLease(t, st.store, "context").Kind)
			})
		})
	}
}

// On etcd, renewals are keep-alives (no write to the owner key), and a
// revoked lease ends the session at once, not at the next renewal.
func TestEtcdKeepAlivePath(t *testing.T) {
	client := etcdtest.Connect(t)
	store, err := etcdstore.New(client, etcdstore.Options{Root: etcdtest.UniquePrefix(t)})
	require.NoError(t, err)
	opts := session.Options{TTL: 6 * time.Second, RenewInterval: 2 * time.Second, RenewTimeout: time.Second, FencingMargin: time.Second}
	var attempts atomic.Int64
	opts.OnRenewal = func(session.Renewal) { attempts.Add(1) }
	s, err := session.New(t.Context(), store, "a", opts)
	require.NoError(t, err)
	eventually(t, func() bool { return s.Status().Renewals >= 1 }, "the first renewal")
	require.True(t, s.Status().KeptAlive)
	key := store.Layout().OwnerKey("a")
	first, err := client.Get(t.Context(), key)
	require.NoError(t, err)
	eventually(t, func() bool { return s.Status().Renewals >= 2 }, "the second renewal")
	second, err := client.Get(t.Context(), key)
	require.NoError(t, err)
	require.Equal(t, first.Kvs[0].ModRevision, second.Kvs[0].ModRevision, "a kept renewal does not write the owner key")

	before := attempts.Load()
	st := s.Status()
	require.NoError(t, store.ExpireOwnerLease(t.Context(), "a"))
	waitDone(t, s)
	require.ErrorIs(t, s.Err(), session.ErrLeaseLost)
	require.ErrorContains(t, s.Err(), "the store reported")
	require.Equal(t, before, attempts.Load(), "no renewal was needed to learn it")
	require.True(t, s.Status().EndedAt.Before(st.LastRenewal.Add(opts.RenewInterval+opts.RenewTimeout)))
	require.NoError(t, s.Close(t.Context()))
}

// Finding 3 of issue 12: with etcd unreachable for longer than the TTL,
// the holder's Done never closed. The session's closes once no renewal has
// been confirmed for TTL − margin: by its own timestamps, within
// [TTL − margin, TTL − margin + RenewTimeout] of the last confirmed
// renewal's send time. After the member comes back, Close releases.
func TestEtcdOutageEndsTheSessionAtTheDeadline(t *testing.T) {
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	client, err := m.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	store, err := etcdstore.New(client, etcdstore.Options{})
	require.NoError(t, err)
	opts := quickOptions()
	s, err := session.New(t.Context(), store, "a", opts)
	require.NoError(t, err)
	eventually(t, func() bool { return s.Status().Renewals >= 2 }, "renewals")

	m.Stop(true)
	waitDone(t, s)
	st := s.Status()
	require.ErrorIs(t, s.Err(), session.ErrDeadlinePassed)
	trusted := opts.TTL - opts.FencingMargin
	gap := st.EndedAt.Sub(st.LastRenewal)
	require.GreaterOrEqual(t, gap, trusted, "not before the deadline")
	require.LessOrEqual(t, gap, trusted+opts.RenewTimeout, "within TTL − margin + one renew timeout")
	require.Error(t, st.LastError)
	require.Positive(t, st.Failures)
	require.False(t, s.Valid())

	require.NoError(t, m.Restart(t.Context()))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Close(ctx), "Close releases once etcd is back")
	got, err := store.ReadOwnerLease(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, location.KindMissing, got.Kind)
}
