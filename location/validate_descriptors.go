package location

import (
	"fmt"
	"strings"
)

// Validation of the three descriptor tables (02-location-tables §2.1, §2.5,
// §2.7). Every validator returns the first violation in the reference's order
// and runs before any lease or state check.

// Codes of descriptor validation errors.
const (
	CodeMeshNodeIdentity            = "meshnode.identity"             // Type
	CodeMeshNodeEntrySpotText       = "meshnode.entry_spot_text"      // Type
	CodeMeshNodeEntrySpotRole       = "meshnode.entry_spot_role"      // Type
	CodeMeshNodeGenerations         = "meshnode.generations"          // Range
	CodeMeshNodeCapacity            = "meshnode.capacity"             // Range
	CodeMeshNodeCapabilityType      = "meshnode.capability_type"      // Type
	CodeMeshNodeCapabilityDuplicate = "meshnode.capability_duplicate" // Type
	CodeMeshNodeCapabilitySnapshot  = "meshnode.capability_snapshot"  // Type
	CodeMeshNodeCapabilityLimit     = "meshnode.capability_limit"     // Range
	CodeClientServerIdentity        = "clientserver.identity"         // Type
	CodeClientServerGenerations     = "clientserver.generations"      // Range
	CodeClientServerWeight          = "clientserver.weight"           // Range
	CodeFanoutIdentity              = "fanout.identity"               // Type
	CodeFanoutGenerations           = "fanout.generations"            // Range
)

// Descriptor bounds.
const (
	// MaxDescriptorWeight bounds a mesh node's placement weight and a client
	// server's weight.
	MaxDescriptorWeight = 10000
	// MaxObjectCapabilities bounds a mesh node's capability list.
	MaxObjectCapabilities = 1024
)

// ValidateMeshNode checks a mesh-node descriptor and the write intent of
// UpdateMeshNode, in this order: identity (meshName, ownerId are DText),
// entry spot id, generations, capacity block, each capability, then the
// Go-only rules (other text fields are valid UTF-8, intent is 1..3).
// Not validated (as the reference): rid, endpoint, securityIdentity, spot
// types, channel weights, maintenance wave, state, the object role's value.
func ValidateMeshNode(d MeshNodeDescriptor, intent WriteIntent) error {
	for _, f := range []textField{{"meshName", d.MeshName}, {"ownerId", d.OwnerID}} {
		if p := dtextProblem(f.value); p != "" {
			return NewTypeError(CodeMeshNodeIdentity, "mesh node %s %s %s", f.name, quote(f.value), p)
		}
	}
	if d.ObjectRole == RoleServer {
		if d.EntrySpotID != nil {
			if p := dtextProblem(*d.EntrySpotID); p != "" {
				return NewTypeError(CodeMeshNodeEntrySpotText, "mesh node entrySpotId %s %s", quote(*d.EntrySpotID), p)
			}
		}
	} else if d.EntrySpotID != nil {
		return NewTypeError(CodeMeshNodeEntrySpotRole,
			"mesh node with objectRole %s carries entrySpotId %s; only server descriptors may publish one",
			quote(string(d.ObjectRole)), quote(*d.EntrySpotID))
	}
	if err := requireGenerations(CodeMeshNodeGenerations, "mesh node",
		generation{"lifecycleGeneration", d.LifecycleGeneration},
		generation{"descriptorRevision", d.DescriptorRevision},
		generation{"leaseGeneration", d.LeaseGeneration}); err != nil {
		return err
	}
	if d.ApplicationVersion < 0 {
		return NewRangeError(CodeMeshNodeGenerations, "mesh node applicationVersion %d is negative", d.ApplicationVersion)
	}
	if err := validateMeshNodeCapacity(&d); err != nil {
		return err
	}
	if err := validateCapabilities(d.ObjectCapabilities); err != nil {
		return err
	}
	var fields [8]textField // room for the usual ones, on the stack
	if err := requireUTF8(meshNodeTextFields(fields[:0], &d)...); err != nil {
		return err
	}
	return ValidateWriteIntent(intent)
}

