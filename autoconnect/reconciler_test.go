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

func TestEvents(t *testing.T) {
	b := router("ob", "node-b", "tcp://b")
	c := router("oc", "node-c", "tcp://c")
	d := router("od", "node-d", "tcp://d")

	t.Run("AC-E1_payload", func(t *testing.T) {
		h := newHarness(t, harnessConfig{wrap: wrapNoProbe})
		h.src.set(b, c)
		h.tick()
		require.Equal(t, []DesiredSetChange{{
			AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh,
			ConnectedEndpoints: []string{"tcp://b", "tcp://c"},
		}}, h.sink.Take())
		h.src.set(router("oc", "node-c", "tcp://c", gen(2)), d)
		h.tick()
		require.Equal(t, []DesiredSetChange{{
			AutoConnectType:       location.AutoConnectRouteMesh,
			MeshName:              testMesh,
			ConnectedEndpoints:    []string{"tcp://c", "tcp://d"},
			DisconnectedEndpoints: []string{"tcp://b", "tcp://c"},
		}}, h.sink.Take())

		t.Run("fanout", func(t *testing.T) {
			l := local(location.AutoConnectFanout, location.PeerRoleSub, "", "tcp://sub")
			h := newHarness(t, harnessConfig{local: &l})
			h.src.set(row("op", location.AutoConnectFanout, location.PeerRolePub, "", "tcp://pub"))
			h.tick()
			require.Equal(t, []DesiredSetChange{{
				AutoConnectType: location.AutoConnectFanout, MeshName: testMesh, ConnectedEndpoints: []string{"tcp://pub"},
			}}, h.sink.Take())
		})
	})

	t.Run("AC-E2_no_empty_events", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b)
		h.tick()
		require.Len(t, h.sink.Take(), 1)
		h.tick()
		require.Empty(t, h.sink.Take(), "no change")
		h.src.fail(errStoreDown)
		h.tick()
		require.Empty(t, h.sink.Take(), "failure tick")
		h.exec.lost("tcp://b")
		h.tick() // failure tick with a (refused) retry: still nothing
		require.Empty(t, h.sink.Take())
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Empty(t, h.sink.Take(), "shutdown")
	})

	t.Run("AC-E3_knows_peer_tri_state", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		_, known := h.r.KnowsPeer("node-b")
		require.False(t, known)
		h.src.fail(errStoreDown)
		h.tick()
		_, known = h.r.KnowsPeer("node-b")
		require.False(t, known, "a failed listing tells nothing")
		h.src.set(*localRowA(), b, router("ox", "", "tcp://x"))
		h.tick()
		for _, c := range []struct {
			rid    location.RoutingID
			member bool
		}{{"node-a", true}, {"node-b", true}, {"node-c", false}} {
			member, known := h.r.KnowsPeer(c.rid)
			require.True(t, known)
			require.Equal(t, c.member, member, "%s", c.rid)
		}
		h.src.fail(errStoreDown)
		h.tick()
		member, known := h.r.KnowsPeer("node-b")
		require.True(t, known)
		require.True(t, member, "a later failed tick does not change the answer")
	})

	t.Run("AC-E4_active_targets_order", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(c, b)
		h.tick()
		require.Equal(t, []string{"tcp://c", "tcp://b"}, h.activeEndpoints())
		h.src.set(d, b, c)
		h.tick()
		require.Equal(t, []string{"tcp://c", "tcp://b", "tcp://d"}, h.activeEndpoints())
		h.exec.lost("tcp://b")
		h.tick()
		require.Equal(t, []string{"tcp://c", "tcp://d", "tcp://b"}, h.activeEndpoints())
	})

	t.Run("AC-E5_stale_metadata_retained", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(router("ob", "node-b", "tcp://b", md("securityIdentity", "old", MetadataDescriptorRevision, "1")))
		h.src.set(router("ob", "node-b", "tcp://b", md("securityIdentity", "new", MetadataDescriptorRevision, "2")))
		h.tick()
		require.Empty(t, h.rec.only("connect", "disconnect"))
		active := h.r.ActiveTargets()
		require.Len(t, active, 1)
		require.Equal(t, map[string]string{"securityIdentity": "old", MetadataDescriptorRevision: "1"}, active[0].Metadata)

		t.Run("observers_return_copies", func(t *testing.T) {
			active[0].Metadata["securityIdentity"] = "mutated"
			require.Equal(t, "old", h.r.ActiveTargets()[0].Metadata["securityIdentity"])
		})
	})
}

