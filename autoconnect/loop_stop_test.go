package autoconnect

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// heldClaimStore is a memstore whose next claim of a peer row (UpdatePeer
// with NewClaim: a create when the row is absent), once armed, waits until
// the test closes release or the call's context ends; the test receives
// that context on entered. A held claim whose context ends answers
// location.ErrOutcomeUnknown without applying the write. It logs the peer
// row writes: "<intent>:<status>" and "RemovePeer:<row generation>:<status>".
type heldClaimStore struct {
	*memstore.Store
	entered chan context.Context
	release chan struct{}

	mu     sync.Mutex
	armed  bool
	writes []string
}

func newHeldClaimStore(s *memstore.Store) *heldClaimStore {
	return &heldClaimStore{Store: s, entered: make(chan context.Context, 1), release: make(chan struct{})}
}

// arm makes the next claim wait.
func (s *heldClaimStore) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
}

// note logs one write.
func (s *heldClaimStore) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, fmt.Sprintf(format, args...))
}

// log returns the writes so far.
func (s *heldClaimStore) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

// UpdatePeer implements PeerWriter.
func (s *heldClaimStore) UpdatePeer(ctx context.Context, row location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	s.mu.Lock()
	hold := s.armed && intent == location.IntentNewClaim
	s.armed = s.armed && !hold
	s.mu.Unlock()
	if hold {
		s.entered <- ctx
		select {
		case <-s.release:
		case <-ctx.Done():
			s.note("%s:cancelled", intent)
			return location.WriteResult{}, fmt.Errorf("test: claim cancelled while held: %w: %w", location.ErrOutcomeUnknown, context.Cause(ctx))
		}
	}
	res, err := s.Store.UpdatePeer(ctx, row, intent)
	s.note("%s:%s", intent, res.Status)
	return res, err
}

// RemovePeer implements PeerWriter.
func (s *heldClaimStore) RemovePeer(ctx context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	res, err := s.Store.RemovePeer(ctx, k, owner)
	s.note("RemovePeer:%d:%s", owner.LeaseGeneration, res.Status)
	return res, err
}

// loopEndWatcher is a ChangeWatcher that reports no change; ended closes
// when the watch's context (the loop's: both stops cancel it first) ends.
type loopEndWatcher struct {
	ended chan struct{}
}

// WatchChanges implements location.ChangeWatcher.
func (w *loopEndWatcher) WatchChanges(ctx context.Context, _ ...location.Table) (<-chan struct{}, error) {
	ch := make(chan struct{})
	context.AfterFunc(ctx, func() {
		close(ch)
		close(w.ended)
	})
	return ch, nil
}

// drainFix is a started loop of node-a (owner oa, tcp://a:1), which
// publishes its peer row through a heldClaimStore over a memstore and
// lists the peer table; owner ob's node-b is published there too.
type drainFix struct {
	*memFix
	held  *heldClaimStore
	watch *loopEndWatcher
	loop  *Loop

	mu    sync.Mutex
	ticks []TickReport
}

func newDrainFix(t *testing.T) *drainFix {
	f := &drainFix{memFix: newMemFix(t), watch: &loopEndWatcher{ended: make(chan struct{})}}
	f.held = newHeldClaimStore(f.store)
	f.claim("oa")
	f.claim("ob")
	res, err := f.store.UpdatePeer(f.ctx, router("ob", "node-b", "tcp://b:1"), location.IntentNewClaim)
	require.NoError(t, err)
	require.Equal(t, location.Stored, res.Status)
	src, err := NewPeerRowSource(f.store, f.lt)
	require.NoError(t, err)
	lr := router("oa", "node-a", "tcp://a:1")
	r, err := NewReconciler(ReconcilerOptions{
		Local: local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"), LocalRow: &lr,
		Publisher: f.held, Source: src, Executor: wrapFull(newFakeExec(&recorder{})), Clock: f.mono, Logger: discardLogger(),
	})
	require.NoError(t, err)
	f.loop, err = NewLoop(LoopOptions{
		Reconciler: r, Watcher: f.watch, WatchTables: []location.Table{location.TablePeers},
		Clock: f.mono, Logger: discardLogger(), OnTick: f.onTick,
	})
	require.NoError(t, err)
	// A failed test must not leave a claim held: the prompt stop cancels it.
	t.Cleanup(f.loop.PrepareTransportShutdown)
	require.NoError(t, f.loop.Start(f.ctx))
	require.Equal(t, []string{"NewClaim:stored"}, f.held.log())
	return f
}

