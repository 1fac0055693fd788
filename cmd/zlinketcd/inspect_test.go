package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInspect(t *testing.T) {
	s, _, prefix, eps := sharedStore(t)
	populate(t, s)
	conn := []string{"--endpoints", eps, "--prefix", prefix}

	t.Run("tables", func(t *testing.T) {
		r := runCmd(t, append([]string{"inspect"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Empty(t, r.stderr)
		for _, title := range []string{"MESH NODES (2)", "CLIENT SERVERS (1)", "FANOUT PUBLISHERS (1)", "PEERS (1)", "SPOTS (2)",
			"ACTORS (1)", "ROUTES (1)", "OWNER LEASES (1)", "AUTHORITIES (1)", "OTHER KEYS (11)"} {
			require.Contains(t, r.stdout, "\n"+title+"\n", title)
		}
		require.Contains(t, r.stdout, "prefix "+prefix+" at revision ")
		// Mesh nodes: node-a live with one active actor slot, node-b's owner gone.
		require.Regexp(t, `play\s+node-a\s+1\s+1\s+tcp://node-a\.test\.invalid:7300\s+server\s+serving\s+1/0/10\s+0/0/10\s+alice\s+\d+\s+yes`, r.stdout)
		require.Regexp(t, `play\s+node-b\s+.*\sbob\s+\d+\s+no`, r.stdout)
		require.Regexp(t, `zla1:a:8:player-1\s+\d+\s+active\s+actor\s+player\s+play/node-a\s+1\s+alice`, r.stdout)
		require.Regexp(t, `alice\s+\d+\s+[0-9a-f]+\s+1m0s\s+\d+s\s`, r.stdout)
		require.Regexp(t, `actor-session\s+session-1\s+node-a\s+alice`, r.stdout)
	})

	t.Run("json", func(t *testing.T) {
		r := runCmd(t, append([]string{"inspect", "--output", "json"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var got struct {
			Prefix    string `json:"prefix"`
			Revision  int64  `json:"revision"`
			MeshNodes []struct {
				OwnerLive bool `json:"ownerLive"`
				Value     struct {
					RID string `json:"rid"`
				} `json:"value"`
			} `json:"meshNodes"`
			ClientServers    []json.RawMessage `json:"clientServers"`
			FanoutPublishers []json.RawMessage `json:"fanoutPublishers"`
			Peers            []json.RawMessage `json:"peers"`
			Spots            []json.RawMessage `json:"spots"`
			Actors           []json.RawMessage `json:"actors"`
			Routes           []json.RawMessage `json:"routes"`
			OwnerLeases      []struct {
				OwnerID          string `json:"ownerId"`
				Generation       int64  `json:"generation"`
				RemainingSeconds int64  `json:"remainingSeconds"`
			} `json:"ownerLeases"`
			Authorities []struct {
				Key        string `json:"key"`
				Allocation struct {
					State string `json:"state"`
				} `json:"allocation"`
			} `json:"authorities"`
			OtherKeys []struct {
				Part string `json:"part"`
				Keys int64  `json:"keys"`
			} `json:"otherKeys"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		require.Equal(t, prefix, got.Prefix)
		require.Positive(t, got.Revision)
		require.Len(t, got.MeshNodes, 2)
		require.Equal(t, "node-a", got.MeshNodes[0].Value.RID)
		require.True(t, got.MeshNodes[0].OwnerLive)
		require.False(t, got.MeshNodes[1].OwnerLive)
		require.Len(t, got.ClientServers, 1)
		require.Len(t, got.FanoutPublishers, 1)
		require.Len(t, got.Peers, 1)
		require.Len(t, got.Spots, 2)
		require.Len(t, got.Actors, 1)
		require.Len(t, got.Routes, 1)
		require.Len(t, got.OwnerLeases, 1)
		require.Equal(t, "alice", got.OwnerLeases[0].OwnerID)
		require.Positive(t, got.OwnerLeases[0].Generation)
		require.Greater(t, got.OwnerLeases[0].RemainingSeconds, int64(30))
		require.Len(t, got.Authorities, 1)
		require.Equal(t, "zla1:a:8:player-1", got.Authorities[0].Key)
		require.Equal(t, "active", got.Authorities[0].Allocation.State)
		counts := map[string]int64{}
		for _, o := range got.OtherKeys {
			counts[o.Part] = o.Keys
		}
		require.Positive(t, counts["by-owner"])
		require.Positive(t, counts["ledger"])
	})

	t.Run("sections", func(t *testing.T) {
		r := runCmd(t, append([]string{"inspect", "owners", "actors", "--output=json"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		var names []string
		for k := range got {
			names = append(names, k)
		}
		require.ElementsMatch(t, []string{"prefix", "revision", "readAt", "actors", "ownerLeases"}, names)

		r = runCmd(t, append([]string{"inspect", "leases"}, conn...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "OWNER LEASES (1)")
		require.NotContains(t, r.stdout, "MESH NODES")
	})

	t.Run("empty prefix", func(t *testing.T) {
		r := runCmd(t, "inspect", "--endpoints", eps, "--prefix", prefix+"nothing/")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, 9, strings.Count(r.stdout, "  (none)\n"), r.stdout)
		require.Contains(t, r.stdout, "OTHER KEYS (11)")
	})
}
