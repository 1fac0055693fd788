package autoconnect

import (
	"maps"
	"math/big"
	"strconv"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Target is one peer the planner may connect to.
type Target struct {
	// Key is "<role name>|<identity>|<generation>", where identity is the
	// lower-case hex of NodeRID, or Endpoint when there is no rid. A new
	// lifecycle generation of the same node gives a new key.
	Key string
	// NodeRID is the peer's routing id, nil when the row has none.
	NodeRID *location.RoutingID
	// LifecycleGeneration is the peer row's generation.
	LifecycleGeneration int64
	// Role is the peer's socket role.
	Role location.PeerRole
	// Endpoint is the peer's endpoint.
	Endpoint string
	// Metadata is the peer row's metadata (nil when it had none); every
	// target the package hands out (to an executor, or from Candidates,
	// Desired and NotRequired) holds its own copy.
	Metadata map[string]string
	// OwnerID is the owner of the peer row.
	OwnerID string
	// DescriptorRevision is the parsed metadata "descriptorRevision"; it is
	// set only on targets from NotRequired, and only when positive.
	DescriptorRevision *big.Int
}

// clone returns a deep copy of t.
func (t Target) clone() Target {
	c := t
	c.NodeRID = cloneRID(t.NodeRID)
	c.Metadata = maps.Clone(t.Metadata)
	if t.DescriptorRevision != nil {
		c.DescriptorRevision = new(big.Int).Set(t.DescriptorRevision)
	}
	return c
}

// TargetKey returns the planner key of a peer row:
// "<role name>|<rid hex, or endpoint without rid>|<generation>". A role
// without a canonical name is written as PeerRole(n) (the planner never keys
// such a row; the framework would throw).
func TargetKey(row location.PeerLocation) string {
	identity := row.Endpoint
	if row.NodeRID != nil {
		identity = row.NodeRID.Hex()
	}
	return row.Role.String() + "|" + identity + "|" + strconv.FormatInt(row.Generation, 10)
}

// targetOf builds the target of a peer row, sharing the row's metadata and
// routing id (rows are not modified once listed, PeerSource).
func targetOf(row location.PeerLocation) Target {
	return Target{
		Key:                 TargetKey(row),
		LifecycleGeneration: row.Generation,
		Role:                row.Role,
		Endpoint:            row.Endpoint,
		Metadata:            row.Metadata,
		OwnerID:             row.OwnerID,
		NodeRID:             row.NodeRID,
	}
}

// cloneRID copies an optional routing id.
func cloneRID(r *location.RoutingID) *location.RoutingID {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// cloneTargets deep-copies a list of targets.
func cloneTargets(ts []Target) []Target {
	if ts == nil {
		return nil
	}
	out := make([]Target, len(ts))
	for i, t := range ts {
		out[i] = t.clone()
	}
	return out
}
