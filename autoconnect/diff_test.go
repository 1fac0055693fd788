package autoconnect

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// targetOfRow is the target the planner makes of r.
func targetOfRow(r location.PeerLocation) Target { return targetOf(r) }

func TestDiff(t *testing.T) {
	b := router("ob", "node-b", "tcp://b")
	c := router("oc", "node-c", "tcp://c")

	t.Run("AC-D1_connect_new_peer", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob", "stale:1"}, h.rec.transport())
		require.Equal(t, []Target{targetOfRow(b)}, h.r.ActiveTargets())
		require.Equal(t, []DesiredSetChange{{
			AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh,
			ConnectedEndpoints: []string{"tcp://b"},
		}}, h.sink.Take())
	})

	t.Run("AC-D2_connect_refused", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.exec.queueConnect(false)
		h.src.set(b)
		h.tick()
		require.Empty(t, h.r.ActiveTargets())
		require.Empty(t, h.sink.Take())
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob", "connect:tcp://b:ob"}, h.rec.only("connect"))
		require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
	})

	t.Run("AC-D3_steady_state", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(b, c)
		h.tick()
		require.Empty(t, h.rec.only("connect", "disconnect"))
		require.Empty(t, h.sink.Take())
	})

	t.Run("AC-D4_authoritative_empty_listing", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(b)
		h.src.set()
		h.tick()
		require.Equal(t, []string{"stale:0", "disconnect:tcp://b:ob"}, h.rec.transport())
		require.Empty(t, h.r.ActiveTargets())
		require.Equal(t, [][]string{{"tcp://b"}}, disconnectedOf(h.sink.Take()))
	})

	t.Run("AC-D5_peer_restart_new_generation", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(b)
		b2 := router("ob", "node-b", "tcp://b", gen(2))
		h.src.set(b2)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob", "stale:1", "disconnect:tcp://b:ob"}, h.rec.transport())
		require.Equal(t, []Target{targetOfRow(b2)}, h.r.ActiveTargets())
		events := h.sink.Take()
		require.Equal(t, [][]string{{"tcp://b"}}, connectedOf(events))
		require.Equal(t, [][]string{{"tcp://b"}}, disconnectedOf(events))
	})

	t.Run("AC-D6_owner_takeover_same_key_without_prober", func(t *testing.T) {
		h := newHarness(t, harnessConfig{wrap: wrapNoProbe})
		h.settle(b)
		h.src.set(router("ob2", "node-b", "tcp://b"))
		h.tick()
		require.Equal(t, []string{"disconnect:tcp://b:ob", "connect:tcp://b:ob2", "stale:1"}, h.rec.transport())
		require.Equal(t, []DesiredSetChange{{
			AutoConnectType: location.AutoConnectRouteMesh, MeshName: testMesh,
			ConnectedEndpoints: []string{"tcp://b"}, DisconnectedEndpoints: []string{"tcp://b"},
		}}, h.sink.Take())
		require.Empty(t, h.pendingKeys())
	})

	t.Run("AC-D7_replacement_waits_for_close", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(b)
		newB := router("ob2", "node-b", "tcp://b")
		h.src.set(newB)
		h.tick()
		require.Equal(t, []string{"disconnect:tcp://b:ob", "stale:1"}, h.rec.transport())
		require.Equal(t, []string{TargetKey(b)}, h.pendingKeys())
		require.Empty(t, h.r.ActiveTargets())
		require.Equal(t, [][]string{{"tcp://b"}}, disconnectedOf(h.sink.Take()))

		h.rec.reset()
		h.tick() // still not closed
		require.Equal(t, []string{"stale:1"}, h.rec.transport())

		h.rec.reset()
		h.exec.setClosed(targetOfRow(b), true)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob2", "stale:1"}, h.rec.transport())
		require.Empty(t, h.pendingKeys())
		require.Equal(t, []Target{targetOfRow(newB)}, h.r.ActiveTargets())
	})

	t.Run("AC-D8_endpoint_change_under_same_key", func(t *testing.T) {
		moved := router("ob", "node-b", "tcp://b-moved")
		t.Run("without_prober", func(t *testing.T) {
			h := newHarness(t, harnessConfig{wrap: wrapNoProbe})
			h.settle(b)
			h.src.set(moved)
			h.tick()
			require.Equal(t, []string{"disconnect:tcp://b:ob", "connect:tcp://b-moved:ob", "stale:1"}, h.rec.transport())
			require.Equal(t, []string{"tcp://b-moved"}, h.activeEndpoints())
		})
		t.Run("with_prober_waits_for_close", func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			h.settle(b)
			h.src.set(moved)
			h.tick()
			require.Equal(t, []string{"disconnect:tcp://b:ob", "stale:1"}, h.rec.transport())
			require.Equal(t, []string{TargetKey(b)}, h.pendingKeys())
			h.exec.setClosed(targetOfRow(b), true)
			h.rec.reset()
			h.tick()
			require.Equal(t, []string{"connect:tcp://b-moved:ob", "stale:1"}, h.rec.transport())
			require.Empty(t, h.pendingKeys())
		})
		t.Run("with_prober_already_closed", func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			h.settle(b)
			h.exec.setClosed(targetOfRow(b), true)
			h.src.set(moved)
			h.tick()
			// The old target is closed: the key is treated as absent and
			// dialed again right away (AC-D9's path).
			require.Equal(t, []string{"connect:tcp://b-moved:ob", "stale:1"}, h.rec.transport())
		})
	})

	t.Run("AC-D9_dead_transport_under_active_key", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(b)
		h.exec.setClosed(targetOfRow(b), true)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob", "stale:1"}, h.rec.transport())
		require.Equal(t, [][]string{{"tcp://b"}}, connectedOf(h.sink.Take()))
		require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
	})

	t.Run("AC-D10_draining_retention", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(b)
		h.src.set(router("ob", "node-b", "tcp://b", drain()), router("oc", "node-c", "tcp://c", drain()))
		h.tick()
		require.Equal(t, []string{"stale:2"}, h.rec.transport())
		require.Equal(t, []string{"tcp://b"}, h.activeEndpoints())
		h.r.mu.Lock()
		require.Equal(t, []string{"tcp://b"}, endpoints(h.r.lastDesired.list()), "the draining active peer stays desired")
		h.r.mu.Unlock()
	})

	t.Run("AC-D11_draining_peer_not_active_never_dialed", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(router("ob", "node-b", "tcp://b", drain()))
		h.tick()
		h.tick()
		require.Empty(t, h.rec.only("connect"))
		require.Empty(t, h.r.ActiveTargets())
	})

	t.Run("AC-D12_stale_removal_records_pending", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b)
		h.tick()
		h.src.set()
		h.tick()
		require.Equal(t, []string{TargetKey(b)}, h.pendingKeys())
		h.tick()
		require.Equal(t, []string{TargetKey(b)}, h.pendingKeys(), "kept while still open")
		h.exec.setClosed(targetOfRow(b), true)
		h.tick()
		require.Empty(t, h.pendingKeys())
	})

	t.Run("AC-D13_pending_blocks_reuse_of_the_key", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b)
		h.tick()
		h.settle()
		h.src.set(b)
		h.tick()
		require.Empty(t, h.rec.only("connect"), "skipped while the old connection is open")
		require.Equal(t, []string{TargetKey(b)}, h.pendingKeys())
		h.exec.setClosed(targetOfRow(b), true)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
		require.Empty(t, h.pendingKeys())
	})

	t.Run("AC-D14_disconnect_if_needed", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.settle(b)
		h.exec.setClosed(targetOfRow(b), true)
		h.src.set()
		h.tick()
		require.Empty(t, h.rec.only("disconnect"))
		require.Equal(t, [][]string{{"tcp://b"}}, disconnectedOf(h.sink.Take()))
	})

	t.Run("AC-D15_expect_peers_and_replace_not_required_inputs", func(t *testing.T) {
		l := clientLocal()
		h := newHarness(t, harnessConfig{local: &l})
		initiated := router("ob", "node-b", "tcp://b")
		lower := router("o0", "node-0", "tcp://0")
		draining := router("oc", "node-c", "tcp://c", drain())
		clientPeer := router("od", "node-d", "tcp://d", clientMD())
		h.src.set(initiated, lower, draining, clientPeer)
		h.tick()
		require.Len(t, h.exec.expectArgs, 1)
		require.Equal(t, []string{"tcp://b", "tcp://0", "tcp://c", "tcp://d"}, endpoints(h.exec.expectArgs[0]))
		require.Len(t, h.exec.notRequiredArgs, 1)
		require.Equal(t, []string{"tcp://d"}, endpoints(h.exec.notRequiredArgs[0]))
		require.Nil(t, h.exec.notRequiredArgs[0][0].DescriptorRevision)
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
	})

	t.Run("AC-D16_disconnect_stale_peers_input", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b, router("o0", "node-0", "tcp://0"), router("oc", "node-c", "tcp://c", drain()))
		h.tick()
		h.tick()
		require.Len(t, h.exec.staleArgs, 2, "once per tick")
		for _, args := range h.exec.staleArgs {
			require.Equal(t, []string{"tcp://b", "tcp://0", "tcp://c"}, endpoints(args))
		}
	})

	t.Run("AC-D17_failed_endpoint_cleanup", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		h.src.set(b)
		h.tick()
		h.exec.lost("tcp://b")
		require.Equal(t, []string{"tcp://b"}, h.failedEndpoints())
		h.src.set() // b no longer desired
		h.tick()
		require.Empty(t, h.failedEndpoints())
		// Observable as AC-F6 behaviour: b is retried during an outage again.
		h.exec.queueConnect(false)
		h.settle(b)
		h.src.fail(errStoreDown)
		h.tick()
		require.Equal(t, []string{"connect:tcp://b:ob"}, h.rec.only("connect"))
	})

	t.Run("AC-D18_optional_capabilities_absent", func(t *testing.T) {
		h := newHarness(t, harnessConfig{wrap: wrapPlain})
		h.settle(b)
		h.tick() // no dead-transport detection: nothing happens
		require.Empty(t, h.rec.all())
		h.src.set(router("ob2", "node-b", "tcp://b"), c)
		h.tick()
		require.Equal(t, []string{"disconnect:tcp://b:ob", "connect:tcp://b:ob2", "connect:tcp://c:oc"}, h.rec.all())
		h.rec.reset()
		h.src.set()
		h.tick()
		require.Equal(t, []string{"disconnect:tcp://b:ob2", "disconnect:tcp://c:oc"}, h.rec.all())
		require.Empty(t, h.pendingKeys(), "no pending bookkeeping without a prober")
		require.Empty(t, h.r.ActiveTargets())
	})
}

// disconnectedOf returns the disconnected lists of the given events.
func disconnectedOf(events []DesiredSetChange) [][]string {
	out := [][]string{}
	for _, e := range events {
		out = append(out, e.DisconnectedEndpoints)
	}
	return out
}
