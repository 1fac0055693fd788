package location

// Filter matching (01-model §6): an absent (nil) field matches every row,
// present fields are AND-ed, text compares exactly (case-sensitive, no
// normalisation), and routing ids compare with RoutingIDsEqual — so a present
// filter RID never matches a row without one.

// Matches reports whether the peer row satisfies the filter.
func (f PeerFilter) Matches(p PeerLocation) bool {
	return (f.AutoConnectType == nil || *f.AutoConnectType == p.AutoConnectType) &&
		(f.MeshName == nil || *f.MeshName == p.MeshName) &&
		(f.Role == nil || *f.Role == p.Role) &&
		(f.NodeRID == nil || RoutingIDsEqual(f.NodeRID, p.NodeRID)) &&
		(f.Endpoint == nil || *f.Endpoint == p.Endpoint)
}

// Matches reports whether the spot row satisfies the filter; NodeRID matches
// the row's OwnerNodeRID.
func (f SpotFilter) Matches(s SpotLocation) bool {
	return (f.MeshName == nil || *f.MeshName == s.MeshName) &&
		(f.SpotType == nil || *f.SpotType == s.SpotType) &&
		(f.NodeRID == nil || RoutingIDsEqual(f.NodeRID, &s.OwnerNodeRID)) &&
		(f.SpotKind == nil || *f.SpotKind == s.SpotKind)
}

// Matches reports whether the actor row satisfies the filter; NodeRID matches
// the row's OwnerNodeRID and LocationKind its SpotKind. The filter has no
// mesh field: rows of every mesh are candidates.
func (f ActorFilter) Matches(a ActorLocation) bool {
	return (f.ActorType == nil || *f.ActorType == a.ActorType) &&
		(f.NodeRID == nil || RoutingIDsEqual(f.NodeRID, &a.OwnerNodeRID)) &&
		(f.SpotID == nil || *f.SpotID == a.SpotID) &&
		(f.LocationKind == nil || *f.LocationKind == a.SpotKind)
}

// Matches reports whether the route row satisfies the filter.
func (f RouteFilter) Matches(r RouteLocation) bool {
	return (f.RouteKind == nil || *f.RouteKind == r.RouteKind) &&
		(f.OwnerNodeRID == nil || RoutingIDsEqual(f.OwnerNodeRID, &r.OwnerNodeRID)) &&
		(f.OwnerID == nil || *f.OwnerID == r.OwnerID)
}
