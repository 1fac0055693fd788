package autoconnect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestOptions(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		got, err := Options{}.resolve()
		require.NoError(t, err)
		require.Equal(t, timing{
			ownerLeaseTTL: 15 * time.Second, pollingInterval: time.Second,
			storeFailureGrace: 30 * time.Second, listPageSize: 1000,
		}, got)
	})
	t.Run("explicit_zero_is_not_default", func(t *testing.T) {
		got, err := Options{OwnerLeaseTTL: ms(0), StoreFailureGrace: ms(0), PollingInterval: ms(5), ListPageSize: 7}.resolve()
		require.NoError(t, err)
		require.Equal(t, timing{pollingInterval: 5 * time.Millisecond, listPageSize: 7}, got)
	})
	for name, o := range map[string]Options{
		"negative_ttl":       {OwnerLeaseTTL: ms(-1)},
		"zero_polling":       {PollingInterval: ms(0)},
		"negative_page_size": {ListPageSize: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := o.resolve()
			require.ErrorIs(t, err, location.ErrInvalidArgument)
		})
	}
}

func TestConstructorsRejectMissingParts(t *testing.T) {
	exec := wrapPlain(newFakeExec(&recorder{}))
	cases := map[string]func() error{
		"reconciler_without_executor": func() error { _, err := NewReconciler(ReconcilerOptions{Source: &fakeSource{}}); return err },
		"reconciler_without_source":   func() error { _, err := NewReconciler(ReconcilerOptions{Executor: exec}); return err },
		"reconciler_row_without_publisher": func() error {
			_, err := NewReconciler(ReconcilerOptions{Executor: exec, Source: &fakeSource{}, LocalRow: localRowA()})
			return err
		},
		"reconciler_bad_options": func() error {
			_, err := NewReconciler(ReconcilerOptions{Executor: exec, Source: &fakeSource{}, Options: Options{PollingInterval: ms(-1)}})
			return err
		},
		"loop_without_reconciler": func() error { _, err := NewLoop(LoopOptions{}); return err },
		"loop_negative_retry": func() error {
			_, err := NewLoop(LoopOptions{Reconciler: newFakeLoopRec(&recorder{}), WatchRetryDelay: -time.Second})
			return err
		},
		"tracker_without_store":     func() error { _, err := NewLeaseTracker(LeaseTrackerOptions{}); return err },
		"peer_source_without_parts": func() error { _, err := NewPeerRowSource(nil, nil); return err },
		"mesh_source_without_parts": func() error { _, err := NewMeshNodeSource(nil, nil, Options{}); return err },
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, build(), location.ErrInvalidArgument)
		})
	}
	t.Run("publish_only_needs_no_source", func(t *testing.T) {
		_, err := NewReconciler(ReconcilerOptions{Executor: exec, PublishOnly: true})
		require.NoError(t, err)
	})
}

func TestSystemClock(t *testing.T) {
	c := SystemClock()
	a := c.Now()
	require.GreaterOrEqual(t, c.Now(), a)
	tm := c.NewTimer(time.Hour)
	require.True(t, tm.Stop())
	require.False(t, tm.Stop())
}

// TestStorePorts checks that the location interfaces satisfy the small ports.
func TestStorePorts(t *testing.T) {
	var s location.Store
	var (
		_ PeerWriter         = s
		_ PeerLister         = s
		_ MeshNodeLister     = s
		_ OwnerLeaseReader   = s
		_ LivenessChecker    = (*LeaseTracker)(nil)
		_ LiveOwnerVersioner = (*LeaseTracker)(nil)
		_ LoopReconciler     = (*Reconciler)(nil)
		_ WatchableSource    = (*Reconciler)(nil)
		_ WatchableSource    = (*PeerRowSource)(nil)
		_ WatchableSource    = (*MeshNodeSource)(nil)
	)
}
