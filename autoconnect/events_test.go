package autoconnect

import (
	"context"
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
		}}, h.sink.take())
		h.src.set(router("oc", "node-c", "tcp://c", gen(2)), d)
		h.tick()
		require.Equal(t, []DesiredSetChange{{
			AutoConnectType:       location.AutoConnectRouteMesh,
			MeshName:              testMesh,
			ConnectedEndpoints:    []string{"tcp://c", "tcp://d"},
			DisconnectedEndpoints: []string{"tcp://b", "tcp://c"},
		}}, h.sink.take())

		t.Run("fanout", func(t *testing.T) {
			l := local(location.AutoConnectFanout, location.PeerRoleSub, "", "tcp://sub")
			h := newHarness(t, harnessConfig{local: &l})
			h.src.set(row("op", location.AutoConnectFanout, location.PeerRolePub, "", "tcp://pub"))
			h.tick()
			require.Equal(t, []DesiredSetChange{{
				AutoConnectType: location.AutoConnectFanout, MeshName: testMesh, ConnectedEndpoints: []string{"tcp://pub"},
			}}, h.sink.take())
		})
	})

	t.Run("AC-E2_no_empty_events", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b)
		h.tick()
		require.Len(t, h.sink.take(), 1)
		h.tick()
		require.Empty(t, h.sink.take(), "no change")
		h.src.fail(errStoreDown)
		h.tick()
		require.Empty(t, h.sink.take(), "failure tick")
		h.exec.lost("tcp://b")
		h.tick() // failure tick with a (refused) retry: still nothing
		require.Empty(t, h.sink.take())
		require.NoError(t, h.r.Shutdown(context.Background()))
		require.Empty(t, h.sink.take(), "shutdown")
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
