package session_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/kvfake"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/session"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// stuckCall is a store call that ignores its context: it blocks until the
// test frees it, as a store still settling a lost answer after its
// caller's context ended does.
type stuckCall struct {
	entered   chan struct{} // closed when the call is made
	release   chan struct{}
	enterOnce sync.Once
	freeOnce  sync.Once
}

func newStuckCall() *stuckCall {
	return &stuckCall{entered: make(chan struct{}), release: make(chan struct{})}
}

// block is the call: it blocks until free.
func (c *stuckCall) block() {
	c.enterOnce.Do(func() { close(c.entered) })
	<-c.release
}

// fault is the call as a faultyStore fault: it answers that the outcome
// is unknown once freed.
func (c *stuckCall) fault(context.Context) error {
	c.block()
	return fmt.Errorf("test store: %w: the answer was lost", location.ErrOutcomeUnknown)
}

// free lets the call return. Idempotent.
func (c *stuckCall) free() { c.freeOnce.Do(func() { close(c.release) }) }

// waitClosed waits for ch to close (the session's state), failing the
// test after a generous bound.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// sleeping waits until the session's renewal loop is asleep on clk (its
// timer armed, beside the deadline's), so that a move of the clock wakes
// it at the time it asked for.
func sleeping(t *testing.T, clk *clock.Manual) {
	t.Helper()
	eventually(t, func() bool { return clk.Timers() == 2 }, "the renewal loop is asleep")
}

// requireOpen fails when ch is closed.
func requireOpen(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal(msg)
	default:
	}
}

// A session ends when it must, whatever its store call in flight is doing:
// Done closes at the trust deadline, at the context's end, at Close and at
// Orphan while a renewal is stuck in the store (a store settling a lost
// answer past its caller's end). The call is accounted for: Stopped closes
// only once it returned, and Close and Orphan wait for it. Before this
// change Done closed only once the renewal loop, and so the stuck call,
// had returned (issue 12: Done up to the store's resolve timeout late).
func TestAStoreCallInFlightDoesNotHoldTheSession(t *testing.T) {
	tests := []struct {
		name string
		// end ends the session while the call is stuck; it returns a
		// channel closed when its call (Close, Orphan) has returned.
		end  func(t *testing.T, w *memWorld, s *session.Session, cancel context.CancelFunc) <-chan struct{}
		want error
		// released: the lease is gone once everything returned.
		released bool
	}{
		{name: "trust deadline", want: session.ErrDeadlinePassed,
			end: func(t *testing.T, w *memWorld, s *session.Session, _ context.CancelFunc) <-chan struct{} {
				w.clk.Advance(5 * time.Second) // claim + TTL − margin: the timer fires in Advance
				requireOpen(t, s.Stopped(), "Stopped before the stuck call returned")
				select {
				case <-s.Done():
				default:
					t.Fatal("Done did not close at the trust deadline: it waits for the renewal in flight")
				}
				return nil
			}},
		{name: "context", want: context.Canceled,
			end: func(_ *testing.T, _ *memWorld, _ *session.Session, cancel context.CancelFunc) <-chan struct{} {
				cancel()
				return nil
			}},
		{name: "Close", want: session.ErrClosed, released: true,
			end: func(t *testing.T, _ *memWorld, s *session.Session, _ context.CancelFunc) <-chan struct{} {
				returned := make(chan struct{})
				go func() {
					defer close(returned)
					require.NoError(t, s.Close(context.Background()))
				}()
				return returned
			}},
		{name: "Orphan", want: session.ErrOrphaned,
			end: func(_ *testing.T, _ *memWorld, s *session.Session, _ context.CancelFunc) <-chan struct{} {
				returned := make(chan struct{})
				go func() {
					defer close(returned)
					s.Orphan()
				}()
				return returned
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newMemWorld()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := session.New(ctx, w.store, "a", w.options())
			require.NoError(t, err)
			stuck := newStuckCall()
			t.Cleanup(stuck.free)
			w.store.setRenewFault(stuck.fault)
			sleeping(t, w.clk)
			w.clk.Advance(5 * time.Second) // the first renewal is sent, and sticks
			waitClosed(t, stuck.entered, "the renewal")

			returned := tc.end(t, w, s, cancel)
			waitClosed(t, s.Done(), "Done while the renewal is stuck")
			require.ErrorIs(t, s.Err(), tc.want)
			require.False(t, s.Valid())
			st := s.Status()
			require.Equal(t, st.EndedAt, s.TrustedUntil())
			require.LessOrEqual(t, st.EndedAt.Sub(st.LastRenewal), 15*time.Second-5*time.Second+3*time.Second,
				"within TTL − margin + one renew timeout of the last confirmed renewal")
			requireOpen(t, s.Stopped(), "Stopped closed while the renewal is stuck")
			if returned != nil {
				requireOpen(t, returned, "Close or Orphan returned while the renewal is stuck")
			}

			stuck.free()
			waitClosed(t, s.Stopped(), "Stopped once the renewal returned")
			if returned != nil {
				waitClosed(t, returned, "Close or Orphan once the renewal returned")
			}
			require.ErrorIs(t, s.Err(), tc.want, "the renewal's late answer changes nothing")
			if tc.released {
				require.Equal(t, location.KindMissing, w.read(t, "a").Kind)
				return
			}
			require.Equal(t, location.KindFound, w.read(t, "a").Kind, "ending does not release")
			require.NoError(t, s.Close(t.Context()))
		})
	}
}

