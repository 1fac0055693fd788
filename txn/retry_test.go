package txn

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
	"github.com/zlink-systems/zlink-etcd/location"
)

func TestIsTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{rpctypes.ErrGRPCLeaderChanged, true},
		{rpctypes.ErrLeaderChanged, true},
		{rpctypes.ErrGRPCNoLeader, true},
		{rpctypes.ErrNoLeader, true},
		{rpctypes.ErrGRPCTimeout, true},
		{rpctypes.ErrGRPCTimeoutDueToLeaderFail, true},
		{rpctypes.ErrGRPCStopped, true},
		{rpctypes.ErrGRPCUnhealthy, true},
		{rpctypes.ErrGRPCRequestTooManyRequests, true},
		{status.Error(codes.Unavailable, "connection error: desc = \"transport: read: connection reset by peer\""), true},
		{fmt.Errorf("wrapped: %w", rpctypes.ErrGRPCLeaderChanged), true},
		{rpctypes.ErrGRPCPermissionDenied, false},
		{rpctypes.ErrGRPCInvalidAuthToken, false},
		{rpctypes.ErrGRPCAuthFailed, false},
		{rpctypes.ErrGRPCRequestTooLarge, false},
		{rpctypes.ErrGRPCTooManyOps, false},
		{rpctypes.ErrGRPCNoSpace, false},
		{rpctypes.ErrGRPCCompacted, false},
		{rpctypes.ErrGRPCFutureRev, false},
		{rpctypes.ErrGRPCLeaseNotFound, false},
		{rpctypes.ErrGRPCNotCapable, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("something else"), false},
		{&RetryError{Last: rpctypes.ErrGRPCLeaderChanged, Stop: context.DeadlineExceeded}, false},
		{nil, false},
	} {
		require.Equal(t, tc.want, IsTransient(tc.err), "%v", tc.err)
	}
}

// fastRetry is a Retrier whose waits are short.
func fastRetry(onRetry func(RetryEvent)) *Retrier {
	return NewRetrier(RetryOptions{InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, OnRetry: onRetry})
}

func TestRetrierDo(t *testing.T) {
	t.Run("transient errors are retried until the read succeeds", func(t *testing.T) {
		var events []RetryEvent
		r := fastRetry(func(e RetryEvent) { events = append(events, e) })
		calls := 0
		err := r.Do(t.Context(), "read", func(context.Context) error {
			calls++
			if calls <= 3 {
				return rpctypes.ErrGRPCLeaderChanged
			}
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, 4, calls)
		require.Equal(t, RetryStats{Retries: 3, Recovered: 1}, r.Stats())
		require.Len(t, events, 3)
		for i, e := range events {
			require.Equal(t, "read", e.Op)
			require.Equal(t, i+1, e.Attempt)
			require.ErrorIs(t, e.Err, rpctypes.ErrGRPCLeaderChanged)
			require.LessOrEqual(t, e.Wait, 4*time.Millisecond)
		}
	})
	t.Run("other errors are returned at once", func(t *testing.T) {
		r := fastRetry(nil)
		calls := 0
		err := r.Do(t.Context(), "read", func(context.Context) error {
			calls++
			return rpctypes.ErrGRPCPermissionDenied
		})
		require.ErrorIs(t, err, rpctypes.ErrGRPCPermissionDenied)
		require.Equal(t, 1, calls)
		require.Equal(t, RetryStats{}, r.Stats())
	})
	t.Run("the context ends the retries", func(t *testing.T) {
		r := fastRetry(nil)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		calls := 0
		err := r.Do(ctx, "read k", func(context.Context) error {
			calls++
			return rpctypes.ErrGRPCNoLeader
		})
		var re *RetryError
		require.ErrorAs(t, err, &re)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, rpctypes.ErrGRPCNoLeader)
		require.Equal(t, calls, re.Attempts)
		require.Greater(t, calls, 1)
		require.Contains(t, err.Error(), "read k: sent ")
		require.Contains(t, err.Error(), "while etcd answered transient errors, until the context ended (context deadline exceeded); last error: rpc error: code = Unavailable desc = etcdserver: no leader")
		require.Equal(t, int64(1), r.Stats().GaveUp)
		require.False(t, IsTransient(err), "a given-up read is not retried again by an outer loop")
		u := Unavailable("op", err)
		require.ErrorIs(t, u, location.ErrUnavailable, "a read that gave up reports the store unavailable")
		require.ErrorIs(t, u, context.DeadlineExceeded)
	})
}

