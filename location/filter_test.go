package location_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func vPtr[T any](v T) *T { return &v }

// matching returns the names of the rows a predicate accepts, in order.
func vMatching[R any](rows map[string]R, order []string, match func(R) bool) []string {
	out := []string{}
	for _, name := range order {
		if match(rows[name]) {
			out = append(out, name)
		}
	}
	return out
}

// vFilterCase is one filter and the names of the rows it matches, in order.
type vFilterCase[F any] struct {
	name   string
	filter F
	want   []string
}

// vFilterMatches checks each case's filter on the named rows, taken in order.
func vFilterMatches[R any, F interface{ Matches(R) bool }](t *testing.T, rows map[string]R, order []string, cases []vFilterCase[F]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, vMatching(rows, order, tc.filter.Matches))
		})
	}
}

func TestPeerFilterMatches(t *testing.T) {
	peer := func(ct location.AutoConnectType, mesh string, role location.PeerRole, rid *location.RoutingID, endpoint string) location.PeerLocation {
		return location.PeerLocation{AutoConnectType: ct, MeshName: mesh, Role: role, NodeRID: rid, Endpoint: endpoint}
	}
	rows := map[string]location.PeerLocation{
		"P1": peer(location.AutoConnectRouteMesh, "play", location.PeerRoleRouter, vRIDPtr("node-1"), "e1"),
		"P2": peer(location.AutoConnectRouteMesh, "play", location.PeerRoleDealer, vRIDPtr("node-2"), "e2"),
		"P3": peer(location.AutoConnectFanout, "play", location.PeerRolePub, nil, "e3"),
		"P4": peer(location.AutoConnectRouteMesh, "other", location.PeerRoleRouter, vRIDPtr("node-1"), "e4"),
	}
	order := []string{"P1", "P2", "P3", "P4"}
	vFilterMatches(t, rows, order, []vFilterCase[location.PeerFilter]{
		{"LS-117 empty filter", location.PeerFilter{}, []string{"P1", "P2", "P3", "P4"}},
		{"LS-117 mesh play", location.PeerFilter{MeshName: vPtr("play")}, []string{"P1", "P2", "P3"}},
		{"LS-117 role router", location.PeerFilter{Role: vPtr(location.PeerRoleRouter)}, []string{"P1", "P4"}},
		{"LS-117 type fanout", location.PeerFilter{AutoConnectType: vPtr(location.AutoConnectFanout)}, []string{"P3"}},
		{"LS-117 nodeRid node-1", location.PeerFilter{NodeRID: vRIDPtr("node-1")}, []string{"P1", "P4"}},
		{"LS-117 endpoint e3", location.PeerFilter{Endpoint: vPtr("e3")}, []string{"P3"}},
		{"LS-117 mesh play and role router", location.PeerFilter{MeshName: vPtr("play"), Role: vPtr(location.PeerRoleRouter)}, []string{"P1"}},
		{"LS-117 nodeRid node-9", location.PeerFilter{NodeRID: vRIDPtr("node-9")}, []string{}},
		{"empty mesh matches only empty mesh", location.PeerFilter{MeshName: vPtr("")}, []string{}},
		{"exact case", location.PeerFilter{MeshName: vPtr("Play")}, []string{}},
		{"present empty rid never matches an absent rid", location.PeerFilter{NodeRID: vRIDPtr("")}, []string{}},
	})
}

func TestSpotFilterMatches(t *testing.T) {
	spot := func(mesh, id, spotType string, rid location.RoutingID, kind location.SpotKind) location.SpotLocation {
		return location.SpotLocation{MeshName: mesh, SpotID: id, SpotType: spotType, OwnerNodeRID: rid, SpotKind: kind}
	}
	rows := map[string]location.SpotLocation{
		"S1": spot("play", "spot-1", "game", "node-1", location.SpotUser),
		"S2": spot("play", "spot-2", "lobby", "node-2", location.SpotInstance),
		"S3": spot("other", "spot-3", "game", "node-1", location.SpotEntry),
	}
	order := []string{"S1", "S2", "S3"}
	vFilterMatches(t, rows, order, []vFilterCase[location.SpotFilter]{
		{"LS-133 empty filter", location.SpotFilter{}, []string{"S1", "S2", "S3"}},
		{"LS-133 mesh play", location.SpotFilter{MeshName: vPtr("play")}, []string{"S1", "S2"}},
		{"LS-133 spot type game", location.SpotFilter{SpotType: vPtr("game")}, []string{"S1", "S3"}},
		{"LS-133 nodeRid node-1", location.SpotFilter{NodeRID: vRIDPtr("node-1")}, []string{"S1", "S3"}},
		{"LS-133 spot kind instance", location.SpotFilter{SpotKind: vPtr(location.SpotInstance)}, []string{"S2"}},
		{"LS-133 mesh other and type lobby", location.SpotFilter{MeshName: vPtr("other"), SpotType: vPtr("lobby")}, []string{}},
		{"every field", location.SpotFilter{MeshName: vPtr("play"), SpotType: vPtr("game"), NodeRID: vRIDPtr("node-1"), SpotKind: vPtr(location.SpotUser)}, []string{"S1"}},
	})
}