// Orphan waits for a stuck store call for at most RenewTimeout (session
// clock), then returns; Stopped closes when the call returns.
func TestOrphanWaitsForAStuckCallAtMostTheRenewTimeout(t *testing.T) {
	w := newMemWorld()
	s, err := session.New(t.Context(), w.store, "a", w.options())
	require.NoError(t, err)
	stuck := newStuckCall()
	t.Cleanup(stuck.free)
	w.store.setRenewFault(stuck.fault)
	sleeping(t, w.clk)
	w.clk.Advance(5 * time.Second)
	waitClosed(t, stuck.entered, "the renewal")

	timers := w.clk.Timers()
	returned := make(chan location.OwnerToken, 1)
	go func() { returned <- s.Orphan() }()
	// Ending stops the deadline's timer; Orphan's bound is one more.
	waitClosed(t, s.Done(), "Done")
	eventually(t, func() bool { return w.clk.Timers() == timers }, "Orphan armed its bound")
	w.clk.Advance(3 * time.Second)
	select {
	case tok := <-returned:
		require.Equal(t, s.Token(), tok)
	case <-time.After(10 * time.Second):
		t.Fatal("Orphan did not return after RenewTimeout")
	}
	requireOpen(t, s.Stopped(), "Stopped closed while the renewal is stuck")
	require.True(t, w.logs.has(slog.LevelWarn, "session: orphaned with a store call still in flight; it ends when the store answers"))
	stuck.free()
	waitClosed(t, s.Stopped(), "Stopped once the renewal returned")
	require.Equal(t, location.KindFound, w.read(t, "a").Kind)
}

// lossyKV loses the answer of the next write of key (the write applies),
// then holds every read of key — the reads that resolve the lost answer —
// until the test frees them, ignoring their context; or, with refuse set,
// refuses that many reads of key (so that the resolution fails at once).
type lossyKV struct {
	clientv3.KV
	key   string
	stuck *stuckCall

	mu      sync.Mutex
	armed   bool  // lose the next write of key
	holding bool  // hold the reads of key
	refuse  int   // refuse the next reads of key after the loss
	lostRev int64 // the revision at which the lost write applied
}

// refused reports whether a read of key is refused now.
func (k *lossyKV) refused(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if key != k.key || k.armed || k.refuse == 0 {
		return false
	}
	k.refuse--
	return true
}

// arm makes the next write of key lose its answer.
func (k *lossyKV) arm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.armed = true
}

// free lets the held reads return and holds no more.
func (k *lossyKV) free() {
	k.mu.Lock()
	k.holding = false
	k.mu.Unlock()
	k.stuck.free()
}