// generation names one generation field for requireGenerations.
type generation struct {
	name  string
	value int64
}

// requireGenerations checks that every generation is in 1..2^63-1.
func requireGenerations(code, what string, gens ...generation) error {
	for _, g := range gens {
		if g.value < 1 {
			return NewRangeError(code, "%s %s %d is outside 1..%d", what, g.name, g.value, MaxGeneration)
		}
	}
	return nil
}

// namedCapacity names one population capacity for the capacity checks:
// name, or, for spotType > 0, the spot-type capacity spotType-1.
type namedCapacity struct {
	name     string
	spotType int
	c        PopulationCapacity
}

// label is the capacity's name in messages (built only for one).
func (nc namedCapacity) label() string {
	if nc.spotType > 0 {
		return fmt.Sprintf("populationCapacity.spotTypes[%d]", nc.spotType-1)
	}
	return nc.name
}

// validateMeshNodeCapacity is rule 4 of 02 §2.1: every count a safe
// non-negative integer, active+reserved within a non-zero limit, activation
// concurrency, placement weight, and the capability count.
func validateMeshNodeCapacity(d *MeshNodeDescriptor) error {
	var room [8]namedCapacity // the usual ones, on the stack
	caps := append(room[:0],
		namedCapacity{name: "populationCapacity.actors", c: d.PopulationCapacity.Actors},
		namedCapacity{name: "populationCapacity.spots", c: d.PopulationCapacity.Spots})
	for i, st := range d.PopulationCapacity.SpotTypes {
		caps = append(caps, namedCapacity{spotType: i + 1, c: st.PopulationCapacity})
	}
	for _, nc := range caps {
		for _, v := range []struct {
			field string
			value int64
		}{{"active", nc.c.Active}, {"reserved", nc.c.Reserved}, {"limit", nc.c.Limit}} {
			if v.value < 0 || v.value > MaxSafeInteger {
				return NewRangeError(CodeMeshNodeCapacity, "mesh node %s.%s %d is outside 0..%d", nc.label(), v.field, v.value, MaxSafeInteger)
			}
		}
	}
	for _, nc := range caps {
		if nc.c.Limit != 0 && nc.c.Active+nc.c.Reserved > nc.c.Limit {
			return NewRangeError(CodeMeshNodeCapacity, "mesh node %s: active %d + reserved %d exceeds limit %d",
				nc.label(), nc.c.Active, nc.c.Reserved, nc.c.Limit)
		}
	}
	ac := d.ActivationConcurrency
	switch {
	case ac.Active < 0 || ac.Active > MaxSafeInteger:
		return NewRangeError(CodeMeshNodeCapacity, "mesh node activationConcurrency.active %d is outside 0..%d", ac.Active, MaxSafeInteger)
	case ac.Limit < 1 || ac.Limit > MaxSafeInteger:
		return NewRangeError(CodeMeshNodeCapacity, "mesh node activationConcurrency.limit %d is outside 1..%d", ac.Limit, MaxSafeInteger)
	case ac.Active > ac.Limit:
		return NewRangeError(CodeMeshNodeCapacity, "mesh node activationConcurrency.active %d exceeds its limit %d", ac.Active, ac.Limit)
	case d.PlacementWeight < 0 || d.PlacementWeight > MaxDescriptorWeight:
		return NewRangeError(CodeMeshNodeCapacity, "mesh node placementWeight %d is outside 0..%d", d.PlacementWeight, MaxDescriptorWeight)
	case len(d.ObjectCapabilities) > MaxObjectCapabilities:
		return NewRangeError(CodeMeshNodeCapacity, "mesh node has %d objectCapabilities (at most %d)", len(d.ObjectCapabilities), MaxObjectCapabilities)
	case d.ObjectRole != RoleServer && len(d.ObjectCapabilities) != 0:
		return NewRangeError(CodeMeshNodeCapacity, "mesh node with objectRole %s has %d objectCapabilities; only server descriptors may have any",
			quote(string(d.ObjectRole)), len(d.ObjectCapabilities))
	}
	return nil
}