func TestActorFilterMatches(t *testing.T) {
	actor := func(mesh, id, actorType string, rid location.RoutingID, spotID string, kind location.SpotKind) location.ActorLocation {
		return location.ActorLocation{MeshName: mesh, ActorID: id, ActorType: actorType, OwnerNodeRID: rid, SpotID: spotID, SpotKind: kind}
	}
	rows := map[string]location.ActorLocation{
		"A1": actor("play", "actor-1", "player", "node-1", "node-1", location.SpotEntry),
		"A2": actor("other", "actor-2", "npc", "node-2", "room-1", location.SpotUser),
		"A3": actor("play", "actor-3", "player", "node-2", "room-1", location.SpotUser),
	}
	order := []string{"A1", "A2", "A3"}
	vFilterMatches(t, rows, order, []vFilterCase[location.ActorFilter]{
		{"LS-144 empty filter", location.ActorFilter{}, []string{"A1", "A2", "A3"}},
		{"LS-144 actor type player", location.ActorFilter{ActorType: vPtr("player")}, []string{"A1", "A3"}},
		{"LS-144 nodeRid node-2", location.ActorFilter{NodeRID: vRIDPtr("node-2")}, []string{"A2", "A3"}},
		{"LS-144 spotId room-1", location.ActorFilter{SpotID: vPtr("room-1")}, []string{"A2", "A3"}},
		{"LS-144 location kind entry", location.ActorFilter{LocationKind: vPtr(location.SpotEntry)}, []string{"A1"}},
		{"every field", location.ActorFilter{ActorType: vPtr("player"), NodeRID: vRIDPtr("node-2"), SpotID: vPtr("room-1"), LocationKind: vPtr(location.SpotUser)}, []string{"A3"}},
		{"spotId compares as plain text", location.ActorFilter{SpotID: vPtr("room-")}, []string{}},
	})
}

func TestRouteFilterMatches(t *testing.T) {
	route := func(kind location.RouteKind, key string, rid location.RoutingID, owner string) location.RouteLocation {
		return location.RouteLocation{RouteKind: kind, RouteKey: key, OwnerNodeRID: rid, OwnerID: owner}
	}
	rows := map[string]location.RouteLocation{
		"R1": route(location.RouteActorSession, "r1", "node-1", "a"),
		"R2": route(location.RouteSpotName, "r2", "node-2", "a"),
		"R3": route(location.RouteActorSession, "r3", "node-2", "b"),
	}
	order := []string{"R1", "R2", "R3"}
	vFilterMatches(t, rows, order, []vFilterCase[location.RouteFilter]{
		{"LS-156 route kind ActorSession", location.RouteFilter{RouteKind: vPtr(location.RouteActorSession)}, []string{"R1", "R3"}},
		{"LS-156 owner node node-2", location.RouteFilter{OwnerNodeRID: vRIDPtr("node-2")}, []string{"R2", "R3"}},
		{"LS-156 owner a", location.RouteFilter{OwnerID: vPtr("a")}, []string{"R1", "R2"}},
		{"LS-156 empty filter", location.RouteFilter{}, []string{"R1", "R2", "R3"}},
		{"every field", location.RouteFilter{RouteKind: vPtr(location.RouteActorSession), OwnerNodeRID: vRIDPtr("node-2"), OwnerID: vPtr("b")}, []string{"R3"}},
		{"route kind FrameworkRoute", location.RouteFilter{RouteKind: vPtr(location.RouteFrameworkRoute)}, []string{}},
	})
}

// TestFilterRoutingIDEquality checks the RID rule of 01 §6 on every filter:
// an absent filter RID matches everything, a present one matches exactly the
// rows whose RID has the same bytes (text and opaque ids alike), and never a
// peer row without a RID.
func TestFilterRoutingIDEquality(t *testing.T) {
	textID := location.RoutingID("node-a")
	opaqueSameBytes, err := location.RoutingIDFromHex("6E6F64652D61") // "node-a"
	require.NoError(t, err)
	opaque, err := location.RoutingIDFromHex("00ff")
	require.NoError(t, err)

	cases := []struct {
		name   string
		filter *location.RoutingID
		row    *location.RoutingID
		want   bool
	}{
		{"absent filter, absent row", nil, nil, true},
		{"absent filter, present row", nil, &textID, true},
		{"present filter, absent row", &textID, nil, false},
		{"same text", &textID, vPtr(location.RoutingID("node-a")), true},
		{"different text", &textID, vPtr(location.RoutingID("node-b")), false},
		{"text and opaque with the same bytes", &textID, &opaqueSameBytes, true},
		{"opaque and opaque", &opaque, vPtr(location.RoutingID("\x00\xff")), true},
		{"opaque and other opaque", &opaque, vPtr(location.RoutingID("\x00\xfe")), false},
		{"case matters", &textID, vPtr(location.RoutingID("Node-A")), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, location.PeerFilter{NodeRID: tc.filter}.Matches(location.PeerLocation{NodeRID: tc.row}), "peer")
			if tc.row == nil {
				return // spot, actor and route rows always carry a RID
			}
			require.Equal(t, tc.want, location.SpotFilter{NodeRID: tc.filter}.Matches(location.SpotLocation{OwnerNodeRID: *tc.row}), "spot")
			require.Equal(t, tc.want, location.ActorFilter{NodeRID: tc.filter}.Matches(location.ActorLocation{OwnerNodeRID: *tc.row}), "actor")
			require.Equal(t, tc.want, location.RouteFilter{OwnerNodeRID: tc.filter}.Matches(location.RouteLocation{OwnerNodeRID: *tc.row}), "route")
		})
	}
}