// lose reports whether a transaction with the writes then loses its
// answer.
func (k *lossyKV) lose(then []clientv3.Op) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.armed {
		return false
	}
	for _, op := range then {
		if op.IsPut() && string(op.KeyBytes()) == k.key {
			k.armed, k.holding = false, k.refuse == 0
			return true
		}
	}
	return false
}

func (k *lossyKV) held() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.holding
}

func (k *lossyKV) Txn(ctx context.Context) clientv3.Txn {
	return txn.DeferredTxn(func(ops txn.TxnOps) (*clientv3.TxnResponse, error) {
		if !k.lose(ops.Then) {
			return ops.Send(ctx, k.KV)
		}
		resp, err := ops.Send(ctx, k.KV)
		if err != nil {
			return nil, err
		}
		k.mu.Lock()
		k.lostRev = resp.Header.Revision
		k.mu.Unlock()
		return nil, kvfake.ErrAnswerLost
	})
}

func (k *lossyKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if k.refused(key) {
		return nil, kvfake.ErrRefused
	}
	if key == k.key && k.held() {
		k.stuck.block()
		return nil, rpctypes.ErrGRPCLeaderChanged
	}
	return k.KV.Get(ctx, key, opts...)
}

// withoutKeeper hides a store's location.OwnerLeaseKeeper: the session
// renews with RenewOwnerLease.
type withoutKeeper struct{ location.OwnerLeaseStore }

// Issue 12 on etcd: a renewal write whose answer is lost is resolved by
// re-reading (txn.Engine.Send), and the resolution's reads may hang (here
// until the test frees them; the store's resolve timeout is an hour). The
// session's Done still closes at its trust deadline, by the session's own
// clock within [TTL − margin, TTL − margin + RenewTimeout] of the last
// confirmed renewal; the write in flight is waited for by Stopped and
// Close, which then releases. Both renewal paths: the first, marking
// renewal of the keeper (KeepOwnerLease, sent right after the claim), and
// RenewOwnerLease (one renewal interval after it).
func TestEtcdLostRenewalAnswerDoesNotDelayDone(t *testing.T) {
	opts := session.Options{TTL: time.Minute, RenewInterval: 10 * time.Second, RenewTimeout: 5 * time.Second,
		FencingMargin: 20 * time.Second}
	trusted := opts.TTL - opts.FencingMargin
	for _, tc := range []struct {
		name  string
		wrap  func(*etcdstore.Store) location.OwnerLeaseStore
		first time.Duration // when the first renewal is sent, after the claim
	}{
		{name: "KeepOwnerLease", wrap: func(s *etcdstore.Store) location.OwnerLeaseStore { return s }},
		{name: "RenewOwnerLease", wrap: func(s *etcdstore.Store) location.OwnerLeaseStore { return withoutKeeper{s} },
			first: opts.RenewInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := etcdtest.Connect(t)
			kv := &lossyKV{KV: client.KV, stuck: newStuckCall()}
			t.Cleanup(kv.free)
			es, err := etcdstore.New(client, etcdstore.Options{Root: etcdtest.UniquePrefix(t), KV: kv, ResolveTimeout: time.Hour})
			require.NoError(t, err)
			kv.key = es.Layout().OwnerKey("a")
			clk := clock.NewManual(t0)
			o := opts
			o.Clock = clk
			o.OnRenewal = func(r session.Renewal) {
				if r.Kind == location.KindClaimed {
					kv.arm() // the first renewal's write applies, its answer is lost
				}
			}
			s, err := session.New(t.Context(), tc.wrap(es), "a", o)
			require.NoError(t, err)

			if tc.first > 0 {
				sleeping(t, clk)
				clk.Advance(tc.first)
			}
			waitClosed(t, kv.stuck.entered, "the resolution's read")
			require.True(t, s.Valid())
			clk.Advance(trusted - tc.first) // the trust deadline; the attempt's timeout passed on the way
			select {
			case <-s.Done():
			default:
				t.Fatal("Done did not close at the trust deadline: it waits for the renewal's resolution")
			}
			closedAt := clk.Now()
			st := s.Status()
			require.ErrorIs(t, s.Err(), session.ErrDeadlinePassed)
			require.Equal(t, closedAt, st.EndedAt)
			gap := closedAt.Sub(st.LastRenewal)
			require.GreaterOrEqual(t, gap, trusted, "not before the deadline")
			require.LessOrEqual(t, gap, trusted+opts.RenewTimeout, "within TTL − margin + one renew timeout")
			requireOpen(t, s.Stopped(), "Stopped closed while the resolution's read hangs")

			kv.free()
			waitClosed(t, s.Stopped(), "Stopped once the resolution returned")
			require.NoError(t, s.Close(t.Context()))
			require.Equal(t, location.KindMissing, readLease(t, es, "a").Kind, "Close released the lease")
		})
	}
}

