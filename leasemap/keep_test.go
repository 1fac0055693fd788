package leasemap

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/zlink-systems/zlink-etcd/internal/syncio"
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
	f.m = f.newMap(f.rec, sw, Options{Clock: f.clock.Now, Watcher: f.client.Watcher})
	return &keepFixture{fixture: f, lease: sw}
}

// withStreams makes the fixture's kept leases renew on keep-alive streams.
func (f *keepFixture) withStreams() *keepFixture {
	f.m = f.newMap(f.rec, f.lease, Options{Clock: f.clock.Now, Watcher: f.client.Watcher,
		KeepAliveStreams: clientv3.RetryLeaseClient(f.client)})
	return f
}

// keepAliveModes are the two ways a kept lease sends its keep-alives.
var keepAliveModes = []struct {
	name    string
	fixture func(t *testing.T) *keepFixture
}{
	{name: "KeepAliveOnce", fixture: newKeepFixture},
	{name: "stream", fixture: func(t *testing.T) *keepFixture { return newKeepFixture(t).withStreams() }},
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
	rec, err := DecodeRecord(kv.Value)
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
	for _, mode := range keepAliveModes {
		t.Run(mode.name, func(t *testing.T) { testKeepRenewsWithoutWriting(t, mode.fixture(t), mode.name == "stream") })
	}
}

func testKeepRenewsWithoutWriting(t *testing.T, f *keepFixture, stream bool) {
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
		want := map[string]int{txn.CallKeepAliveOnce: 1}
		if stream {
			want = map[string]int{} // a message on the stream, which the recorder does not see
		}
		require.Equal(t, want, f.rec.Counts(), "one keep-alive, no write")
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
		{name: "another process's map", m: f.newMap(f.client.KV, f.client.Lease, Options{Clock: f.clock.Now})},
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
			kind, err := f.newMap(f.client.KV, f.client.Lease, Options{}).Release(t.Context(), tok)
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
			other := f.newMap(f.client.KV, f.client.Lease, Options{})
			_, err := other.Release(t.Context(), tok)
			require.NoError(t, err)
			res, err := other.Claim(t.Context(), "a", time.Minute)
			require.NoError(t, err)
			require.Equal(t, location.KindClaimed, res.Kind)
		}},
	} {
		for _, mode := range keepAliveModes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				f := mode.fixture(t)
				a := f.claim(t, "a")
				k := f.keep(t, a)
				_, err := k.Renew(t.Context()) // opens the stream
				require.NoError(t, err)
				tc.end(t, f, a)
				waitLost(t, k)
				res, err := k.Renew(t.Context())
				require.NoError(t, err)
				require.Equal(t, location.KindStale, res.Kind, "a lingering etcd lease does not keep a dead generation alive")
			})
		}
	}
}

// A revoked lease answers stale on the keep-alive itself (TTL 0), before
// the watch has told: here the watch is not consulted (the Kept is asked
// right after the revocation).
func TestKeepAliveOfARevokedLeaseIsStale(t *testing.T) {
	for _, mode := range keepAliveModes {
		t.Run(mode.name, func(t *testing.T) {
			f := mode.fixture(t)
			a := f.claim(t, "a")
			k := f.keep(t, a)
			require.NoError(t, f.m.Expire(t.Context(), "a"))
			res, err := k.Renew(t.Context())
			require.NoError(t, err)
			require.Equal(t, location.KindStale, res.Kind)
		})
	}
}

// A keep-alive on a broken stream fails and discards it; the next one opens
// a new stream and renews. A keep-alive whose context has ended sends
// nothing.
func TestKeepAliveStreamRecovers(t *testing.T) {
	f := newKeepFixture(t).withStreams()
	a := f.claim(t, "a")
	k := f.keep(t, a)
	_, err := k.Renew(t.Context())
	require.NoError(t, err)

	k.stream.mu.Lock()
	k.stream.current.end() // the stream breaks, as when its connection does
	k.stream.mu.Unlock()
	_, err = k.Renew(t.Context())
	require.Error(t, err)
	k.stream.mu.Lock()
	require.Nil(t, k.stream.current, "the broken stream was discarded")
	k.stream.mu.Unlock()
	res, err := k.Renew(t.Context())
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind, "on a new stream")

	k.mu.Lock()
	id := k.leaseID
	k.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = k.stream.keepAlive(ctx, id)
	require.ErrorIs(t, err, context.Canceled)
}

// stuckStreams opens keep-alive streams whose first stuck ones never
// answer (their requests vanish, as on the connection of a member that
// was killed or cut off, which the balancer keeps using for a while).
// Each stuck stream reports a member of its own (10.0.0.n:2379, n its
// place among the streams opened), so that a hedge on the real member is
// not taken for one on the stuck stream's.
type stuckStreams struct {
	KeepAliveStreams
	stuck  atomic.Int32
	opened atomic.Int32
}

func (s *stuckStreams) LeaseKeepAlive(ctx context.Context, opts ...grpc.CallOption) (pb.Lease_LeaseKeepAliveClient, error) {
	n := s.opened.Add(1)
	st, err := s.KeepAliveStreams.LeaseKeepAlive(ctx, opts...)
	if err != nil || s.stuck.Add(-1) < 0 {
		return st, err
	}
	return stuckStream{Lease_LeaseKeepAliveClient: st, ctx: ctx, member: stuckMember(n)}, nil
}

// stuckMember is the member the n-th stream opened reports when stuck.
func stuckMember(n int32) *net.TCPAddr {
	return &net.TCPAddr{IP: net.IPv4(10, 0, 0, byte(n)), Port: 2379}
}

