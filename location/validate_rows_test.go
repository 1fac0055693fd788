package location_test

import (
	"strings"
	"testing"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

func vRIDPtr(s string) *location.RoutingID { r := location.RoutingID(s); return &r }

func TestValidateWriteIntent(t *testing.T) {
	vInputs(t, location.ValidateWriteIntent, []vInput[location.WriteIntent]{
		{"NewClaim", location.IntentNewClaim, vOK()},
		{"Renew", location.IntentRenew, vOK()},
		{"Takeover", location.IntentTakeover, vOK()},
		{"LS-207 intent 0", 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", 4, vRange(location.CodeWriteIntent)},
		{"negative", -1, vRange(location.CodeWriteIntent)},
	})
}

// vPeer is PEER(a, 0) of the locations catalogue.
func vPeer() location.PeerLocation { return fixture.PEER("a", 0) }

func TestValidatePeer(t *testing.T) {
	vWriteMutations(t, vPeer, location.ValidatePeer, []vWriteCase[location.PeerLocation]{
		{"fixture is valid", func(*location.PeerLocation) {}, location.IntentNewClaim, vOK()},
		{"LS-112 autoConnectType 0", func(p *location.PeerLocation) { p.AutoConnectType = 0 }, location.IntentNewClaim, vRange(location.CodePeerAutoConnectType)},
		{"LS-112 role 0", func(p *location.PeerLocation) { p.Role = 0 }, location.IntentNewClaim, vRange(location.CodePeerRole)},
		{"LS-112 role 1 (reserved)", func(p *location.PeerLocation) { p.Role = 1 }, location.IntentNewClaim, vRange(location.CodePeerRole)},
		{"LS-112 role 7", func(p *location.PeerLocation) { p.Role = 7 }, location.IntentNewClaim, vRange(location.CodePeerRole)},
		{"autoConnectType 3", func(p *location.PeerLocation) { p.AutoConnectType = 3 }, location.IntentNewClaim, vRange(location.CodePeerAutoConnectType)},
		{"type before role", func(p *location.PeerLocation) { p.AutoConnectType = 0; p.Role = 0 }, location.IntentNewClaim, vRange(location.CodePeerAutoConnectType)},
		{"every known role", func(p *location.PeerLocation) {
			p.AutoConnectType = location.AutoConnectFanout
			p.Role = location.PeerRoleSub
		}, location.IntentNewClaim, vOK()},
		{"no nodeRid (keyed by endpoint)", func(p *location.PeerLocation) { p.NodeRID = nil }, location.IntentNewClaim, vOK()},
		{"nodeRid present but empty", func(p *location.PeerLocation) { p.NodeRID = vRIDPtr("") }, location.IntentNewClaim, vType(location.CodePeerNodeRID)},
		{"opaque nodeRid", func(p *location.PeerLocation) { p.NodeRID = vRIDPtr("\x00\xff") }, location.IntentNewClaim, vOK()},
		{"nothing else is validated", func(p *location.PeerLocation) {
			p.MeshName, p.Endpoint, p.OwnerID = "", "", ""
			p.Weight, p.Value, p.Generation = -1, -1, -1
			p.Metadata, p.Capabilities = nil, nil
		}, location.IntentNewClaim, vOK()},
		{"meshName invalid UTF-8", func(p *location.PeerLocation) { p.MeshName = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"metadata value invalid UTF-8", func(p *location.PeerLocation) { p.Metadata["k"] = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"metadata key invalid UTF-8", func(p *location.PeerLocation) { p.Metadata["\xff"] = "v" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"capability invalid UTF-8", func(p *location.PeerLocation) { p.Capabilities = append(p.Capabilities, "\xc3") }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"key before intent", func(p *location.PeerLocation) { p.Role = 0 }, 0, vRange(location.CodePeerRole)},
		{"LS-207 intent 0", func(*location.PeerLocation) {}, 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", func(*location.PeerLocation) {}, 4, vRange(location.CodeWriteIntent)},
	})
}

func TestValidatePeerKey(t *testing.T) {
	vMutations(t, fixture.PeerKey, location.ValidatePeerKey, []vCase[location.PeerKey]{
		{"PK is valid", func(*location.PeerKey) {}, vOK()},
		{"LS-112 RemovePeer with role 0", func(k *location.PeerKey) { k.Role = 0 }, vRange(location.CodePeerRole)},
		{"autoConnectType 0", func(k *location.PeerKey) { k.AutoConnectType = 0 }, vRange(location.CodePeerAutoConnectType)},
		{"LS-110 endpoint ignored beside nodeRid", func(k *location.PeerKey) { k.Endpoint = vStrPtr("tcp://other") }, vOK()},
		{"LS-111 endpoint identity", func(k *location.PeerKey) { k.NodeRID = nil; k.Endpoint = vStrPtr("tcp://127.0.0.1:5001") }, vOK()},
		{"neither nodeRid nor endpoint", func(k *location.PeerKey) { k.NodeRID = nil }, vOK()},
		{"nodeRid present but empty", func(k *location.PeerKey) { k.NodeRID = vRIDPtr("") }, vType(location.CodePeerNodeRID)},
		{"endpoint invalid UTF-8", func(k *location.PeerKey) { k.Endpoint = vStrPtr("\xff") }, vType(location.CodeTextUTF8)},
	})
}

// vSpot is SPOT(a, 1) of the locations catalogue.
func vSpot() location.SpotLocation { return fixture.SPOT("a", 1) }

func TestValidateSpot(t *testing.T) {
	vWriteMutations(t, vSpot, location.ValidateSpot, []vWriteCase[location.SpotLocation]{
		{"fixture is valid", func(*location.SpotLocation) {}, location.IntentNewClaim, vOK()},
		{"LS-121 spotId empty", func(s *location.SpotLocation) { s.SpotID = "" }, location.IntentNewClaim, vType(location.CodeSpotID)},
		{"LS-121 spotId 256 bytes", func(s *location.SpotLocation) { s.SpotID = strings.Repeat("s", 256) }, location.IntentNewClaim, vType(location.CodeSpotID)},
		{"LS-121 spotId 255 bytes", func(s *location.SpotLocation) { s.SpotID = strings.Repeat("s", 255) }, location.IntentNewClaim, vOK()},
		{"spotId 255 bytes of multibyte text", func(s *location.SpotLocation) { s.SpotID = strings.Repeat("€", 85) }, location.IntentNewClaim, vOK()},
		{"spotId with NUL", func(s *location.SpotLocation) { s.SpotID = "spot\x00" }, location.IntentNewClaim, vOK()},
		{"spotId invalid UTF-8", func(s *location.SpotLocation) { s.SpotID = "spot\xff" }, location.IntentNewClaim, vType(location.CodeSpotID)},
		{"empty mesh and owner are not validated", func(s *location.SpotLocation) { s.MeshName, s.OwnerID = "", "" }, location.IntentNewClaim, vOK()},
		{"spotType invalid UTF-8", func(s *location.SpotLocation) { s.SpotType = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"spot id before intent", func(s *location.SpotLocation) { s.SpotID = "" }, 0, vType(location.CodeSpotID)},
		{"LS-207 intent 0", func(*location.SpotLocation) {}, 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", func(*location.SpotLocation) {}, 4, vRange(location.CodeWriteIntent)},
	})
}

func TestValidateSpotKey(t *testing.T) {
	vInputs(t, location.ValidateSpotKey, []vInput[location.SpotKey]{
		{"valid", location.SpotKey{MeshName: "play", SpotID: "spot-1"}, vOK()},
		{"LS-121 RemoveSpot/ResolveSpot spotId empty", location.SpotKey{MeshName: "play"}, vType(location.CodeSpotID)},
		{"LS-121 RemoveSpot/ResolveSpot spotId 256 bytes", location.SpotKey{MeshName: "play", SpotID: strings.Repeat("s", 256)}, vType(location.CodeSpotID)},
		{"LS-121 spotId 255 bytes", location.SpotKey{MeshName: "play", SpotID: strings.Repeat("s", 255)}, vOK()},
		{"empty mesh", location.SpotKey{SpotID: "spot-1"}, vOK()},
		{"mesh invalid UTF-8", location.SpotKey{MeshName: "\xff", SpotID: "spot-1"}, vType(location.CodeTextUTF8)},
		{"spot id before mesh", location.SpotKey{MeshName: "\xff"}, vType(location.CodeSpotID)},
	})
}

// vActor is ACTOR(a, 1) of the locations catalogue.
func vActor() location.ActorLocation { return fixture.ACTOR("a", 1) }

func TestValidateActor(t *testing.T) {
	vWriteMutations(t, vActor, location.ValidateActor, []vWriteCase[location.ActorLocation]{
		{"fixture is valid", func(*location.ActorLocation) {}, location.IntentNewClaim, vOK()},
		{"nothing of the reference is validated", func(a *location.ActorLocation) {
			a.MeshName, a.ActorID, a.ActorType, a.SpotID, a.OwnerID = "", "", "", "", ""
			a.ActorRef = location.ActorRef{}
			a.SpotKind = "nonsense"
			a.LeaseGeneration, a.MembershipEpoch = -1, -1
		}, location.IntentTakeover, vOK()},
		{"actorId invalid UTF-8", func(a *location.ActorLocation) { a.ActorID = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"actorRef.actorId invalid UTF-8", func(a *location.ActorLocation) { a.ActorRef.ActorID = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"ownerId invalid UTF-8", func(a *location.ActorLocation) { a.OwnerID = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"opaque owner node rid", func(a *location.ActorLocation) { a.OwnerNodeRID = "\xff" }, location.IntentNewClaim, vOK()},
		{"LS-207 intent 0", func(*location.ActorLocation) {}, 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", func(*location.ActorLocation) {}, 4, vRange(location.CodeWriteIntent)},
	})
}

func TestValidateActorKey(t *testing.T) {
	vCheck(t, location.ValidateActorKey(location.ActorKey{MeshName: "play", ActorID: "actor-1"}), vOK())
	vCheck(t, location.ValidateActorKey(location.ActorKey{}), vOK())
	vCheck(t, location.ValidateActorKey(location.ActorKey{MeshName: "\xff", ActorID: "a"}), vType(location.CodeTextUTF8))
	vCheck(t, location.ValidateActorKey(location.ActorKey{MeshName: "play", ActorID: "\xff"}), vType(location.CodeTextUTF8))
}

// vRoute is ROUTE(a, 0) of the locations catalogue.
func vRoute() location.RouteLocation { return fixture.ROUTE("a", 0) }

func TestValidateRoute(t *testing.T) {
	vWriteMutations(t, vRoute, location.ValidateRoute, []vWriteCase[location.RouteLocation]{
		{"fixture is valid", func(*location.RouteLocation) {}, location.IntentNewClaim, vOK()},
		{"route kind and key are not validated", func(r *location.RouteLocation) { r.RouteKind = 99; r.RouteKey = "" }, location.IntentNewClaim, vOK()},
		{"value bytes are opaque", func(r *location.RouteLocation) { r.Value = []byte{0xff, 0} }, location.IntentNewClaim, vOK()},
		{"routeKey invalid UTF-8", func(r *location.RouteLocation) { r.RouteKey = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"ownerId invalid UTF-8", func(r *location.RouteLocation) { r.OwnerID = "\xff" }, location.IntentNewClaim, vType(location.CodeTextUTF8)},
		{"LS-207 intent 0", func(*location.RouteLocation) {}, 0, vRange(location.CodeWriteIntent)},
		{"LS-207 intent 4", func(*location.RouteLocation) {}, 4, vRange(location.CodeWriteIntent)},
	})
}

func TestValidateRouteKey(t *testing.T) {
	vCheck(t, location.ValidateRouteKey(location.RouteKey{RouteKind: location.RouteSpotName, RouteKey: "session:42"}), vOK())
	vCheck(t, location.ValidateRouteKey(location.RouteKey{}), vOK())
	vCheck(t, location.ValidateRouteKey(location.RouteKey{RouteKey: "\xff"}), vType(location.CodeTextUTF8))
}
