package location

import (
	"fmt"
	"strconv"
)

// MaxGeneration is the largest generation, version or counter value (2^63-1).
const MaxGeneration int64 = 1<<63 - 1

// MaxSafeInteger is the largest count the reference accepts (2^53-1, the
// largest integer a JavaScript number holds exactly).
const MaxSafeInteger int64 = 1<<53 - 1

// WriteIntent says what a row write means to do. Values are the reference's.
type WriteIntent int

// Write intents.
const (
	IntentNewClaim WriteIntent = 1 // create, or claim a row whose owner is gone
	IntentRenew    WriteIntent = 2 // refresh one's own row
	IntentTakeover WriteIntent = 3 // explicit handoff, unconditional
)

// String returns the intent's name.
func (i WriteIntent) String() string {
	switch i {
	case IntentNewClaim:
		return "NewClaim"
	case IntentRenew:
		return "Renew"
	case IntentTakeover:
		return "Takeover"
	default:
		return "WriteIntent(" + strconv.Itoa(int(i)) + ")"
	}
}

// WriteStatus is the outcome of a row write or remove.
type WriteStatus string

// Write statuses.
const (
	Stored           WriteStatus = "stored"
	IgnoredStale     WriteStatus = "ignoredStale"
	RejectedConflict WriteStatus = "rejectedConflict"
)

// ObjectRole is a mesh node's role. Not validated as a closed set.
type ObjectRole string

// Object roles.
const (
	RoleNone   ObjectRole = "none"
	RoleClient ObjectRole = "client"
	RoleServer ObjectRole = "server"
)

// RuntimeState is the framework runtime state of a node. Not validated.
type RuntimeState int

// Runtime states.
const (
	StatePreparing  RuntimeState = 0
	StateServing    RuntimeState = 1
	StateRelocating RuntimeState = 2
	StateRelocated  RuntimeState = 3
	StateDraining   RuntimeState = 4
	StateStopped    RuntimeState = 5
	StateError      RuntimeState = 6
)

// MaintenancePolicy is an object capability's maintenance policy.
type MaintenancePolicy string

// Maintenance policies.
const (
	PolicyDisabled MaintenancePolicy = "disabled"
	PolicyRecreate MaintenancePolicy = "recreate"
	PolicySnapshot MaintenancePolicy = "snapshot"
)

// ObjectKind is the kind of a placed object: capability kinds, spot-type
// capacities and authority placements use it.
type ObjectKind string

// Object kinds.
const (
	ObjectActor        ObjectKind = "actor"
	ObjectUserSpot     ObjectKind = "user_spot"
	ObjectInstanceSpot ObjectKind = "instance_spot"
)

// AutoConnectType is a peer's auto-connect family. Numeric values are
// persisted; canonical names appear in keys.
type AutoConnectType int

// Auto-connect types.
const (
	AutoConnectInvalid   AutoConnectType = 0
	AutoConnectRouteMesh AutoConnectType = 1
	AutoConnectFanout    AutoConnectType = 2
)

// CanonicalName returns "route-mesh" or "fanout"; any other value is an
// InputError of class range with code "peer.autoconnect_type".
func (t AutoConnectType) CanonicalName() (string, error) {
	switch t {
	case AutoConnectRouteMesh:
		return "route-mesh", nil
	case AutoConnectFanout:
		return "fanout", nil
	default:
		return "", NewRangeError("peer.autoconnect_type", "auto-connect type %d has no canonical name", int(t))
	}
}

// Known reports whether t has a canonical name.
func (t AutoConnectType) Known() bool { _, err := t.CanonicalName(); return err == nil }

// ParseAutoConnectType parses a canonical name exactly (case-sensitive).
func ParseAutoConnectType(name string) (AutoConnectType, bool) {
	switch name {
	case "route-mesh":
		return AutoConnectRouteMesh, true
	case "fanout":
		return AutoConnectFanout, true
	default:
		return AutoConnectInvalid, false
	}
}

// String returns the canonical name, or a numeric form for unknown values.
func (t AutoConnectType) String() string {
	if n, err := t.CanonicalName(); err == nil {
		return n
	}
	return "AutoConnectType(" + strconv.Itoa(int(t)) + ")"
}

// PeerRole is a peer row's socket role. Value 1 is reserved (removed gateway
// role). Numeric values are persisted; canonical names appear in keys.
type PeerRole int

// Peer roles.
const (
	PeerRoleInvalid PeerRole = 0
	PeerRoleSpot    PeerRole = 2
	PeerRoleRouter  PeerRole = 3
	PeerRoleDealer  PeerRole = 4
	PeerRolePub     PeerRole = 5
	PeerRoleSub     PeerRole = 6
)

// CanonicalName returns the role's key name; unknown values are an InputError
// of class range with code "peer.role".
func (r PeerRole) CanonicalName() (string, error) {
	switch r {
	case PeerRoleSpot:
		return "spot", nil
	case PeerRoleRouter:
		return "router", nil
	case PeerRoleDealer:
		return "dealer", nil
	case PeerRolePub:
		return "pub", nil
	case PeerRoleSub:
		return "sub", nil
	default:
		return "", NewRangeError("peer.role", "peer role %d has no canonical name", int(r))
	}
}

