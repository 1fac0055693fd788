package meshnode_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/meshnode"
)

// claimHoldStore is a wrapStore whose peer-row claims (UpdatePeer
// NewClaim) fail as unreachable, nothing applied, while failClaims is set,
// and whose next claim once hold is set waits until release is closed or
// its context ends; the test receives that context on entered. A held
// claim whose context ends answers location.ErrOutcomeUnknown and is
// applied later, as etcd may apply a write its caller gave up on: right
// after the next RemoveAllByOwner (past its scan of the owner's rows, the
// lease still live). loopEnded closes when the first change watch's
// context (the node's loop's) ends.
type claimHoldStore struct {
	*wrapStore
	failClaims, hold atomic.Bool
	entered          chan context.Context
	release          chan struct{}
	loopEnded        chan struct{}
	watchOnce        sync.Once

	mu   sync.Mutex
	late func()
}

func newClaimHoldStore(w *wrapStore) *claimHoldStore {
	return &claimHoldStore{wrapStore: w, entered: make(chan context.Context, 1), release: make(chan struct{}),
		loopEnded: make(chan struct{})}
}

func (s *claimHoldStore) UpdatePeer(ctx context.Context, p location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	if intent == location.IntentNewClaim {
		switch {
		case s.hold.CompareAndSwap(true, false):
			s.entered <- ctx
			select {
			case <-s.release:
			case <-ctx.Done():
				s.mu.Lock()
				s.late = func() { _, _ = s.wrapStore.UpdatePeer(context.Background(), p, intent) }
				s.mu.Unlock()
				return location.WriteResult{}, fmt.Errorf("test: claim cancelled on its way: %w: %w", location.ErrOutcomeUnknown, context.Cause(ctx))
			}
		case s.failClaims.Load():
			return location.WriteResult{}, fmt.Errorf("test: claim refused: %w", location.ErrUnavailable)
		}
	}
	return s.wrapStore.UpdatePeer(ctx, p, intent)
}

func (s *claimHoldStore) RemoveAllByOwner(ctx context.Context, t location.OwnerToken) (int64, error) {
	n, err := s.wrapStore.RemoveAllByOwner(ctx, t)
	s.mu.Lock()
	late := s.late
	s.late = nil
	s.mu.Unlock()
	if late != nil {
		late()
	}
	return n, err
}

func (s *claimHoldStore) WatchChanges(ctx context.Context, tables ...location.Table) (<-chan struct{}, error) {
	ch, err := s.wrapStore.WatchChanges(ctx, tables...)
	s.watchOnce.Do(func() { context.AfterFunc(ctx, func() { close(s.loopEnded) }) })
	return ch, err
}

// A Leave while the loop's tick is creating the node's peer row (a claim:
// the first one failed) lets that write finish before it removes the
// node's rows, so none is left; a claim cancelled on its way could be
// applied after the owner's bulk removal.
func TestLeaveLetsThePeerRowClaimFinish(t *testing.T) {
	m := newMesh(t)
	s := newClaimHoldStore(newWrapStore(m.mem))
	s.failClaims.Store(true)
	a := m.join("node-a", func(o *meshnode.Options) { o.Store, o.PublishPeerRow = s, true })
	require.False(t, a.node.State().PeerRowPublished, "Start's claim failed")
	s.hold.Store(true)
	s.failClaims.Store(false)
	before := len(s.writes())

	m.join("node-b", nil) // a change: node-a's loop ticks and claims its row
	var held context.Context
	select {
	case held = <-s.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("node-a's loop did not claim its peer row")
	}
	left := make(chan error, 1)
	go func() { left <- a.node.Leave(m.ctx) }()
	select {
	case <-s.loopEnded:
	case <-time.After(20 * time.Second):
		t.Fatal("Leave did not stop the loop")
	}
	assert.NoError(t, held.Err(), "Leave does not cancel the claim in flight")
	close(s.release)
	require.NoError(t, <-left)

	tok := a.node.Incarnation().Token
	require.Equal(t, []string{
		"UpdatePeer NewClaim:stored",
		"RemovePeer",
		fmt.Sprintf("RemoveAllByOwner node-a/%d:1", tok.LeaseGeneration), // the descriptor
		fmt.Sprintf("ReleaseOwnerLease node-a/%d", tok.LeaseGeneration),
	}, s.writes()[before:])
	peers, err := m.mem.ListPeers(m.ctx, location.PeerFilter{NodeRID: ridOf("node-a")})
	require.NoError(t, err)
	require.Empty(t, peers, "no peer row of node-a is left")
	page, err := m.mem.ListMeshNodes(m.ctx, testMesh, location.PageRequest{PageSize: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, location.RoutingID("node-b"), page.Items[0].RID)
}
