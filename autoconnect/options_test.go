package autoconnect

import (
	"context"
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
		"negative_polling":   {PollingInterval: ms(-1)},
		"negative_page_size": {ListPageSize: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := o.resolve()
			require.ErrorIs(t, err, location.ErrInvalidArgument)
		})
	}
}

// TestPollingIntervalZero: the framework's lease tracker accepts a polling
// interval of 0 and then reads the owner lease on every check (issue 12,
// finding 6); a Loop cannot tick back to back and refuses it
// (docs/deviations.md).
func TestPollingIntervalZero(t *testing.T) {
	ctx := context.Background()
	zero := Options{PollingInterval: ms(0)}
	got, err := zero.resolve()
	require.NoError(t, err)
	require.Zero(t, got.pollingInterval)

	t.Run("tracker_reads_on_every_check", func(t *testing.T) {
		store, clock := newFakeLeaseStore(), newFakeClock()
		store.set("x", found(15_000))
		lt, err := NewLeaseTracker(LeaseTrackerOptions{Store: store, Options: zero, Clock: clock})
		require.NoError(t, err)
		for i := 1; i <= 3; i++ {
			requireLive(t, ctx, lt, "x", true)
			require.Equal(t, i, store.count("x"), "no time passed, read again")
		}
		v, err := lt.LiveOwnerSetVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), v)
		require.Equal(t, 4, store.count("x"))
	})
	t.Run("reconciler_and_source_accept_it", func(t *testing.T) {
		_, err := NewReconciler(ReconcilerOptions{Executor: wrapPlain(newFakeExec(&recorder{})), Source: &fakeSource{}, Options: zero})
		require.NoError(t, err)
		lt := newTracker(t, newFakeLeaseStore(), newFakeClock(), 0)
		_, err = NewMeshNodeSource(&fakeMeshNodes{}, lt, zero)
		require.NoError(t, err)
	})
	t.Run("loop_refuses_it", func(t *testing.T) {
		_, err := NewLoop(LoopOptions{Reconciler: newFakeLoopRec(&recorder{}), Options: zero})
		require.ErrorIs(t, err, location.ErrInvalidArgument)
		ie, ok := location.AsInputError(err)
		require.True(t, ok)
		require.Equal(t, "autoconnect.polling_interval", ie.Code)
		require.Equal(t, location.ClassRange, ie.Class)
	})
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
		_ PeerPublisher      = s
		_ OwnerRetainer      = (*LeaseTracker)(nil)
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