func TestPublication(t *testing.T) {
	own := router("oa", "node-a", "tcp://a")
	peerB := router("ob", "node-b", "tcp://b")

	t.Run("AC-R1_first_publish", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(own, peerB)
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1"}, h.rec.only("write"))
		require.True(t, h.r.LocalPublicationReady())
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1"}, h.rec.only("write"), "publication is one-shot")
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Equal(t, []string{"remove:tcp://a:5"}, h.rec.only("remove"))
		require.Equal(t, location.OwnerToken{OwnerID: "oa", LeaseGeneration: 5}, h.pub.removedTok[0])

		t.Run("listing_without_own_rid", func(t *testing.T) {
			h := newHarness(t, harnessConfig{localRow: localRowA()})
			h.src.set(peerB)
			h.tick()
			require.Equal(t, []string{"write:NewClaim:1", "write:NewClaim:1"}, h.rec.only("write"))
			h.tick()
			require.Len(t, h.rec.only("write"), 3)
			h.tick()
			require.Len(t, h.rec.only("write"), 4)
			require.True(t, h.r.LocalPublicationReady())
			require.False(t, h.r.StoreFailed())
		})
	})

	t.Run("AC-R2_endpoint_normalized_once", func(t *testing.T) {
		lr := router("oa", "node-a", "  TCP://Host:005/ ")
		h := newHarness(t, harnessConfig{localRow: &lr})
		h.src.set(router("oa", "node-a", "tcp://host:5"))
		h.tick()
		require.Len(t, h.pub.written, 1)
		require.Equal(t, "tcp://host:5", h.pub.written[0].Endpoint)
		require.Equal(t, "  TCP://Host:005/ ", lr.Endpoint, "the caller's row is not modified")
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Len(t, h.pub.removedKey, 1)
		require.Equal(t, "tcp://host:5", *h.pub.removedKey[0].Endpoint)
		require.Equal(t, location.PeerKey{
			AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh, Role: location.PeerRoleRouter,
			NodeRID: rid("node-a"), Endpoint: h.pub.removedKey[0].Endpoint,
		}, h.pub.removedKey[0])
	})

	t.Run("AC-R3_conflict_before_ever_published", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.pub.queueWrite(conflict())
		h.src.set(own, peerB)
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1"}, h.rec.only("write"), "no Renew without a remembered generation")
		require.False(t, h.r.LocalPublicationReady())
		require.False(t, h.r.StoreFailed())
		require.Equal(t, 1, h.src.count())
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1", "write:NewClaim:1"}, h.rec.only("write"))
		require.True(t, h.r.LocalPublicationReady())
	})

	// publishedThenFailed publishes with generation 5 and then fails a
	// listing, which resets the publication.
	publishedThenFailed := func(t *testing.T) *harness {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(own, peerB)
		h.tick()
		require.True(t, h.r.LocalPublicationReady())
		h.src.fail(errStoreDown)
		h.tick()
		require.False(t, h.r.LocalPublicationReady())
		require.True(t, h.r.StoreFailed())
		h.src.set(own, peerB)
		h.rec.reset()
		return h
	}

	t.Run("AC-R4_conflict_after_failure_renews", func(t *testing.T) {
		h := publishedThenFailed(t)
		h.pub.queueWrite(conflict(), stored(5))
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1", "write:Renew:5"}, h.rec.only("write"))
		require.Equal(t, location.IntentRenew, h.pub.intents[2])
		require.Equal(t, int64(5), h.pub.written[2].Generation)
		require.True(t, h.r.LocalPublicationReady())
		require.False(t, h.r.StoreFailed())
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Equal(t, []string{"remove:tcp://a:5"}, h.rec.only("remove"), "same generation as before")
	})

	t.Run("AC-R5_renew_rejected", func(t *testing.T) {
		h := publishedThenFailed(t)
		h.pub.queueWrite(conflict(), staleAnswer())
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1", "write:Renew:5"}, h.rec.only("write"))
		require.False(t, h.r.LocalPublicationReady())
		require.False(t, h.r.StoreFailed())
		require.Equal(t, 3, h.src.count(), "the tick went on to the listing")
	})

	t.Run("AC-R6_new_claim_ignored_stale", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.pub.queueWrite(staleAnswer())
		h.src.set(own, peerB)
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1"}, h.rec.only("write"))
		require.False(t, h.r.LocalPublicationReady())
		require.False(t, h.r.StoreFailed())
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
	})

	t.Run("AC-R7_publish_error", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.pub.queueWrite(failed(errStoreDown))
		h.src.set(own, peerB)
		h.tick()
		require.True(t, h.r.StoreFailed())
		require.Equal(t, 0, h.src.count())
		require.Empty(t, h.rec.only("connect", "expect"))
	})

	t.Run("AC-R8_no_local_row", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(peerB)
		h.tick()
		h.tick()
		require.Empty(t, h.rec.only("write", "remove"))
		require.Equal(t, 2, h.src.count())
		require.False(t, h.r.LocalPublicationReady())
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Empty(t, h.rec.only("write", "remove"))
	})

	t.Run("AC-R9_publish_only_mode", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA(), publishOnly: true})
		h.src.set(own, peerB)
		h.pub.queueWrite(failed(errStoreDown))
		h.tick()
		require.True(t, h.r.StoreFailed())
		h.tick()
		require.False(t, h.r.StoreFailed())
		require.True(t, h.r.LocalPublicationReady())
		require.Equal(t, []string{"write:NewClaim:1", "write:NewClaim:1"}, h.rec.only("write"))
		require.Equal(t, 0, h.src.count())
		require.Empty(t, h.rec.only("connect", "disconnect", "stale", "expect", "notRequired"))
		h.r.mu.Lock()
		defer h.r.mu.Unlock()
		require.Zero(t, h.r.recoveryDeferUntil, "no recovery deferral in publish-only mode")
		require.False(t, h.r.failureStarted)
	})

	t.Run("AC-R10_lost_local_row_reclaimed", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(own, peerB)
		h.tick()
		require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
		h.rec.reset()
		h.pub.queueWrite(stored(6))
		h.src.set(peerB) // a restarted store lost our row
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1", "expect:1", "notRequired:0", "stale:1"}, h.rec.all(),
			"re-claimed in the same tick; connections untouched")
		require.True(t, h.r.LocalPublicationReady())
		require.False(t, h.r.StoreFailed())
		require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Equal(t, []string{"remove:tcp://a:6"}, h.rec.only("remove"))
	})

	t.Run("AC-R11_lost_local_row_reclaim_fails", func(t *testing.T) {
		for name, answer := range map[string]writeAnswer{"ignored_stale": staleAnswer(), "error": failed(errStoreDown)} {
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, harnessConfig{localRow: localRowA()})
				h.settle(own, peerB)
				h.pub.queueWrite(answer)
				h.src.set(peerB)
				h.tick()
				require.Equal(t, []string{"write:NewClaim:1"}, h.rec.all(), "the tick ends before ExpectPeers and Connect")
				require.True(t, h.r.StoreFailed())
				require.False(t, h.r.LocalPublicationReady())
				require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
			})
		}
	})

	t.Run("AC-R12_own_row_present", func(t *testing.T) {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(peerB, own)
		h.tick()
		h.tick()
		require.Equal(t, []string{"write:NewClaim:1"}, h.rec.only("write"))

		t.Run("rid_less_local_row_matches_by_endpoint", func(t *testing.T) {
			lr := router("oa", "", "tcp://a")
			l := local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "", "tcp://a")
			h := newHarness(t, harnessConfig{local: &l, localRow: &lr})
			h.src.set(router("oa", "", "tcp://a"), router("ob", "", "tcp://b"))
			h.tick()
			require.Equal(t, []string{"write:NewClaim:1"}, h.rec.only("write"))
			// Another rid-less row does not hide the loss of ours (06 §12 Q5).
			h.src.set(router("ob", "", "tcp://b"))
			h.tick()
			require.Equal(t, []string{"write:NewClaim:1", "write:NewClaim:1"}, h.rec.only("write"))
		})
	})
}

