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

// writeIntentNames names the write intents.
var writeIntentNames = enumCodes[WriteIntent, string]{
	{IntentNewClaim, "NewClaim"},
	{IntentRenew, "Renew"},
	{IntentTakeover, "Takeover"},
}

// String returns the intent's name.
func (i WriteIntent) String() string { return enumString(writeIntentNames, i, "WriteIntent") }

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

// runtimeStateNames name the runtime states.
var runtimeStateNames = enumCodes[RuntimeState, string]{
	{StatePreparing, "preparing"},
	{StateServing, "serving"},
	{StateRelocating, "relocating"},
	{StateRelocated, "relocated"},
	{StateDraining, "draining"},
	{StateStopped, "stopped"},
	{StateError, "error"},
}

// String returns the state's name ("serving"), or a numeric form
// ("RuntimeState(9)") for a value without one.
func (s RuntimeState) String() string { return enumString(runtimeStateNames, s, "RuntimeState") }

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

// autoConnectNames are the canonical names of the auto-connect types.
var autoConnectNames = enumCodes[AutoConnectType, string]{
	{AutoConnectRouteMesh, "route-mesh"},
	{AutoConnectFanout, "fanout"},
}

// CanonicalName returns "route-mesh" or "fanout"; any other value is an
// InputError of class range with code "peer.autoconnect_type".
func (t AutoConnectType) CanonicalName() (string, error) {
	return canonicalName(autoConnectNames, t, "peer.autoconnect_type", "auto-connect type")
}

// Known reports whether t has a canonical name.
func (t AutoConnectType) Known() bool { _, ok := autoConnectNames.code(t); return ok }

// ParseAutoConnectType parses a canonical name exactly (case-sensitive).
// An unknown name gives AutoConnectInvalid.
func ParseAutoConnectType(name string) (AutoConnectType, bool) {
	return autoConnectNames.value(name, AutoConnectInvalid)
}

// String returns the canonical name, or a numeric form for unknown values.
func (t AutoConnectType) String() string { return enumString(autoConnectNames, t, "AutoConnectType") }

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

// peerRoleNames are the canonical names of the peer roles.
var peerRoleNames = enumCodes[PeerRole, string]{
	{PeerRoleSpot, "spot"},
	{PeerRoleRouter, "router"},
	{PeerRoleDealer, "dealer"},
	{PeerRolePub, "pub"},
	{PeerRoleSub, "sub"},
}

// CanonicalName returns the role's key name; unknown values are an InputError
// of class range with code "peer.role".
func (r PeerRole) CanonicalName() (string, error) {
	return canonicalName(peerRoleNames, r, "peer.role", "peer role")
}

// Known reports whether r has a canonical name.
func (r PeerRole) Known() bool { _, ok := peerRoleNames.code(r); return ok }

// ParsePeerRole parses a canonical name exactly (case-sensitive).
// An unknown name gives PeerRoleInvalid.
func ParsePeerRole(name string) (PeerRole, bool) { return peerRoleNames.value(name, PeerRoleInvalid) }

// String returns the canonical name, or a numeric form for unknown values.
func (r PeerRole) String() string { return enumString(peerRoleNames, r, "PeerRole") }

// RouteKind is a route row's kind; its decimal text is a key segment.
type RouteKind int

// Route kinds.
const (
	RouteInvalid        RouteKind = 0
	RouteActorSession   RouteKind = 1
	RouteSpotName       RouteKind = 2
	RouteFrameworkRoute RouteKind = 3
)

// routeKindNames name the route kinds.
var routeKindNames = enumCodes[RouteKind, string]{
	{RouteActorSession, "actor-session"},
	{RouteSpotName, "spot-name"},
	{RouteFrameworkRoute, "framework-route"},
}

// String returns the kind's name ("actor-session"), or a numeric form
// ("RouteKind(0)") for a value without one. The key segment is the decimal
// value, not this name.
func (k RouteKind) String() string { return enumString(routeKindNames, k, "RouteKind") }

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

// spotKindWire are the wire numbers of the spot kinds.
var spotKindWire = enumCodes[SpotKind, int]{
	{SpotEntry, 1},
	{SpotUser, 2},
	{SpotInstance, 3},
}

// WireValue returns the spot kind's wire number (entry 1, user 2, instance 3,
// anything else 0).
func (k SpotKind) WireValue() int {
	w, _ := spotKindWire.code(k)
	return w
}

// SpotKindFromWire is the inverse of WireValue; unknown numbers give SpotInvalid.
func SpotKindFromWire(v int) SpotKind {
	k, _ := spotKindWire.value(v, SpotInvalid)
	return k
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

// enumCodes is the two-way table of a closed enum: each known value with its
// code (a canonical name or a wire number). It is read-only after its
// declaration. Lookups scan its few entries, as a switch would.
type enumCodes[V, C comparable] []struct {
	value V
	code  C
}

// code returns v's code, or the zero code and false for an unknown value.
func (t enumCodes[V, C]) code(v V) (C, bool) {
	for _, e := range t {
		if e.value == v {
			return e.code, true
		}
	}
	var zero C
	return zero, false
}

// value returns the value of code c, or unknown and false for an unknown
// code.
func (t enumCodes[V, C]) value(c C, unknown V) (V, bool) {
	for _, e := range t {
		if e.code == c {
			return e.value, true
		}
	}
	return unknown, false
}

// canonicalName returns the name of a numbered enum's value v, or an
// InputError of class range with the given code for a value without one.
func canonicalName[V ~int](names enumCodes[V, string], v V, code, what string) (string, error) {
	if name, ok := names.code(v); ok {
		return name, nil
	}
	return "", NewRangeError(code, "%s %d has no canonical name", what, int(v))
}

// enumString is the String of a numbered enum: v's name, or typeName(number)
// for a value without one.
func enumString[V ~int](names enumCodes[V, string], v V, typeName string) string {
	if name, ok := names.code(v); ok {
		return name
	}
	return typeName + "(" + strconv.Itoa(int(v)) + ")"
}