// capabilityID is the identity of a capability within one descriptor.
type capabilityID struct {
	kind       ObjectKind
	stableType string
}

// validateCapabilities is rule 5 of 02 §2.1, capability by capability.
func validateCapabilities(caps []ObjectCapability) error {
	seen := make(map[capabilityID]int, len(caps))
	for i, c := range caps {
		where := func() string { return fmt.Sprintf("mesh node objectCapabilities[%d]", i) } // for messages only
		if p := dtextProblem(c.StableType); p != "" {
			return NewTypeError(CodeMeshNodeCapabilityType, "%s.stableType %s %s", where(), quote(c.StableType), p)
		}
		id := capabilityID{c.ObjectKind, c.StableType}
		if j, dup := seen[id]; dup {
			return NewTypeError(CodeMeshNodeCapabilityDuplicate, "%s repeats (objectKind %s, stableType %s) of objectCapabilities[%d]",
				where(), quote(string(c.ObjectKind)), quote(c.StableType), j)
		}
		seen[id] = i
		if (c.Policy == PolicySnapshot) != c.HasSnapshotAdapter {
			return NewTypeError(CodeMeshNodeCapabilitySnapshot, "%s has policy %s but hasSnapshotAdapter %t; a snapshot adapter goes with exactly the snapshot policy",
				where(), quote(string(c.Policy)), c.HasSnapshotAdapter)
		}
		if c.Limit < 0 || c.Limit > MaxSafeInteger {
			return NewRangeError(CodeMeshNodeCapabilityLimit, "%s.limit %d is outside 0..%d", where(), c.Limit, MaxSafeInteger)
		}
		if c.ObjectKind == ObjectActor && c.Limit != 0 {
			return NewRangeError(CodeMeshNodeCapabilityLimit, "%s.limit is %d; an actor capability must have limit 0", where(), c.Limit)
		}
	}
	return nil
}

// meshNodeTextFields appends to fields the mesh node's text fields that no
// reference rule covers, for the UTF-8 sweep (the indexed ones only where
// they are not valid UTF-8: the sweep reports the first such field, and
// naming the valid ones would cost every write a few string formats).
func meshNodeTextFields(fields []textField, d *MeshNodeDescriptor) []textField {
	fields = append(fields,
		textField{"mesh node endpoint", d.Endpoint},
		textField{"mesh node objectRole", string(d.ObjectRole)},
		textField{"mesh node securityIdentity", d.SecurityIdentity})
	if d.MaintenanceWave != nil {
		fields = append(fields, textField{"mesh node maintenanceWave", *d.MaintenanceWave})
	}
	fields = append(fields, stringsUTF8("mesh node spotTypes", d.SpotTypes)...)
	fields = append(fields, mapKeysUTF8("mesh node channelWeights", d.ChannelWeights)...)
	for i, st := range d.PopulationCapacity.SpotTypes {
		if allUTF8(string(st.ObjectKind), st.StableType) {
			continue
		}
		fields = append(fields,
			textField{fmt.Sprintf("mesh node populationCapacity.spotTypes[%d].objectKind", i), string(st.ObjectKind)},
			textField{fmt.Sprintf("mesh node populationCapacity.spotTypes[%d].stableType", i), st.StableType})
	}
	for i, c := range d.ObjectCapabilities {
		if allUTF8(string(c.ObjectKind), string(c.Policy)) {
			continue
		}
		fields = append(fields,
			textField{fmt.Sprintf("mesh node objectCapabilities[%d].objectKind", i), string(c.ObjectKind)},
			textField{fmt.Sprintf("mesh node objectCapabilities[%d].policy", i), string(c.Policy)})
	}
	return fields
}

