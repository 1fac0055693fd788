package location

// ScopeKind is the kind part of a change-stamp scope: the decimal text of a
// LocationKind (see LocationKind.Scope) or one of the named scope kinds, which
// the reference accepts but never bumps.
type ScopeKind string

// Named scope kinds (accepted, never bumped; anomaly A-05).
const (
	ScopeMeshNode        ScopeKind = "meshNode"
	ScopeClientServer    ScopeKind = "clientServer"
	ScopeSpot            ScopeKind = "spot"
	ScopeAuthority       ScopeKind = "authority"
	ScopeOwnerLease      ScopeKind = "ownerLease"
	ScopeFanoutPublisher ScopeKind = "fanoutPublisher"
)

// ChangeStampScope selects one change-stamp counter: (Kind, MeshName), where a
// nil or empty MeshName selects the kind's global counter. ChannelName is
// accepted and ignored (anomaly A-06: pass a client-server channel as
// MeshName).
type ChangeStampScope struct {
	Kind        ScopeKind
	MeshName    *string
	ChannelName *string
}
