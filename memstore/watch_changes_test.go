package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

func TestWatchChanges(t *testing.T) {
	var _ location.ChangeWatcher = (*Store)(nil)
	pending := func(ch <-chan struct{}) bool {
		select {
		case _, ok := <-ch:
			return ok
		default:
			return false
		}
	}
	t.Run("notifies watchers of the touched tables, coalesced", func(t *testing.T) {
		f := newMemFix(t)
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		spots, err := f.s.WatchChanges(ctx, location.TableSpots)
		require.NoError(t, err)
		peers, err := f.s.WatchChanges(ctx, location.TablePeers, location.TableRoutes)
		require.NoError(t, err)
		all, err := f.s.WatchChanges(ctx)
		require.NoError(t, err)

		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", 1), location.IntentNewClaim))
		f.stored(f.s.UpdateSpot(f.ctx, spotAt("a", 1, fixture.MeshPlay, "spot-2"), location.IntentNewClaim))
		require.True(t, pending(spots))
		require.False(t, pending(spots), "two changes coalesce into one notification")
		require.False(t, pending(peers))
		require.True(t, pending(all))

		f.stored(f.s.UpdateRoute(f.ctx, fixture.ROUTE("a", 0), location.IntentNewClaim))
		require.True(t, pending(peers))
		require.False(t, pending(spots))
		require.True(t, pending(all))
	})
	t.Run("no notification without a change", func(t *testing.T) {
		f := newMemFix(t)
		a, b := f.claim("a"), f.claim("b")
		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim))
		ch, err := f.s.WatchChanges(f.ctx)
		require.NoError(t, err)
		require.Equal(t, location.RejectedConflict, f.wrote(f.s.UpdateSpot(f.ctx, fixture.SPOT("b", b.LeaseGeneration), location.IntentNewClaim)).Status)
		_, err = f.s.ResolveSpot(f.ctx, fixture.SpotKey())
		require.NoError(t, err)
		_, err = f.s.ReadOwnerLease(f.ctx, "a")
		require.NoError(t, err)
		require.False(t, pending(ch))
		_, err = f.s.RemoveSpot(f.ctx, fixture.SpotKey(), a)
		require.NoError(t, err)
		require.True(t, pending(ch))
	})
	t.Run("closed when the context ends", func(t *testing.T) {
		f := newMemFix(t)
		ctx, cancel := context.WithCancel(f.ctx)
		ch, err := f.s.WatchChanges(ctx, location.TableSpots)
		require.NoError(t, err)
		cancel()
		select {
		case _, ok := <-ch:
			if ok { // a notification may be pending; the close follows
				_, ok = <-ch
			}
			require.False(t, ok)
		case <-time.After(10 * time.Second):
			t.Fatal("the channel was not closed")
		}
		f.s.mu.Lock()
		require.Empty(t, f.s.watchers, "the subscription is gone")
		f.s.mu.Unlock()
		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", 1), location.IntentNewClaim)) // no send on a closed channel
	})
}