// ValidateClientServer checks a client-server server descriptor and the write
// intent of UpdateClientServer: channelName, serverRid, endpoint,
// securityIdentity and ownerId are DText (the RID by its bytes, which need
// not be UTF-8), generations are 1..2^63-1, weight is 0..10000, intent 1..3.
func ValidateClientServer(d ClientServerDescriptor, intent WriteIntent) error {
	if err := requireDescriptorIdentity(CodeClientServerIdentity, "client server",
		textField{"channelName", d.ChannelName}, d.ServerRID, "serverRid",
		textField{"endpoint", d.Endpoint}, textField{"securityIdentity", d.SecurityIdentity},
		textField{"ownerId", d.OwnerID}); err != nil {
		return err
	}
	if err := requireGenerations(CodeClientServerGenerations, "client server",
		generation{"lifecycleGeneration", d.LifecycleGeneration},
		generation{"descriptorRevision", d.DescriptorRevision},
		generation{"leaseGeneration", d.LeaseGeneration}); err != nil {
		return err
	}
	if d.Weight < 0 || d.Weight > MaxDescriptorWeight {
		return NewRangeError(CodeClientServerWeight, "client server weight %d is outside 0..%d", d.Weight, MaxDescriptorWeight)
	}
	return ValidateWriteIntent(intent)
}

// ValidateFanoutPublisher checks a fanout publisher descriptor and the write
// intent of UpdateFanoutPublisher: channelName, publisherRid, endpoint,
// securityIdentity and ownerId are DText (the RID by its bytes), generations
// are 1..2^63-1, intent 1..3.
func ValidateFanoutPublisher(d FanoutPublisherDescriptor, intent WriteIntent) error {
	if err := requireDescriptorIdentity(CodeFanoutIdentity, "fanout publisher",
		textField{"channelName", d.ChannelName}, d.PublisherRID, "publisherRid",
		textField{"endpoint", d.Endpoint}, textField{"securityIdentity", d.SecurityIdentity},
		textField{"ownerId", d.OwnerID}); err != nil {
		return err
	}
	if err := requireGenerations(CodeFanoutGenerations, "fanout publisher",
		generation{"lifecycleGeneration", d.LifecycleGeneration},
		generation{"descriptorRevision", d.DescriptorRevision},
		generation{"leaseGeneration", d.LeaseGeneration}); err != nil {
		return err
	}
	return ValidateWriteIntent(intent)
}

// requireDescriptorIdentity checks the identity block shared by client-server
// and fanout descriptors, in the reference's order: channel name, RID,
// endpoint, security identity, owner id.
func requireDescriptorIdentity(code, what string, channel textField, rid RoutingID, ridName string, rest ...textField) error {
	if p := dtextProblem(channel.value); p != "" {
		return NewTypeError(code, "%s %s %s %s", what, channel.name, quote(channel.value), p)
	}
	if p := ridTextProblem(rid); p != "" {
		return NewTypeError(code, "%s %s %s %s", what, ridName, quote(string(rid)), p)
	}
	for _, f := range rest {
		if p := dtextProblem(f.value); p != "" {
			return NewTypeError(code, "%s %s %s %s", what, f.name, quote(f.value), p)
		}
	}
	return nil
}

// ridTextProblem applies the DText rule to a routing id's bytes: 1..255
// bytes without NUL. Opaque ids need not be UTF-8.
func ridTextProblem(r RoutingID) string {
	s := string(r)
	switch {
	case s == "":
		return "is empty"
	case len(s) > MaxDescriptorTextBytes:
		return fmt.Sprintf("is %d bytes long (at most %d)", len(s), MaxDescriptorTextBytes)
	case strings.IndexByte(s, 0) >= 0:
		return "contains NUL (0x00)"
	default:
		return ""
	}
}