func TestRetryingKVRetriesReadsOnly(t *testing.T) {
	c := etcdtest.Connect(t)
	k := etcdtest.UniquePrefix(t) + "k"
	_, err := c.Put(t.Context(), k, "v")
	require.NoError(t, err)
	faults := &kvfake.ReadFaults{KV: c.KV}
	r := fastRetry(nil)
	kv := r.KV(faults)
	require.Same(t, kv, r.KV(kv), "wrapping twice is wrapping once")

	faults.Set(false, 2)
	got, err := kv.Get(t.Context(), k)
	require.NoError(t, err)
	require.Equal(t, "v", string(got.Kvs[0].Value))
	require.Equal(t, int64(3), faults.Reads())

	faults.Set(false, 2)
	resp, err := kv.Txn(t.Context()).If(clientv3.Compare(clientv3.Version(k), "=", 1)).
		Then(clientv3.OpGet(k)).Else(clientv3.OpGet(k)).Commit()
	require.NoError(t, err)
	require.True(t, resp.Succeeded)
	require.Equal(t, int64(6), faults.Reads(), "a read-only Txn is sent again")

	faults.Set(false, 2)
	_, err = kv.Do(t.Context(), clientv3.OpGet(k))
	require.NoError(t, err, "a Do of a Get is retried")

	// A write is sent once, whatever happens to it.
	failing := &failingWriteKV{KV: c.KV}
	wkv := r.KV(failing)
	_, err = wkv.Txn(t.Context()).Then(clientv3.OpPut(k, "w")).Commit()
	require.ErrorIs(t, err, rpctypes.ErrGRPCLeaderChanged)
	_, err = wkv.Put(t.Context(), k, "w")
	require.ErrorIs(t, err, rpctypes.ErrGRPCLeaderChanged)
	_, err = wkv.Do(t.Context(), clientv3.OpPut(k, "w"))
	require.ErrorIs(t, err, rpctypes.ErrGRPCLeaderChanged)
	require.Equal(t, int64(3), failing.writes.Load(), "every write sent exactly once")
}

// failingWriteKV answers every write with "leader changed".
type failingWriteKV struct {
	clientv3.KV
	writes atomic.Int64
}

func (f *failingWriteKV) Put(context.Context, string, string, ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	f.writes.Add(1)
	return nil, rpctypes.ErrGRPCLeaderChanged
}

func (f *failingWriteKV) Do(context.Context, clientv3.Op) (clientv3.OpResponse, error) {
	f.writes.Add(1)
	return clientv3.OpResponse{}, rpctypes.ErrGRPCLeaderChanged
}

func (f *failingWriteKV) Txn(context.Context) clientv3.Txn { return failingTxn{f: f} }

type failingTxn struct{ f *failingWriteKV }

func (t failingTxn) If(...clientv3.Cmp) clientv3.Txn  { return t }
func (t failingTxn) Then(...clientv3.Op) clientv3.Txn { return t }
func (t failingTxn) Else(...clientv3.Op) clientv3.Txn { return t }
func (t failingTxn) Commit() (*clientv3.TxnResponse, error) {
	t.f.writes.Add(1)
	return nil, rpctypes.ErrGRPCLeaderChanged
}

