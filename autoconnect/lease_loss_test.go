package autoconnect

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// TestLeaseLossAndRejoin walks the hooks a node type uses around its owner
// lease (see the package doc, "Shutdown and lease loss"): when the lease is
// lost, PrepareTransportShutdown stops acting on it at once (every peer
// disconnected, no store write); a new Reconciler and Loop then run under
// the next lease and lifecycle generation and take the node's peer row
// over; a graceful leave is Stop, RemoveAllByOwner, ReleaseOwnerLease.
func TestLeaseLossAndRejoin(t *testing.T) {
	f := newMemFix(t)
	f.claim("oa")
	f.claim("ob")
	f.meshNode("oa", "node-a", "tcp://a:1", 1, location.StateServing, location.IntentNewClaim)
	f.meshNode("ob", "node-b", "tcp://b:1", 1, location.StateServing, location.IntentNewClaim)
	pub := &lossyPublisher{Store: f.store}
	rec := &recorder{}
	exec := newFakeExec(rec)
	start := func() (*Reconciler, *Loop) {
		t.Helper()
		src, err := NewMeshNodeSource(f.store, f.lt, Options{})
		require.NoError(t, err)
		lr := router("oa", "node-a", "tcp://a:1")
		r, err := NewReconciler(ReconcilerOptions{
			Local: local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"), LocalRow: &lr,
			Publisher: pub, Source: src, Executor: wrapFull(exec), Clock: f.mono, Logger: discardLogger(),
		})
		require.NoError(t, err)
		l, err := NewLoop(LoopOptions{
			Reconciler: r, MeshName: testMesh, Stamps: f.store, LiveOwners: f.lt, DisableWatch: true,
			Clock: f.mono, Logger: discardLogger(),
		})
		require.NoError(t, err)
		require.NoError(t, l.Start(f.ctx))
		return r, l
	}

	r1, l1 := start()
	require.True(t, r1.LocalPublicationReady())
	require.Equal(t, []string{"connect:tcp://b:1:ob"}, rec.only("connect", "disconnect"))

	// The lease is lost (revoked by an operator, or expired in an outage).
	_, err := f.store.ReleaseOwnerLease(f.ctx, f.tok["oa"])
	require.NoError(t, err)
	writes, _ := pub.log()
	l1.PrepareTransportShutdown()
	require.Equal(t, []string{"connect:tcp://b:1:ob", "disconnect:tcp://b:1:ob"}, rec.only("connect", "disconnect"))
	after, _ := pub.log()
	require.Equal(t, writes, after, "no store write with the dead lease")
	require.Equal(t, []string{"oa"}, ownersOfRows(f.peerRows()), "the row stays: the next incarnation takes it over")
	require.ErrorIs(t, l1.Start(f.ctx), ErrLoopStopped)

	// Rejoin under the next lease and lifecycle generation.
	f.claim("oa")
	f.meshNode("oa", "node-a", "tcp://a:1", 2, location.StateServing, location.IntentNewClaim)
	r2, l2 := start()
	require.True(t, r2.LocalPublicationReady(), "the row of the lost lease is adopted")
	writes, _ = pub.log()
	require.Equal(t, []string{"NewClaim:stored", "NewClaim:rejectedConflict", "Renew:stored"}, writes)
	require.Equal(t, []string{"connect:tcp://b:1:ob", "disconnect:tcp://b:1:ob", "connect:tcp://b:1:ob"}, rec.only("connect", "disconnect"))

	// Graceful leave, in this order (releasing first would make the bulk
	// removal a no-op).
	require.NoError(t, l2.Stop(f.ctx))
	removed, err := f.store.RemoveAllByOwner(f.ctx, f.tok["oa"])
	require.NoError(t, err)
	require.Equal(t, int64(1), removed, "the descriptor (Stop removed the peer row)")
	kind, err := f.store.ReleaseOwnerLease(f.ctx, f.tok["oa"])
	require.NoError(t, err)
	require.Equal(t, location.KindReleased, kind)
	require.Empty(t, f.peerRows())
}
