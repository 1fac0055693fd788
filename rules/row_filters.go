package rules

import "github.com/zlink-systems/zlink-etcd/location"

// Filter predicates of the location lists (01 §6): every present filter
// field must equal the row's field exactly; absent fields match everything.
// Routing ids compare by their bytes (location.RoutingIDsEqual), so a filter
// id never matches a peer row without a node id.

// MatchPeer reports whether a peer row matches f.
func MatchPeer(p *location.PeerLocation, f *location.PeerFilter) bool {
	return (f.AutoConnectType == nil || p.AutoConnectType == *f.AutoConnectType) &&
		(f.MeshName == nil || p.MeshName == *f.MeshName) &&
		(f.Role == nil || p.Role == *f.Role) &&
		(f.NodeRID == nil || location.RoutingIDsEqual(p.NodeRID, f.NodeRID)) &&
		(f.Endpoint == nil || p.Endpoint == *f.Endpoint)
}

// MatchSpot reports whether a spot row matches f.
func MatchSpot(s *location.SpotLocation, f *location.SpotFilter) bool {
	return (f.MeshName == nil || s.MeshName == *f.MeshName) &&
		(f.SpotType == nil || s.SpotType == *f.SpotType) &&
		(f.NodeRID == nil || s.OwnerNodeRID == *f.NodeRID) &&
		(f.SpotKind == nil || s.SpotKind == *f.SpotKind)
}

// MatchActor reports whether an actor row matches f (the filter has no mesh
// field: rows of every mesh are candidates).
func MatchActor(a *location.ActorLocation, f *location.ActorFilter) bool {
	return (f.ActorType == nil || a.ActorType == *f.ActorType) &&
		(f.NodeRID == nil || a.OwnerNodeRID == *f.NodeRID) &&
		(f.SpotID == nil || a.SpotID == *f.SpotID) &&
		(f.LocationKind == nil || a.SpotKind == *f.LocationKind)
}

// MatchRoute reports whether a route row matches f.
func MatchRoute(r *location.RouteLocation, f *location.RouteFilter) bool {
	return (f.RouteKind == nil || r.RouteKind == *f.RouteKind) &&
		(f.OwnerNodeRID == nil || r.OwnerNodeRID == *f.OwnerNodeRID) &&
		(f.OwnerID == nil || r.OwnerID == *f.OwnerID)
}