// Finding 2 of issue 12: the re-read that settles a lost response gave up
// on the first "leader changed" ("outcome of the write is unknown … while
// resolving: etcdserver: leader changed").
func TestResolutionRidesOutAnElection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		applied bool // the lost commit was applied
	}{
		{name: "applied", applied: true},
		{name: "not applied", applied: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := etcdtest.Connect(t)
			faults := &kvfake.ReadFaults{KV: c.KV}
			flaky := &kvfake.LostAnswers{KV: faults}
			e := New(flaky, c.Watcher, Options{}) // default backoff: about a second for 5 retries
			k := etcdtest.UniquePrefix(t) + "k"
			var runs atomic.Int32
			// The commit's answer is lost; then the election: the next 5
			// reads fail with "leader changed".
			lost := func() { faults.Set(false, 5) }
			if tc.applied {
				flaky.LoseNext(1, 0, lost)
			} else {
				flaky.LoseNext(0, 1, lost)
			}
			_, out, err := Run(t.Context(), e, "set", []string{k}, setData(t, k, "one", &runs))
			require.NoError(t, err)
			require.True(t, out.Written)
			resp, err := c.Get(t.Context(), k)
			require.NoError(t, err)
			require.Equal(t, "one", dataOf(t, resp.Kvs[0].Value))
			require.Equal(t, int64(1), resp.Kvs[0].Version, "written exactly once")
			require.Equal(t, int64(0), faults.Pending(), "the 5 faults were used up by retries")
			if tc.applied {
				require.Equal(t, int32(1), runs.Load(), "resolved as applied")
			} else {
				require.Equal(t, int32(2), runs.Load(), "resolved as not applied, decided again")
			}
		})
	}
}

func TestResolutionEndsWithTheContext(t *testing.T) {
	t.Run("an election that never ends: unknown when the context ends", func(t *testing.T) {
		c := etcdtest.Connect(t)
		faults := &kvfake.ReadFaults{KV: c.KV}
		flaky := &kvfake.LostAnswers{KV: faults}
		e := New(flaky, c.Watcher, Options{Retry: fastRetry(nil), ResolveTimeout: time.Millisecond})
		k := etcdtest.UniquePrefix(t) + "k"
		flaky.LoseNext(1, 0, func() { faults.Set(true, 0) })
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		_, _, err := Run(ctx, e, "set", []string{k}, setData(t, k, "one", nil))
		require.ErrorIs(t, err, ErrOutcomeUnknown)
		require.NotErrorIs(t, err, location.ErrUnavailable)
		var re *RetryError
		require.ErrorAs(t, err, &re, "says what was retried")
		require.ErrorIs(t, re.Last, rpctypes.ErrGRPCLeaderChanged)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Contains(t, err.Error(), "while resolving")
		require.Greater(t, re.Attempts, 1)
	})
}

// Linearizable reads (the start of a decision, a verification of a
// decision that writes nothing) ride out an election too, and end with the
// caller's context when it does not end.
func TestReadsRideOutAnElection(t *testing.T) {
	c := etcdtest.Connect(t)
	faults := &kvfake.ReadFaults{KV: c.KV, Err: rpctypes.ErrGRPCNoLeader}
	e := New(faults, c.Watcher, Options{CacheSize: -1})
	prefix := etcdtest.UniquePrefix(t)
	a, b := prefix+"a", prefix+"b"
	_, err := c.Put(t.Context(), a, "x")
	require.NoError(t, err)

	faults.Set(false, 4)
	obs, err := e.ReadKeys(t.Context(), []string{a, b}, 0)
	require.NoError(t, err, "a read of several keys is one Txn of Gets: retried")
	require.True(t, obs.Keys[a].Present)
	require.False(t, obs.Keys[b].Present)

	faults.Set(false, 3)
	read := func(v *View) (bool, Commit, error) {
		_, ok := v.Get(a)
		return ok, Commit{}, nil
	}
	found, _, err := Run(t.Context(), e, "read", []string{a}, read)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(0), faults.Pending(), "the faults were used up by retries")

	require.Equal(t, int64(0), faults.Writes())
}

// A read that etcd keeps refusing ends with the caller's context, counted,
// its error wrapping the store's unavailability, the context's error and
// the last cause.
func TestReadsEndWithTheContext(t *testing.T) {
	c := etcdtest.Connect(t)
	faults := &kvfake.ReadFaults{KV: c.KV, Err: rpctypes.ErrGRPCNoLeader}
	e := New(faults, c.Watcher, Options{Retry: fastRetry(nil), CacheSize: -1})
	a := etcdtest.UniquePrefix(t) + "a"
	faults.Set(true, 0)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	read := func(v *View) (bool, Commit, error) {
		_, ok := v.Get(a)
		return ok, Commit{}, nil
	}
	_, _, err := Run(ctx, e, "read", []string{a}, read)
	require.ErrorIs(t, err, location.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, rpctypes.ErrGRPCNoLeader, "the last cause is wrapped")
	st := e.Retrier().Stats()
	require.Greater(t, st.Retries, int64(1))
	require.Equal(t, int64(1), st.GaveUp)
}

