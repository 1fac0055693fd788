package autoconnect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

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