func TestShutdown(t *testing.T) {
	b := router("ob", "node-b", "tcp://b")
	c := router("oc", "node-c", "tcp://c")

	// published connects b and c and publishes the local row (generation 5).
	published := func(t *testing.T) *harness {
		h := newHarness(t, harnessConfig{localRow: localRowA()})
		h.src.set(*localRowA(), b, c)
		h.tick()
		require.True(t, h.r.LocalPublicationReady())
		require.Equal(t, []string{"tcp://b", "tcp://c"}, h.activeEndpoints())
		h.sink.Take()
		h.rec.reset()
		return h
	}

	t.Run("AC-S1_shutdown", func(t *testing.T) {
		h := published(t)
		h.exec.setClosed(targetOf(c), true)
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Equal(t, []string{"disconnect:tcp://b:ob", "remove:tcp://a:5"}, h.rec.all(), "c is already closed")
		require.False(t, h.r.LocalPublicationReady())
		require.Empty(t, h.r.ActiveTargets())
		require.Empty(t, h.pendingKeys())
		require.Empty(t, h.sink.Take())

		t.Run("without_closed_targets", func(t *testing.T) {
			h := published(t)
			require.NoError(t, h.r.Shutdown(context.Background()))
			require.Equal(t, []string{"disconnect:tcp://b:ob", "disconnect:tcp://c:oc", "remove:tcp://a:5"}, h.rec.all())
		})
		t.Run("pending_cleared", func(t *testing.T) {
			h := published(t)
			h.src.set(*localRowA(), b)
			h.tick()
			require.Equal(t, []string{TargetKey(c)}, h.pendingKeys())
			require.NoError(t, h.r.Shutdown(context.Background()))
			require.Empty(t, h.pendingKeys())
		})
	})

	t.Run("AC-S2_shutdown_after_store_failure", func(t *testing.T) {
		h := published(t)
		h.src.fail(errStoreDown)
		h.tick()
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Equal(t, []string{"disconnect:tcp://b:ob", "disconnect:tcp://c:oc"}, h.rec.all())
	})

	t.Run("AC-S3_remove_status_ignored", func(t *testing.T) {
		h := published(t)
		h.pub.queueRemove(staleAnswer())
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.False(t, h.r.LocalPublicationReady())
	})

	t.Run("AC-S4_remove_error_propagates", func(t *testing.T) {
		h := published(t)
		h.pub.queueRemove(failed(errStoreDown))
		err := h.r.Shutdown(context.Background())
		require.ErrorIs(t, err, errStoreDown)
		require.Equal(t, []string{"disconnect:tcp://b:ob", "disconnect:tcp://c:oc", "remove:tcp://a:5"}, h.rec.all())
		require.Empty(t, h.r.ActiveTargets())
		require.True(t, h.r.LocalPublicationReady(), "the row was not removed")
	})

	t.Run("AC-S5_generation_guard", func(t *testing.T) {
		h := published(t)
		// While RemovePeer(gen 5) is in flight, a tick finds the row gone
		// and claims it again with generation 6.
		h.pub.queueWrite(stored(6))
		h.src.set(b, c)
		h.pub.removeHook = func() { h.tick() }
		require.NoError(t, h.r.UnpublishLocal(context.Background()))
		require.Equal(t, []string{"remove:tcp://a:5", "write:NewClaim:1"}, h.rec.only("remove", "write"))
		require.True(t, h.r.LocalPublicationReady(), "left as set by the concurrent publication")
		h.pub.removeHook = nil
		require.NoError(t, h.r.UnpublishLocal(context.Background()))
		require.Equal(t, []string{"remove:tcp://a:5", "write:NewClaim:1", "remove:tcp://a:6"}, h.rec.only("remove", "write"))
		require.False(t, h.r.LocalPublicationReady())
	})
}

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
