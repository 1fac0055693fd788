package location

import "time"

// WriteResult is the outcome of a row write (and of peer and route removes).
// Failures carry Generation 0 and UpdatedAt Epoch().
type WriteResult struct {
	Status     WriteStatus
	Generation int64
	UpdatedAt  time.Time
}

// ActorRef references one incarnation of an actor. Stored verbatim.
type ActorRef struct {
	ActorID          string    `json:"actorId"`
	ObjectGeneration int64     `json:"objectGeneration"`
	MeshName         string    `json:"meshName"`
	NodeRID          RoutingID `json:"nodeRid"`
}

// PeerKey identifies a peer row. When NodeRID is present it is the identity
// and Endpoint is ignored (anomaly A-19); otherwise Endpoint is.
type PeerKey struct {
	AutoConnectType AutoConnectType `json:"autoConnectType"`
	MeshName        string          `json:"meshName"`
	Role            PeerRole        `json:"role"`
	NodeRID         *RoutingID      `json:"nodeRid,omitempty"`
	Endpoint        *string         `json:"endpoint,omitempty"`
}

// PeerLocation is an auto-connect peer row (table "peers").
type PeerLocation struct {
	AutoConnectType AutoConnectType   `json:"autoConnectType"`
	MeshName        string            `json:"meshName"`
	NodeRID         *RoutingID        `json:"nodeRid,omitempty"`
	Role            PeerRole          `json:"role"`
	Endpoint        string            `json:"endpoint"`
	Weight          int64             `json:"weight"`
	Draining        bool              `json:"draining"`
	Value           int64             `json:"value"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	Capabilities    []string          `json:"capabilities,omitempty"`
	OwnerID         string            `json:"ownerId"`
	// Generation is the row generation: assigned by the store on NewClaim and
	// Takeover; a Renew passes the generation it was given (0 = any).
	Generation int64     `json:"generation"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// Key returns the row's key.
func (p *PeerLocation) Key() PeerKey {
	ep := p.Endpoint
	return PeerKey{AutoConnectType: p.AutoConnectType, MeshName: p.MeshName, Role: p.Role, NodeRID: p.NodeRID, Endpoint: &ep}
}

// PeerFilter selects peer rows; nil fields match everything.
type PeerFilter struct {
	AutoConnectType *AutoConnectType
	MeshName        *string
	Role            *PeerRole
	NodeRID         *RoutingID
	Endpoint        *string
}

// SpotKey identifies a spot row.
type SpotKey struct {
	MeshName string `json:"meshName"`
	SpotID   string `json:"spotId"`
}

// SpotLocation is a spot row (table "spots"). Its row generation is not a
// field: write results report it.
type SpotLocation struct {
	MeshName            string    `json:"meshName"`
	SpotID              string    `json:"spotId"`
	SpotGeneration      int64     `json:"spotGeneration"`
	SpotType            string    `json:"spotType"`
	OwnerNodeRID        RoutingID `json:"ownerNodeRid"`
	OwnerNodeGeneration int64     `json:"ownerNodeGeneration"`
	SpotKind            SpotKind  `json:"spotKind"`
	OwnerID             string    `json:"ownerId"`
	LeaseGeneration     int64     `json:"leaseGeneration"`
	UpdatedAt           time.Time `json:"updatedAt"`
}

// Key returns the row's key.
func (s *SpotLocation) Key() SpotKey { return SpotKey{MeshName: s.MeshName, SpotID: s.SpotID} }

// Owner returns the row's owner token: the owner id and lease generation of
// the owner that wrote it.
func (s *SpotLocation) Owner() OwnerToken {
	return OwnerToken{OwnerID: s.OwnerID, LeaseGeneration: s.LeaseGeneration}
}

// SpotFilter selects spot rows; nil fields match everything.
type SpotFilter struct {
	MeshName *string
	SpotType *string
	NodeRID  *RoutingID // matches OwnerNodeRID
	SpotKind *SpotKind
}

// ActorKey identifies an actor row.
type ActorKey struct {
	MeshName string `json:"meshName"`
	ActorID  string `json:"actorId"`
}

// ActorLocation is an actor row (table "actors"). Its row generation is not a
// field: write results report it.
type ActorLocation struct {
	MeshName            string    `json:"meshName"`
	ActorID             string    `json:"actorId"`
	ActorType           string    `json:"actorType"`
	ActorRef            ActorRef  `json:"actorRef"`
	OwnerNodeRID        RoutingID `json:"ownerNodeRid"`
	OwnerNodeGeneration int64     `json:"ownerNodeGeneration"`
	SpotKind            SpotKind  `json:"spotKind"`
	SpotID              string    `json:"spotId"`
	SpotGeneration      int64     `json:"spotGeneration"`
	MembershipEpoch     int64     `json:"membershipEpoch"`
	OwnerID             string    `json:"ownerId"`
	LeaseGeneration     int64     `json:"leaseGeneration"`
	UpdatedAt           time.Time `json:"updatedAt"`
}

// Key returns the row's key.
func (a *ActorLocation) Key() ActorKey { return ActorKey{MeshName: a.MeshName, ActorID: a.ActorID} }

// Owner returns the row's owner token: the owner id and lease generation of
// the owner that wrote it.
func (a *ActorLocation) Owner() OwnerToken {
	return OwnerToken{OwnerID: a.OwnerID, LeaseGeneration: a.LeaseGeneration}
}

// ActorFilter selects actor rows of every mesh; nil fields match everything.
type ActorFilter struct {
	ActorType    *string
	NodeRID      *RoutingID // matches OwnerNodeRID
	SpotID       *string
	LocationKind *SpotKind // matches SpotKind
}

// RouteKey identifies a route row.
type RouteKey struct {
	RouteKind RouteKind `json:"routeKind"`
	RouteKey  string    `json:"routeKey"`
}

// RouteLocation is a route row (table "routes").
type RouteLocation struct {
	RouteKind    RouteKind `json:"routeKind"`
	RouteKey     string    `json:"routeKey"`
	OwnerNodeRID RoutingID `json:"ownerNodeRid"`
	OwnerID      string    `json:"ownerId"`
	// Generation is the row generation, as for peers.
	Generation int64     `json:"generation"`
	Value      []byte    `json:"value"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// Key returns the row's key.
func (r *RouteLocation) Key() RouteKey { return RouteKey{RouteKind: r.RouteKind, RouteKey: r.RouteKey} }

// RouteFilter selects route rows; nil fields match everything.
type RouteFilter struct {
	RouteKind    *RouteKind
	OwnerNodeRID *RoutingID
	OwnerID      *string
}
