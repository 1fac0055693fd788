package autoconnect

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Internals of the tracker's per-tick reads: the tick's answers, and the
// bound on concurrent reads.

func TestTickReads(t *testing.T) {
	ctx := context.Background()

	t.Run("within_a_tick", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 0)
		store.set("x", found(15_000))
		tctx := withTickReads(ctx)
		for range 3 {
			requireLive(t, tctx, lt, "x", true)
			requireLive(t, tctx, lt, "dead", false)
		}
		require.Equal(t, []int{1, 1}, readCounts(store, "x", "dead"), "one read per owner in the tick, missing ones too")
		lt.InvalidateLiveness()
		_, err := lt.IsOwnerLive(tctx, "dead")
		require.NoError(t, err)
		require.Equal(t, 2, store.count("dead"), "a change notification makes the tick's answers stale")
		_, err = lt.IsOwnerLive(ctx, "dead")
		require.NoError(t, err)
		require.Equal(t, 3, store.count("dead"), "outside a tick, missing owners are read on every check")
	})

}

func TestConcurrentLeaseReads(t *testing.T) {
	ctx := context.Background()
	store, _, lt := newFakeTracker(t, 1000)
	owners := make([]string, 20)
	for i := range owners {
		owners[i] = fmt.Sprintf("o%02d", i)
		store.set(owners[i], found(15_000))
	}
	store.gate, store.entered = make(chan struct{}), make(chan string, len(owners))
	lt.RetainOwners("test", owners)

	done := make(chan error, 1)
	go func() {
		_, err := lt.LiveOwnerSetVersion(ctx)
		done <- err
	}()
	for range maxConcurrentLeaseReads {
		<-store.entered
	}
	select {
	case o := <-store.entered:
		t.Fatalf("read of %s started beyond the bound", o)
	default:
	}
	close(store.gate)
	require.NoError(t, <-done)
	require.Equal(t, slices.Repeat([]int{1}, len(owners)), readCounts(store, owners...))

	t.Run("first_error_returned", func(t *testing.T) {
		store, _, lt := newFakeTracker(t, 1000)
		store.set("b", leaseAnswer{err: errStoreDown})
		lt.RetainOwners("test", []string{"a", "b", "c"})
		_, err := lt.LiveOwnerSetVersion(ctx)
		require.ErrorIs(t, err, errStoreDown)
	})
}
