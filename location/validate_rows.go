package location

// Validation of the write intent and of the peer, spot, actor and route
// tables (02-location-tables §3, §4). The reference validates little here:
// peer keys must be encodable and spot ids must fit a key. The Go-only rules
// (anomaly A-31, codecs 07 §2.4) are listed with each validator.

// Codes of row validation errors.
const (
	// CodeWriteIntent: an intent outside 1..3 (Range; Go fix of A-31).
	CodeWriteIntent = "write.intent"
	// CodePeerAutoConnectType: the auto-connect type has no canonical name
	// (Range).
	CodePeerAutoConnectType = "peer.autoconnect_type"
	// CodePeerRole: the role has no canonical name (Range).
	CodePeerRole = "peer.role"
	// CodePeerNodeRID: a node RID is present but empty, which would collide
	// with a peer that has neither RID nor endpoint (Type; Go rule, 07 §2.4).
	CodePeerNodeRID = "peer.node_rid"
	// CodeSpotID: a spot id is not 1..255 bytes of UTF-8 (Type).
	CodeSpotID = "spot.id"
)

// ValidateWriteIntent checks that intent is NewClaim, Renew or Takeover. The
// reference treats other numbers as Renew or worse (anomaly A-31); Go
// rejects them.
func ValidateWriteIntent(intent WriteIntent) error {
	switch intent {
	case IntentNewClaim, IntentRenew, IntentTakeover:
		return nil
	default:
		return NewRangeError(CodeWriteIntent, "write intent %d is outside 1..3 (NewClaim, Renew, Takeover)", int(intent))
	}
}

// ValidatePeerKey checks that a peer key can be encoded: a known auto-connect
// type, a known role, and a node RID that is absent or non-empty; then that
// the mesh name and endpoint are valid UTF-8. RemovePeer uses it.
func ValidatePeerKey(k PeerKey) error {
	if err := validatePeerIdentity(k.AutoConnectType, k.Role, k.NodeRID); err != nil {
		return err
	}
	fields := []textField{{"peer meshName", k.MeshName}}
	if k.Endpoint != nil {
		fields = append(fields, textField{"peer endpoint", *k.Endpoint})
	}
	return requireUTF8(fields...)
}

// ValidatePeer checks a peer row and the intent of UpdatePeer: the key is
// encodable (see ValidatePeerKey), every text field is valid UTF-8, and the
// intent is 1..3. Weight, value, draining and generation are opaque.
func ValidatePeer(p PeerLocation, intent WriteIntent) error {
	if err := validatePeerIdentity(p.AutoConnectType, p.Role, p.NodeRID); err != nil {
		return err
	}
	fields := []textField{
		{"peer meshName", p.MeshName},
		{"peer endpoint", p.Endpoint},
		{"peer ownerId", p.OwnerID},
	}
	fields = append(fields, mapStringsUTF8("peer metadata", p.Metadata)...)
	fields = append(fields, stringsUTF8("peer capabilities", p.Capabilities)...)
	if err := requireUTF8(fields...); err != nil {
		return err
	}
	return ValidateWriteIntent(intent)
}

// validatePeerIdentity is the encodability of a peer key, in key-segment
// order: auto-connect type, role, then the RID (Go rule).
func validatePeerIdentity(t AutoConnectType, r PeerRole, rid *RoutingID) error {
	if !t.Known() {
		return NewRangeError(CodePeerAutoConnectType, "peer autoConnectType %d is neither RouteMesh (1) nor Fanout (2)", int(t))
	}
	if !r.Known() {
		return NewRangeError(CodePeerRole, "peer role %d is none of Spot (2), Router (3), Dealer (4), Pub (5), Sub (6)", int(r))
	}
	if rid != nil && *rid == "" {
		return NewTypeError(CodePeerNodeRID, "peer nodeRid is present but empty; leave it absent to key the peer by its endpoint")
	}
	return nil
}

// ValidateSpotKey checks a spot key: the spot id is 1..255 bytes of UTF-8
// (SpotIdBytes; NUL allowed) and the mesh name is valid UTF-8. RemoveSpot and
// ResolveSpot use it.
func ValidateSpotKey(k SpotKey) error {
	if p := spotIDProblem(k.SpotID); p != "" {
		return NewTypeError(CodeSpotID, "spotId %s %s", quote(k.SpotID), p)
	}
	return requireUTF8(textField{"spot meshName", k.MeshName})
}

// ValidateSpot checks a spot row and the intent of UpdateSpot: the key (see
// ValidateSpotKey), the other text fields are valid UTF-8, and the intent is
// 1..3. Generations and the owner node are opaque.
func ValidateSpot(s SpotLocation, intent WriteIntent) error {
	if err := ValidateSpotKey(s.Key()); err != nil {
		return err
	}
	if err := requireUTF8(
		textField{"spot spotType", s.SpotType},
		textField{"spot spotKind", string(s.SpotKind)},
		textField{"spot ownerId", s.OwnerID},
	); err != nil {
		return err
	}
	return ValidateWriteIntent(intent)
}

// ValidateActorKey checks that an actor key's mesh name and actor id are
// valid UTF-8 (the reference checks nothing). RemoveActor and ResolveActor
// use it.
func ValidateActorKey(k ActorKey) error {
	return requireUTF8(textField{"actor meshName", k.MeshName}, textField{"actor actorId", k.ActorID})
}

// ValidateActor checks an actor row and the intent of UpdateActor: every text
// field is valid UTF-8 and the intent is 1..3. Everything else is opaque.
func ValidateActor(a ActorLocation, intent WriteIntent) error {
	if err := ValidateActorKey(a.Key()); err != nil {
		return err
	}
	if err := requireUTF8(
		textField{"actor actorType", a.ActorType},
		textField{"actor actorRef.actorId", a.ActorRef.ActorID},
		textField{"actor actorRef.meshName", a.ActorRef.MeshName},
		textField{"actor spotKind", string(a.SpotKind)},
		textField{"actor spotId", a.SpotID},
		textField{"actor ownerId", a.OwnerID},
	); err != nil {
		return err
	}
	return ValidateWriteIntent(intent)
}

// ValidateRouteKey checks that a route key's text is valid UTF-8 (the route
// kind is not validated). RemoveRoute and ResolveRoute use it.
func ValidateRouteKey(k RouteKey) error {
	return requireUTF8(textField{"route routeKey", k.RouteKey})
}

// ValidateRoute checks a route row and the intent of UpdateRoute: text fields
// are valid UTF-8 and the intent is 1..3. The value bytes are opaque.
func ValidateRoute(r RouteLocation, intent WriteIntent) error {
	if err := ValidateRouteKey(r.Key()); err != nil {
		return err
	}
	if err := requireUTF8(textField{"route ownerId", r.OwnerID}); err != nil {
		return err
	}
	return ValidateWriteIntent(intent)
}
