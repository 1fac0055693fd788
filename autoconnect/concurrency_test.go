package autoconnect

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestConcurrency(t *testing.T) {
	t.Run("AC-C1_lost_endpoint_callback_during_tick", func(t *testing.T) {
		var rows []location.PeerLocation
		for i := range 8 {
			rows = append(rows, router(fmt.Sprintf("o%d", i), fmt.Sprintf("node-z%d", i), fmt.Sprintf("tcp://p%d", i)))
		}
		for round := range 50 {
			h := newHarness(t, harnessConfig{})
			var losses sync.WaitGroup
			h.exec.setConnectHook(func(_ context.Context, target Target) {
				losses.Add(1)
				go func() {
					defer losses.Done()
					h.exec.lost(target.Endpoint)
				}()
			})
			h.src.set(rows...)
			h.tick()
			losses.Wait()
			active := h.activeEndpoints()
			failed := h.failedEndpoints()
			for _, r := range rows {
				isActive, isFailed := slices.Contains(active, r.Endpoint), slices.Contains(failed, r.Endpoint)
				require.False(t, isActive && isFailed, "round %d: %s is both active and failed", round, r.Endpoint)
			}
			// The next tick redials every lost endpoint and clears its mark.
			h.exec.setConnectHook(nil)
			h.tick()
			require.Len(t, h.r.ActiveTargets(), len(rows), "%v %v", h.rec.all(), h.failedEndpoints())
			require.Empty(t, h.failedEndpoints())
		}
	})

	t.Run("AC-C2_callback_from_inside_disconnect", func(t *testing.T) {
		h := newHarness(t, harnessConfig{wrap: wrapNoProbe})
		h.exec.setDisconnectHook(func(target Target) { h.exec.lost(target.Endpoint) })
		b, c := router("ob", "node-b", "tcp://b"), router("oc", "node-c", "tcp://c")
		h.src.set(b, c)
		h.tick()
		h.src.set(c) // stale removal of b calls Disconnect, which reports the loss
		h.tick()
		require.Equal(t, []string{"tcp://c"}, h.activeEndpoints())
		h.src.set(router("oc2", "node-c", "tcp://c")) // replacement under the same key
		h.tick()
		require.Equal(t, []string{"tcp://c"}, h.activeEndpoints())
		h.r.DisconnectPeers()
		require.Empty(t, h.r.ActiveTargets())
		require.Equal(t, []string{"tcp://c"}, h.failedEndpoints(), "the handler ran inside Disconnect")
	})

	t.Run("AC-C3_observers_during_tick", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		rowsA := []location.PeerLocation{*localRowA(), router("ob", "node-b", "tcp://b"), router("oc", "node-c", "tcp://c")}
		rowsB := []location.PeerLocation{*localRowA(), router("od", "node-d", "tcp://d")}
		stop := make(chan struct{})
		var observers sync.WaitGroup
		for range 4 {
			observers.Add(1)
			go func() {
				defer observers.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = h.r.StoreFailed()
					_ = h.r.LocalPublicationReady()
					for _, tg := range h.r.ActiveTargets() {
						_ = tg.Metadata["x"]
					}
					_, _ = h.r.KnowsPeer("node-b")
				}
			}()
		}
		for i := range 100 {
			switch i % 3 {
			case 0:
				h.src.set(rowsA...)
			case 1:
				h.src.set(rowsB...)
			default:
				h.src.fail(errStoreDown)
			}
			h.tick()
		}
		close(stop)
		observers.Wait()
	})

	t.Run("concurrent_ticks_are_serialised", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(router("ob", "node-b", "tcp://b"))
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = h.r.Tick(context.Background())
			}()
		}
		wg.Wait()
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"), "one connect, whatever the interleaving")
	})
}
