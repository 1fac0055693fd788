package etcdobserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/observe"
)

// connectAll is an executor whose connections always succeed.
type connectAll struct{}

func (connectAll) Connect(context.Context, autoconnect.Target) bool { return true }
func (connectAll) Disconnect(autoconnect.Target)                    {}

// A node's auto-connect loop, wired to NodeMetrics with its hooks, reports
// its ticks, what they connected and how many targets are connected: the
// mesh converges in one tick, and the next one is skipped.
func TestAutoConnectLoop(t *testing.T) {
	in := newInstrumented(t)
	ctx := t.Context()
	nm, err := observe.NewNodeMetrics(in.reg, observe.NodeOptions{})
	require.NoError(t, err)
	const mesh = "play"
	for _, node := range []struct{ owner, endpoint string }{{"a", "tcp://127.0.0.1:1000"}, {"b", "tcp://127.0.0.1:2000"}} {
		owner := node.owner
		claim := storetest.Claim(t, ctx, in.store, owner, time.Minute)
		res, err := in.store.UpdateMeshNode(ctx, location.MeshNodeDescriptor{
			MeshName: mesh, RID: location.RoutingID("node-" + owner), LifecycleGeneration: 1, DescriptorRevision: 1,
			Endpoint: node.endpoint, ObjectRole: location.RoleServer, PlacementWeight: 100,
			ActivationConcurrency: location.ActivationConcurrency{Limit: 10}, State: location.StateServing,
			SecurityIdentity: "plaintext", OwnerID: owner, LeaseGeneration: claim.LeaseGeneration,
		}, location.IntentNewClaim)
		require.NoError(t, err)
		require.Equal(t, location.Stored, res.Status)
	}

	interval := time.Second
	timing := autoconnect.Options{PollingInterval: &interval}
	tracker, err := autoconnect.NewLeaseTracker(autoconnect.LeaseTrackerOptions{Store: in.store, Options: timing})
	require.NoError(t, err)
	source, err := autoconnect.NewMeshNodeSource(in.store, tracker, timing)
	require.NoError(t, err)
	rid := location.RoutingID("node-a")
	rec, err := autoconnect.NewReconciler(autoconnect.ReconcilerOptions{
		Local: autoconnect.Local{AutoConnectType: location.AutoConnectRouteMesh, MeshName: mesh, Role: location.PeerRoleRouter,
			NodeRID: &rid, Endpoint: "tcp://127.0.0.1:1000", ObjectRole: location.RoleServer},
		Source: source, Executor: connectAll{}, Events: nm, Options: timing,
	})
	require.NoError(t, err)
	loop, err := autoconnect.NewLoop(autoconnect.LoopOptions{Reconciler: rec, MeshName: mesh, Stamps: in.store, LiveOwners: tracker,
		DisableWatch: true, Options: timing, OnTick: nm.OnTick})
	require.NoError(t, err)
	nm.SetAutoConnect(observe.ReconcilerStatus(rec))

	require.NoError(t, loop.Tick(ctx))
	require.Equal(t, 1.0, in.value(t, "zlink_autoconnect_ticks_total", "result", "reconciled"))
	require.Equal(t, 1.0, in.value(t, "zlink_autoconnect_connects_total"), "node-a dials node-b")
	require.Equal(t, 1.0, in.value(t, "zlink_autoconnect_connected_targets"))
	require.Equal(t, 0.0, in.value(t, "zlink_autoconnect_store_failed"))
	require.NoError(t, health.AutoConnectCheck(rec).Run(ctx))

	require.NoError(t, loop.Tick(ctx))
	require.Equal(t, 1.0, in.value(t, "zlink_autoconnect_ticks_total", "result", "skipped"), "nothing changed")
	require.Equal(t, 2.0, in.value(t, "zlink_autoconnect_tick_duration_seconds"))
	require.Equal(t, 1.0, in.value(t, "zlink_autoconnect_connects_total"))
	require.Positive(t, in.value(t, "zlink_store_operations_total", "operation", "GetMeshNodeChangeStamp"), "the ticks' store calls are operations too")
}