// onTick is the loop's OnTick.
func (f *drainFix) onTick(r TickReport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ticks = append(f.ticks, r)
}

// tickErrs returns the errors of the ticks so far.
func (f *drainFix) tickErrs() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := make([]error, len(f.ticks))
	for i, r := range f.ticks {
		errs[i] = r.Err
	}
	return errs
}

// holdClaim removes node-a's row by hand and runs a polled tick, which
// claims the row again (a create) and is held there; it returns the held
// claim's context. A tick request is left pending.
func (f *drainFix) holdClaim() context.Context {
	f.t.Helper()
	_, err := f.store.RemovePeer(f.ctx, location.PeerKey{
		AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter, NodeRID: rid("node-a"),
	}, location.OwnerToken{OwnerID: "oa", LeaseGeneration: 1})
	require.NoError(f.t, err)
	f.held.arm()
	f.mono.waitArmed(f.t)
	f.mono.Advance(time.Second)
	var ctx context.Context
	select {
	case ctx = <-f.held.entered:
	case <-time.After(waitLimit):
		f.t.Fatal("the polled tick did not claim the local row")
	}
	f.loop.requestTick()
	return ctx
}

// waitClosed waits until ch is closed; what names the event in the failure.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("%s did not happen", what)
	}
}

// Stop lets the tick in flight finish: a claim of the local row (a create)
// cancelled on its way could still be applied by the store after the row
// was removed, and would stay. Its context is cancelled only when Stop's
// context ends first; no tick starts once Stop began (not the pending tick
// request, nor a timer). PrepareTransportShutdown, the prompt stop,
// cancels the tick at once and writes nothing.
func TestLoopStopDrainsTick(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prompt stops with PrepareTransportShutdown instead of Stop.
		prompt bool
		// cancelStop ends Stop's context while the claim is held (else
		// the claim is released).
		cancelStop bool
		// wantWrites are the peer-row writes after Start's claim.
		wantWrites []string
		// wantErr is what Stop's error wraps (nil: no error).
		wantErr error
		// wantTickErr is what the held tick's error wraps (nil: no error).
		wantTickErr error
	}{
		{
			name:       "AC-L12_stop_waits_for_in_flight_tick",
			wantWrites: []string{"NewClaim:stored", "RemovePeer:2:stored"},
		},
		{
			name: "stop_context_ends", cancelStop: true,
			wantWrites: []string{"NewClaim:cancelled"}, wantErr: context.Canceled, wantTickErr: context.Canceled,
		},
		{
			name: "prepare_transport_shutdown", prompt: true,
			wantWrites: []string{"NewClaim:cancelled"}, wantTickErr: context.Canceled,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDrainFix(t)
			held := f.holdClaim()
			stopCtx, cancelStop := context.WithCancel(context.Background())
			defer cancelStop()
			stopped := make(chan error, 1)
			if tc.prompt {
				go func() {
					f.loop.PrepareTransportShutdown()
					stopped <- nil
				}()
				waitClosed(t, held.Done(), "the prompt stop cancelling the tick")
			} else {
				go func() { stopped <- f.loop.Stop(stopCtx) }()
				waitClosed(t, f.watch.ended, "Stop ending the loop's context")
				require.NoError(t, held.Err(), "Stop does not cancel the tick in flight")
				select {
				case err := <-stopped:
					t.Fatalf("Stop returned (%v) before the tick in flight", err)
				default:
				}
				if tc.cancelStop {
					cancelStop()
					waitClosed(t, held.Done(), "the tick's cancellation once Stop's context ended")
				} else {
					close(f.held.release)
				}
			}
			var err error
			select {
			case err = <-stopped:
			case <-time.After(waitLimit):
				t.Fatal("the loop did not stop")
			}
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.ErrorContains(t, err, "the tick in flight was cancelled before it returned")
			} else {
				require.NoError(t, err)
			}

			require.Equal(t, append([]string{"NewClaim:stored"}, tc.wantWrites...), f.held.log())
			require.Equal(t, []string{"ob"}, ownersOfRows(f.peerRows()), "node-a's row is gone (removed, or never claimed again)")
			errs := f.tickErrs()
			require.Len(t, errs, 2, "Start's tick and the held one: none after it")
			require.NoError(t, errs[0])
			if tc.wantTickErr != nil {
				require.ErrorIs(t, errs[1], tc.wantTickErr)
			} else {
				require.NoError(t, errs[1])
			}
			f.mono.requireNoArmed(t) // no timer armed for a next tick
			require.ErrorIs(t, f.loop.Start(f.ctx), ErrLoopStopped)
		})
	}
}
