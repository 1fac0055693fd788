package autoconnect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// cancellingSource cancels the tick's context during the listing, as a loop
// stopping mid-tick does, and answers with the context's error.
type cancellingSource struct {
	inner  PeerSource
	cancel context.CancelFunc
}

func (s *cancellingSource) ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	if s.cancel == nil {
		return s.inner.ListLivePeers(ctx, f)
	}
	s.cancel()
	return nil, ctx.Err()
}

// A tick abandoned because its own context ended is not a store failure:
// the local row stays believed published, so shutdown still removes it.
func TestAbandonedTickKeepsPublication(t *testing.T) {
	f := newMemFix(t)
	f.claim("oa")
	rows, err := NewPeerRowSource(f.store, f.lt)
	require.NoError(t, err)
	src := &cancellingSource{inner: rows}
	lr := router("oa", "node-a", "tcp://a:1")
	r, err := NewReconciler(ReconcilerOptions{
		Local: local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"), LocalRow: &lr,
		Publisher: f.store, Source: src, Executor: wrapFull(newFakeExec(&recorder{})), Clock: f.mono, Logger: discardLogger(),
	})
	require.NoError(t, err)
	require.NoError(t, r.Tick(f.ctx))
	require.True(t, r.LocalPublicationReady())

	tickCtx, cancel := context.WithCancel(f.ctx)
	src.cancel = cancel
	err = r.Tick(tickCtx)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, r.StoreFailed(), "an abandoned tick says nothing about the store")
	require.True(t, r.LocalPublicationReady())

	require.NoError(t, r.Shutdown(f.ctx))
	require.Empty(t, f.peerRows(), "shutdown removed the local row")
}