// Known reports whether r has a canonical name.
func (r PeerRole) Known() bool { _, err := r.CanonicalName(); return err == nil }

// ParsePeerRole parses a canonical name exactly (case-sensitive).
func ParsePeerRole(name string) (PeerRole, bool) {
	switch name {
	case "spot":
		return PeerRoleSpot, true
	case "router":
		return PeerRoleRouter, true
	case "dealer":
		return PeerRoleDealer, true
	case "pub":
		return PeerRolePub, true
	case "sub":
		return PeerRoleSub, true
	default:
		return PeerRoleInvalid, false
	}
}

// String returns the canonical name, or a numeric form for unknown values.
func (r PeerRole) String() string {
	if n, err := r.CanonicalName(); err == nil {
		return n
	}
	return "PeerRole(" + strconv.Itoa(int(r)) + ")"
}

// RouteKind is a route row's kind; its decimal text is a key segment.
type RouteKind int

// Route kinds.
const (
	RouteInvalid        RouteKind = 0
	RouteActorSession   RouteKind = 1
	RouteSpotName       RouteKind = 2
	RouteFrameworkRoute RouteKind = 3
)

// LocationKind names a location table family; change-stamp scopes use it.
type LocationKind int

// Location kinds.
const (
	LocationInvalid      LocationKind = 0
	LocationPeer         LocationKind = 1
	LocationSpot         LocationKind = 2
	LocationActor        LocationKind = 3
	LocationRoute        LocationKind = 4
	LocationClientServer LocationKind = 5
)

// Scope returns the change-stamp scope kind of k (its decimal text).
func (k LocationKind) Scope() ScopeKind { return ScopeKind(strconv.Itoa(int(k))) }

// SpotKind is the kind of a spot. Stored verbatim; the wire number is
// WireValue.
type SpotKind string

// Spot kinds.
const (
	SpotInvalid  SpotKind = "invalid"
	SpotEntry    SpotKind = "entry"
	SpotUser     SpotKind = "user"
	SpotInstance SpotKind = "instance"
)

// WireValue returns the spot kind's wire number (entry 1, user 2, instance 3,
// anything else 0).
func (k SpotKind) WireValue() int {
	switch k {
	case SpotEntry:
		return 1
	case SpotUser:
		return 2
	case SpotInstance:
		return 3
	default:
		return 0
	}
}

// SpotKindFromWire is the inverse of WireValue; unknown numbers give SpotInvalid.
func SpotKindFromWire(v int) SpotKind {
	switch v {
	case 1:
		return SpotEntry
	case 2:
		return SpotUser
	case 3:
		return SpotInstance
	default:
		return SpotInvalid
	}
}

// ResultKind is the discriminator of every result union. The string values
// equal the reference's.
type ResultKind string

// Result kinds, shared by all result types.
const (
	KindClaimed                    ResultKind = "claimed"
	KindConflict                   ResultKind = "conflict"
	KindGenerationExhausted        ResultKind = "generationExhausted"
	KindRenewed                    ResultKind = "renewed"
	KindStale                      ResultKind = "stale"
	KindReleased                   ResultKind = "released"
	KindFound                      ResultKind = "found"
	KindMissing                    ResultKind = "missing"
	KindSnapshot                   ResultKind = "snapshot"
	KindStored                     ResultKind = "stored"
	KindDeleted                    ResultKind = "deleted"
	KindPage                       ResultKind = "page"
	KindScanExpired                ResultKind = "scanExpired"
	KindReserved                   ResultKind = "reserved"
	KindAlreadyExists              ResultKind = "alreadyExists"
	KindTypeMismatch               ResultKind = "typeMismatch"
	KindPlacementCapacityExhausted ResultKind = "placementCapacityExhausted"
	KindCommitted                  ResultKind = "committed"
	KindAlreadyCommitted           ResultKind = "alreadyCommitted"
	KindCreated                    ResultKind = "created"
	KindRejected                   ResultKind = "rejected"
	KindFailed                     ResultKind = "failed"
	KindAlreadyCompleted           ResultKind = "alreadyCompleted"
	KindAborted                    ResultKind = "aborted"
	KindAlreadyAborted             ResultKind = "alreadyAborted"
	KindAlreadyReserved            ResultKind = "alreadyReserved"
	KindTargetUnavailable          ResultKind = "targetUnavailable"
	KindPrepared                   ResultKind = "prepared"
	KindAlreadyPrepared            ResultKind = "alreadyPrepared"
)

// Table names one keyed table of the store. Stores use it for keys, change
// notifications and plans. The tables are declared, with the Go type of
// their values, in package rules' table registry (rules.Tables).
type Table string

// Location tables.
const (
	TableMeshNodes        Table = "meshNodes"
	TableClientServers    Table = "clientServers"
	TableFanoutPublishers Table = "fanoutPublishers"
	TablePeers            Table = "peers"
	TableSpots            Table = "spots"
	TableActors           Table = "actors"
	TableRoutes           Table = "routes"
)

// GoString helps test failure output.
func (t Table) GoString() string { return fmt.Sprintf("location.Table(%q)", string(t)) }
