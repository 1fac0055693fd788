package autoconnect

import (
	"strings"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Metadata keys the planner reads from peer rows.
const (
	// MetadataObjectRole holds the peer's object role ("client", "server";
	// anything else counts as none).
	MetadataObjectRole = "objectRole"
	// MetadataHasRouteMeshServerChannel is "true" (exactly) when the peer has
	// a RouteMesh server channel.
	MetadataHasRouteMeshServerChannel = "hasRouteMeshServerChannel"
	// MetadataDescriptorRevision is the peer descriptor's revision, decimal.
	MetadataDescriptorRevision = "descriptorRevision"
	// MetadataSecurityIdentity is the peer's security identity (read by
	// executors, not by the planner).
	MetadataSecurityIdentity = "securityIdentity"
)

// Candidates returns every peer that belongs to the local mesh and role
// family, draining ones included, whether or not this side dials it, in
// row order. Rows with the same target key yield one target: the later
// row's, at the first row's position.
func Candidates(local Local, rows []location.PeerLocation) []Target {
	return cloneTargets(candidateMap(local, newRowTargets(rows)).list())
}

// Desired returns the candidates this side dials (ShouldDial), in row order
// and deduplicated like Candidates. Draining peers are left out unless
// includeDraining is set.
func Desired(local Local, rows []location.PeerLocation, includeDraining bool) []Target {
	return cloneTargets(desiredMap(local, newRowTargets(rows), includeDraining).list())
}

// NotRequired returns, for a RouteMesh local, the peers of the same mesh
// whose connection is not required (both sides Object clients without a
// RouteMesh server channel), with DescriptorRevision parsed from the row
// metadata. Role and draining are not checked here. A Fanout local gets none.
// The list is not deduplicated.
func NotRequired(local Local, rows []location.PeerLocation) []Target {
	return notRequired(local, newRowTargets(rows))
}

// notRequired is NotRequired over a tick's row targets; the targets it
// returns are deep copies.
func notRequired(local Local, rt *rowTargets) []Target {
	if local.AutoConnectType != location.AutoConnectRouteMesh {
		return []Target{}
	}
	out := []Target{}
	for i := range rt.rows {
		row := &rt.rows[i]
		if row.AutoConnectType != local.AutoConnectType || row.MeshName != local.MeshName ||
			row.Endpoint == "" || IsSelf(local, *row) || !connectionNotRequired(local, *row) {
			continue
		}
		t := rt.at(i).clone()
		if text, ok := row.Metadata[MetadataDescriptorRevision]; ok {
			t.DescriptorRevision = ParseDescriptorRevision(text)
		}
		out = append(out, t)
	}
	return out
}

// candidateMap is Candidates as an ordered map.
func candidateMap(local Local, rt *rowTargets) *targetMap {
	m := newTargetMap(len(rt.rows))
	for i := range rt.rows {
		if IsCandidate(local, rt.rows[i], true) {
			m.set(rt.at(i))
		}
	}
	return m
}

// desiredMap is Desired as an ordered map.
func desiredMap(local Local, rt *rowTargets, includeDraining bool) *targetMap {
	m := newTargetMap(len(rt.rows))
	for i := range rt.rows {
		if IsCandidate(local, rt.rows[i], includeDraining) && ShouldDial(local, rt.rows[i]) {
			m.set(rt.at(i))
		}
	}
	return m
}

// rowTargets builds the target of each of one listing's rows at most once
// (targetOf), however many of a tick's plans use it. The targets share the
// rows' metadata: they are not modified, and what leaves the reconciler is
// a deep copy (Target.clone).
type rowTargets struct {
	rows    []location.PeerLocation
	targets []Target
	built   []bool
}

// newRowTargets returns the row targets of rows, none built yet.
func newRowTargets(rows []location.PeerLocation) *rowTargets {
	return &rowTargets{rows: rows, targets: make([]Target, len(rows)), built: make([]bool, len(rows))}
}

// at returns the target of row i.
func (rt *rowTargets) at(i int) Target {
	if !rt.built[i] {
		rt.targets[i], rt.built[i] = targetOf(rt.rows[i]), true
	}
	return rt.targets[i]
}

// RoleAllowed reports whether a peer of the given role takes part in
// auto-connect of the given family: Router for RouteMesh, Pub or Sub for
// Fanout, nothing otherwise.
func RoleAllowed(t location.AutoConnectType, role location.PeerRole) bool {
	switch t {
	case location.AutoConnectRouteMesh:
		return role == location.PeerRoleRouter
	case location.AutoConnectFanout:
		return role == location.PeerRolePub || role == location.PeerRoleSub
	default:
		return false
	}
}

// IsSelf reports whether row describes the local node: the routing ids are
// equal, or (even with different ids) the endpoints are equal strings.
func IsSelf(local Local, row location.PeerLocation) bool {
	if local.NodeRID != nil && row.NodeRID != nil && *local.NodeRID == *row.NodeRID {
		return true
	}
	return row.Endpoint == local.Endpoint
}

// IsCandidate reports whether row is a peer of the local node: same family
// and mesh, not draining (unless includeDraining), an allowed role, a
// non-empty endpoint, and not the local node itself.
func IsCandidate(local Local, row location.PeerLocation, includeDraining bool) bool {
	return row.AutoConnectType == local.AutoConnectType &&
		row.MeshName == local.MeshName &&
		(includeDraining || !row.Draining) &&
		RoleAllowed(row.AutoConnectType, row.Role) &&
		row.Endpoint != "" &&
		!IsSelf(local, row)
}

// ShouldDial reports whether the local node initiates the connection to row.
// RouteMesh: both sides are Routers, the connection is required, and the
// local node is the pairwise initiator. Fanout: a local Sub dials Pubs.
func ShouldDial(local Local, row location.PeerLocation) bool {
	switch local.AutoConnectType {
	case location.AutoConnectRouteMesh:
		return local.Role == location.PeerRoleRouter &&
			row.Role == location.PeerRoleRouter &&
			!connectionNotRequired(local, row) &&
			IsInitiator(local, row)
	case location.AutoConnectFanout:
		return local.Role == location.PeerRoleSub && row.Role == location.PeerRolePub
	default:
		return false
	}
}

// IsInitiator reports whether the local node is the side of the pair that
// dials: a dial-only node (empty endpoint) always is; otherwise the lower
// routing id (byte order) dials; without two ids the lower endpoint does.
// The framework compares endpoints with locale collation, this function in
// byte order (they differ only for punctuation and case, and only for rows
// without a rid).
func IsInitiator(local Local, row location.PeerLocation) bool {
	if local.Endpoint == "" {
		return true
	}
	if local.NodeRID != nil && row.NodeRID != nil {
		if c := strings.Compare(string(*local.NodeRID), string(*row.NodeRID)); c != 0 {
			return c < 0
		}
	}
	return local.Endpoint < row.Endpoint
}

// connectionNotRequired reports whether the RouteMesh connection between the
// local node and row is not required: both are Object clients and neither
// has a RouteMesh server channel.
func connectionNotRequired(local Local, row location.PeerLocation) bool {
	remoteRole := location.RoleNone
	switch location.ObjectRole(row.Metadata[MetadataObjectRole]) {
	case location.RoleClient:
		remoteRole = location.RoleClient
	case location.RoleServer:
		remoteRole = location.RoleServer
	}
	remoteHasServer := row.Metadata[MetadataHasRouteMeshServerChannel] == "true"
	return local.ObjectRole == location.RoleClient && !local.HasRouteMeshServerChannel &&
		remoteRole == location.RoleClient && !remoteHasServer
}
