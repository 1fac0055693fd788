package autoconnect

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// LoopOptions.OnTick reports every tick: when it started, how long it ran,
// whether it was skipped (nothing moved) and the store-failure state; the
// reconciler's DesiredTargets is the last listing's desired set.
func TestTickReportsAndDesiredTargets(t *testing.T) {
	f := newMemFix(t)
	f.claim("oa")
	f.claim("ob")
	f.meshNode("ob", "node-b", "tcp://b:1", 1, location.StateServing, location.IntentNewClaim)
	src, err := NewMeshNodeSource(f.store, f.lt, Options{})
	require.NoError(t, err)
	r, err := NewReconciler(ReconcilerOptions{
		Local:  local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a:1"),
		Source: src, Executor: wrapPlain(newFakeExec(&recorder{})), Clock: f.mono, Logger: discardLogger(),
	})
	require.NoError(t, err)
	require.Empty(t, r.DesiredTargets(), "before the first listing")
	var reports []TickReport
	l, err := NewLoop(LoopOptions{
		Reconciler: r, MeshName: testMesh, Stamps: f.store, LiveOwners: f.lt, DisableWatch: true,
		Clock: f.mono, Logger: discardLogger(), OnTick: func(tr TickReport) { reports = append(reports, tr) },
	})
	require.NoError(t, err)

	f.mono.Advance(5 * time.Second)
	require.NoError(t, l.Tick(f.ctx))
	require.NoError(t, l.Tick(f.ctx))
	require.Equal(t, []TickReport{
		{Started: 5 * time.Second},
		{Started: 5 * time.Second, Skipped: true},
	}, reports)
	desired := r.DesiredTargets()
	require.Len(t, desired, 1)
	require.Equal(t, "tcp://b:1", desired[0].Endpoint)
	require.Equal(t, desired, r.ActiveTargets())

	f.claim("oc")
	f.meshNode("oc", "node-c", "tcp://c:1", 1, location.StateServing, location.IntentNewClaim) // the stamp moves
	r.source = failingLister{}
	require.NoError(t, l.Tick(f.ctx))
	require.Equal(t, TickReport{Started: 5 * time.Second, StoreFailed: true}, reports[2])
	require.Equal(t, desired, r.DesiredTargets(), "a store failure keeps the last desired set")
}

// failingLister is a PeerSource whose listings fail.
type failingLister struct{}

// ListLivePeers implements PeerSource.
func (failingLister) ListLivePeers(_ context.Context, _ location.PeerFilter) ([]location.PeerLocation, error) {
	return nil, testError("listing failed")
}
