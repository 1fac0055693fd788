package autoconnect

import "github.com/zlink-systems/zlink-etcd/location"

// Local describes this process's side of auto-connect.
type Local struct {
	// AutoConnectType is the family: RouteMesh or Fanout.
	AutoConnectType location.AutoConnectType
	// MeshName is the mesh (or fanout channel) to join.
	MeshName string
	// Role is the local socket role.
	Role location.PeerRole
	// NodeRID is the local routing id, nil when there is none.
	NodeRID *location.RoutingID
	// Endpoint is the local endpoint; "" marks a dial-only node.
	Endpoint string
	// ObjectRole is the node's object role; "" means none.
	ObjectRole location.ObjectRole
	// HasRouteMeshServerChannel says the node has a RouteMesh channel marked
	// as server.
	HasRouteMeshServerChannel bool
}