// Issue 12: a claim whose answer was lost and whose resolution failed left
// a lease the session could not name; New failed with ErrOutcomeUnknown,
// and every later claim of the owner id conflicted with that lease until
// it expired. New now tries such a claim again, and first asks etcdstore
// (a location.OwnerLeaseClaimSettler) to settle it: the owner key carries
// the lost claim's nonce, so the lease is the session's, with the
// generation the lost claim created. A later New on the same store (a
// mesh node's next join) settles it too when the first New gave up.
func TestEtcdClaimWhoseOutcomeIsUnknownIsSettled(t *testing.T) {
	tests := []struct {
		name string
		// laterNew: the reads stay refused until the first New has given
		// up (its context cancelled after its second attempt); a second
		// New settles the claim.
		laterNew bool
	}{
		{name: "by the same New"},
		{name: "by a later New", laterNew: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := etcdtest.Connect(t)
			kv := &lossyKV{KV: client.KV, stuck: newStuckCall(), armed: true, refuse: 1}
			if tc.laterNew {
				kv.refuse = 1 << 30
			}
			es, err := etcdstore.New(client, etcdstore.Options{Root: etcdtest.UniquePrefix(t), KV: kv})
			require.NoError(t, err)
			kv.key = es.Layout().OwnerKey("a")
			var mu sync.Mutex
			var claims []session.Renewal
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			opts := quickOptions()
			opts.TTL = 10 * time.Second // the lost claim's lease outlives a loaded machine's retries
			opts.OnRenewal = func(r session.Renewal) {
				if r.Kind == location.KindClaimed || r.Token == (location.OwnerToken{}) {
					mu.Lock()
					defer mu.Unlock()
					claims = append(claims, r)
					if tc.laterNew && len(claims) == 2 {
						cancel()
					}
				}
			}
			if tc.laterNew {
				_, err := session.New(ctx, es, "a", opts)
				require.ErrorIs(t, err, location.ErrUnavailable, "the last attempt's error: its settlement could not read")
				require.ErrorContains(t, err, "settle a claim whose outcome is unknown")
				require.ErrorIs(t, ctx.Err(), context.Canceled)
				mu.Lock()
				require.Len(t, claims, 2)
				require.ErrorIs(t, claims[0].Err, location.ErrOutcomeUnknown, "the first claim's answer was lost, unresolved")
				require.ErrorIs(t, claims[1].Err, location.ErrUnavailable, "the settlement could not read")
				claims = nil
				mu.Unlock()
				kv.mu.Lock()
				kv.refuse = 0
				kv.mu.Unlock()
			}
			s, err := session.New(t.Context(), es, "a", opts)
			require.NoError(t, err)
			defer s.Close(context.Background())

			mu.Lock()
			defer mu.Unlock()
			if tc.laterNew {
				require.Len(t, claims, 1)
			} else {
				require.Len(t, claims, 2)
				require.ErrorIs(t, claims[0].Err, location.ErrOutcomeUnknown, "the first claim's answer was lost, unresolved")
			}
			require.Equal(t, location.KindClaimed, claims[len(claims)-1].Kind)
			kv.mu.Lock()
			lostRev := kv.lostRev
			kv.mu.Unlock()
			require.Positive(t, lostRev)
			require.Equal(t, location.OwnerToken{OwnerID: "a", LeaseGeneration: lostRev}, s.Token(),
				"the lease the lost claim created is the session's")
			require.Equal(t, s.Token(), readLease(t, es, "a").Token)
		})
	}
}
