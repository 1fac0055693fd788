package rules

import (
	"cmp"
	"maps"
	"slices"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Descriptor fingerprints (02 §2.8). The reference compares canonical JSON
// texts; here the same fields are compared as normalised values. A
// descriptor's "immutable" part may not change in a revision update; its
// "full" fingerprint decides whether a write is an exact replay.

// EqualMeshNodeImmutable reports whether a and b agree on every field a
// revision update may not change: identity, lifecycle, endpoint, role, entry
// spot, the actors/spots/activation limits, the set of channel names, the
// application version, the spot types as a sorted list, the capabilities
// sorted by (objectKind, stableType), security identity and owner token.
func EqualMeshNodeImmutable(a, b *location.MeshNodeDescriptor) bool {
	return a.Key() == b.Key() &&
		a.LifecycleGeneration == b.LifecycleGeneration &&
		a.Endpoint == b.Endpoint &&
		a.ObjectRole == b.ObjectRole &&
		equalOptionalString(a.EntrySpotID, b.EntrySpotID) &&
		a.PopulationCapacity.Actors.Limit == b.PopulationCapacity.Actors.Limit &&
		a.PopulationCapacity.Spots.Limit == b.PopulationCapacity.Spots.Limit &&
		a.ActivationConcurrency.Limit == b.ActivationConcurrency.Limit &&
		sameKeys(a.ChannelWeights, b.ChannelWeights) &&
		a.ApplicationVersion == b.ApplicationVersion &&
		sameElements(a.SpotTypes, b.SpotTypes, sortedCopy) &&
		sameElements(a.ObjectCapabilities, b.ObjectCapabilities, sortedCapabilities) &&
		a.SecurityIdentity == b.SecurityIdentity &&
		a.Owner() == b.Owner()
}

// EqualMeshNode reports whether a and b have equal full fingerprints: the
// immutable part plus revision, placement weight, the whole population
// capacity (spot-type capacities in their given order), activation
// concurrency, channel weights, maintenance wave and state. UpdatedAt is
// never compared.
func EqualMeshNode(a, b *location.MeshNodeDescriptor) bool {
	// The scalars first: a revision update differs there, and answers
	// before the immutable part's collections are compared.
	return a.DescriptorRevision == b.DescriptorRevision &&
		a.PlacementWeight == b.PlacementWeight &&
		a.PopulationCapacity.Actors == b.PopulationCapacity.Actors &&
		a.PopulationCapacity.Spots == b.PopulationCapacity.Spots &&
		a.ActivationConcurrency == b.ActivationConcurrency &&
		a.State == b.State &&
		EqualMeshNodeImmutable(a, b) &&
		slices.Equal(a.PopulationCapacity.SpotTypes, b.PopulationCapacity.SpotTypes) &&
		maps.Equal(a.ChannelWeights, b.ChannelWeights) &&
		equalOptionalString(a.MaintenanceWave, b.MaintenanceWave)
}

// EqualClientServerImmutable compares the immutable fingerprint of two
// client-server descriptors: identity, lifecycle, endpoint, security
// identity and owner token.
func EqualClientServerImmutable(a, b *location.ClientServerDescriptor) bool {
	return a.Key() == b.Key() &&
		a.LifecycleGeneration == b.LifecycleGeneration &&
		a.Endpoint == b.Endpoint &&
		a.SecurityIdentity == b.SecurityIdentity &&
		a.Owner() == b.Owner()
}

// EqualClientServer compares full fingerprints: the immutable part plus
// revision, weight and state.
func EqualClientServer(a, b *location.ClientServerDescriptor) bool {
	return EqualClientServerImmutable(a, b) &&
		a.DescriptorRevision == b.DescriptorRevision &&
		a.Weight == b.Weight &&
		a.State == b.State
}

// EqualFanoutPublisherImmutable compares the immutable fingerprint of two
// fanout publisher descriptors: identity, lifecycle, endpoint, security
// identity and owner token.
func EqualFanoutPublisherImmutable(a, b *location.FanoutPublisherDescriptor) bool {
	return a.Key() == b.Key() &&
		a.LifecycleGeneration == b.LifecycleGeneration &&
		a.Endpoint == b.Endpoint &&
		a.SecurityIdentity == b.SecurityIdentity &&
		a.Owner() == b.Owner()
}

// EqualFanoutPublisher compares full fingerprints: the immutable part plus
// revision and state.
func EqualFanoutPublisher(a, b *location.FanoutPublisherDescriptor) bool {
	return EqualFanoutPublisherImmutable(a, b) &&
		a.DescriptorRevision == b.DescriptorRevision &&
		a.State == b.State
}

// equalOptionalString treats absent as its own value (the reference's null).
func equalOptionalString(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// sameKeys reports whether two maps have the same keys (their values
// aside).
func sameKeys(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// sameElements reports whether a and b hold the same elements, in any order:
// their copies sorted by sorted are equal. Slices equal as they are (a
// descriptor republished as it was) answer without sorting.
func sameElements[E comparable](a, b []E, sorted func([]E) []E) bool {
	return slices.Equal(a, b) || len(a) == len(b) && slices.Equal(sorted(a), sorted(b))
}

// sortedCopy returns a sorted copy of s.
func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// sortedCapabilities returns a copy of caps sorted by (objectKind,
// stableType). Validation makes that pair unique; the remaining fields only
// break ties so that the order never depends on the input order.
func sortedCapabilities(caps []location.ObjectCapability) []location.ObjectCapability {
	c := slices.Clone(caps)
	slices.SortFunc(c, func(x, y location.ObjectCapability) int {
		return cmp.Or(
			cmp.Compare(x.ObjectKind, y.ObjectKind),
			cmp.Compare(x.StableType, y.StableType),
			cmp.Compare(x.Policy, y.Policy),
			cmp.Compare(boolRank(x.HasSnapshotAdapter), boolRank(y.HasSnapshotAdapter)),
			cmp.Compare(x.Limit, y.Limit),
		)
	})
	return c
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