type stuckStream struct {
	pb.Lease_LeaseKeepAliveClient
	ctx    context.Context
	member net.Addr
}

func (s stuckStream) Context() context.Context {
	return peer.NewContext(s.Lease_LeaseKeepAliveClient.Context(), &peer.Peer{Addr: s.member})
}

func (stuckStream) Send(*pb.LeaseKeepAliveRequest) error { return nil }

func (s stuckStream) Recv() (*pb.LeaseKeepAliveResponse, error) {
	<-s.ctx.Done()
	return nil, s.ctx.Err()
}

// A keep-alive that a stream does not answer within the hedge is sent
// again on a new stream, up to three streams; the first answer renews, and
// its stream carries the next renewal. When no stream answers, the renewal
// fails when its context ends, and every stream is discarded.
func TestKeepAliveHedgesOnNewStreams(t *testing.T) {
	const hedge = 500 * time.Millisecond
	for _, tc := range []struct {
		stuck   int32
		renewed bool
	}{
		{stuck: 0, renewed: true},
		{stuck: 1, renewed: true},
		{stuck: 2, renewed: true},
		{stuck: 3, renewed: false},
	} {
		t.Run(fmt.Sprintf("stuck=%d", tc.stuck), func(t *testing.T) {
			f := newKeepFixture(t)
			streams := &stuckStreams{KeepAliveStreams: clientv3.RetryLeaseClient(f.client)}
			f.m = f.newMap(f.rec, f.lease, Options{Clock: f.clock.Now, Watcher: f.client.Watcher,
				KeepAliveStreams: streams, KeepAliveHedge: hedge})
			a := f.claim(t, "a")
			k := f.keep(t, a)
			streams.opened.Store(0) // Keep's full renewal opened one
			streams.stuck.Store(tc.stuck)
			ctx, cancel := context.WithTimeout(t.Context(), 3*hedge+hedge/2)
			defer cancel()
			res, err := k.Renew(ctx)
			if !tc.renewed {
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.Equal(t, int32(3), streams.opened.Load(), "the stream and two hedges")
				k.stream.mu.Lock()
				require.Nil(t, k.stream.current, "every stream was discarded")
				k.stream.mu.Unlock()
				return
			}
			require.NoError(t, err)
			require.Equal(t, location.KindRenewed, res.Kind)
			require.Equal(t, tc.stuck+1, streams.opened.Load(), "a hedge per stuck stream")
			res, err = k.Renew(t.Context())
			require.NoError(t, err)
			require.Equal(t, location.KindRenewed, res.Kind)
			require.Equal(t, tc.stuck+1, streams.opened.Load(), "the next renewal on the stream that answered")
		})
	}
}

// A hedged keep-alive is logged at debug level with the member each of
// its streams reached, in the order they were sent, and the one that
// answered (the cluster test's diagnosis reads them; docs/reliability.md).
func TestHedgedKeepAliveIsLogged(t *testing.T) {
	f := newKeepFixture(t)
	var logs syncio.Buffer
	streams := &stuckStreams{KeepAliveStreams: clientv3.RetryLeaseClient(f.client)}
	f.m = f.newMap(f.rec, f.lease, Options{Clock: f.clock.Now, Watcher: f.client.Watcher,
		KeepAliveStreams: streams, KeepAliveHedge: 200 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	a := f.claim(t, "a")
	k := f.keep(t, a)
	streams.opened.Store(0) // Keep's full renewal opened one
	streams.stuck.Store(1)
	res, err := k.Renew(t.Context())
	require.NoError(t, err)
	require.Equal(t, location.KindRenewed, res.Kind)

	member := strings.TrimPrefix(f.client.Endpoints()[0], "http://")
	var hedged []map[string]any
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec["msg"] == "leasemap: keep-alive hedged or failed" {
			hedged = append(hedged, rec)
		}
	}
	require.Len(t, hedged, 1, "one hedged keep-alive")
	require.Equal(t, stuckMember(1).String()+","+member, hedged[0]["streams"], "the stuck stream, then the hedge")
	require.Equal(t, member, hedged[0]["answered_by"])
	require.Empty(t, hedged[0]["discarded"], "the hedge reached another member at once")
	require.Nil(t, hedged[0]["error"])
}

// A full renewal's keep-alive (Renew, Keep) is hedged too: a stream that
// does not answer does not hold the renewal up.
func TestFullRenewalKeepAliveHedges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		renew func(f *keepFixture, t location.OwnerToken) (location.OwnerLeaseRenewResult, error)
	}{
		{name: "Renew", renew: func(f *keepFixture, t location.OwnerToken) (location.OwnerLeaseRenewResult, error) {
			return f.m.Renew(context.Background(), t, ttl30s)
		}},
		{name: "Keep", renew: func(f *keepFixture, t location.OwnerToken) (location.OwnerLeaseRenewResult, error) {
			res, k, err := f.m.Keep(context.Background(), t, ttl30s)
			if k != nil {
				k.Close()
			}
			return res, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newKeepFixture(t)
			streams := &stuckStreams{KeepAliveStreams: clientv3.RetryLeaseClient(f.client)}
			f.m = f.newMap(f.rec, f.lease, Options{Clock: f.clock.Now, Watcher: f.client.Watcher,
				KeepAliveStreams: streams, KeepAliveHedge: 500 * time.Millisecond})
			a := f.claim(t, "a")
			streams.stuck.Store(1)
			res, err := tc.renew(f, a)
			require.NoError(t, err)
			require.Equal(t, location.KindRenewed, res.Kind)
			require.Equal(t, int32(2), streams.opened.Load(), "the stuck stream and a hedge")
		})
	}
}