func TestResolveContext(t *testing.T) {
	t.Run("outlives a passed deadline by the floor", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(t.Context(), time.Now())
		defer cancel()
		rctx, rcancel := ResolveContext(ctx, 30*time.Millisecond)
		defer rcancel()
		require.NoError(t, rctx.Err())
		<-rctx.Done()
		require.ErrorIs(t, context.Cause(rctx), context.DeadlineExceeded)
	})
	t.Run("lasts as long as the caller's context", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		rctx, rcancel := ResolveContext(ctx, 0)
		defer rcancel()
		require.NoError(t, rctx.Err(), "the caller's context still runs")
		<-rctx.Done()
		require.ErrorIs(t, context.Cause(rctx), context.DeadlineExceeded)
	})
	t.Run("a cancellation ends it at once", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		rctx, rcancel := ResolveContext(ctx, time.Hour)
		defer rcancel()
		require.NoError(t, rctx.Err())
		cancel()
		select {
		case <-rctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the resolution outlived the caller's cancellation")
		}
		require.ErrorIs(t, context.Cause(rctx), context.Canceled)
	})
	t.Run("a context cancelled already, with its cause", func(t *testing.T) {
		stopping := errors.New("shutting down")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(stopping)
		rctx, rcancel := ResolveContext(ctx, time.Hour)
		defer rcancel()
		require.ErrorIs(t, context.Cause(rctx), stopping, "ended before it is returned")
	})
	t.Run("cancel ends it", func(t *testing.T) {
		rctx, rcancel := ResolveContext(t.Context(), time.Hour)
		rcancel()
		require.Error(t, rctx.Err())
	})
}

// A write whose response was lost is resolved after the caller's deadline
// passed (for at least ResolveTimeout), but not after the caller cancelled:
// then it answers ErrOutcomeUnknown at once, never a guess. A caller that
// cancels has stopped waiting (it shuts down); one whose deadline passed
// may have lost the response to that deadline and still wants the outcome.
func TestResolutionAfterTheCallerEnded(t *testing.T) {
	tests := []struct {
		name string
		// end ends the caller's context after the commit was sent.
		end func(ctx context.Context, cancel context.CancelFunc)
		// resolved: the outcome is learnt (applied); else unknown.
		resolved bool
		cause    error
	}{
		{name: "deadline passed", end: func(ctx context.Context, _ context.CancelFunc) { <-ctx.Done() },
			resolved: true},
		{name: "cancelled", end: func(_ context.Context, cancel context.CancelFunc) { cancel() },
			cause: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := etcdtest.Connect(t)
			faults := &kvfake.ReadFaults{KV: c.KV}
			flaky := &kvfake.LostAnswers{KV: faults}
			e := New(flaky, c.Watcher, Options{Retry: fastRetry(nil), ResolveTimeout: time.Hour, CacheSize: -1})
			k := etcdtest.UniquePrefix(t) + "k"
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if tc.resolved {
				ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
				defer cancel()
			}
			// The commit applies and its answer is lost once the caller's
			// context ended; the resolution's first reads fail (an
			// election), then etcd answers again.
			flaky.LoseNext(1, 0, func() {
				tc.end(ctx, cancel)
				faults.Set(false, 3)
			})
			type result struct {
				out Outcome
				err error
			}
			done := make(chan result, 1)
			go func() {
				_, out, err := Run(ctx, e, "set", []string{k}, setData(t, k, "one", nil))
				done <- result{out, err}
			}()
			var got result
			select {
			case got = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the write did not answer: its resolution outlived the caller's cancellation")
			}
			if tc.resolved {
				require.NoError(t, got.err)
				require.True(t, got.out.Written, "resolved as applied after the deadline passed")
				return
			}
			require.ErrorIs(t, got.err, ErrOutcomeUnknown, "never a guess")
			require.NotErrorIs(t, got.err, location.ErrUnavailable, "the write may have applied")
			require.ErrorIs(t, got.err, tc.cause)
			require.Contains(t, got.err.Error(), "while resolving")
		})
	}
}
