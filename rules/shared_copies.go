package rules

import (
	"maps"
	"slices"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Copies of a written row that share parts with the row it replaces. A
// write stores a deep copy of the caller's row (the caller may change its
// own afterwards), but a steady-state write (a renewal, a new descriptor
// revision) mostly repeats the stored row's slices, maps and pointers: the
// copy then takes the stored row's equal parts instead of new copies of the
// caller's. The stored row is shared (GetShared) and nobody modifies it, so
// the written row may share it (Write.Owned). Each copy is the type's Clone
// (location/clone.go) but for that sharing, nil and empty kept apart as
// Clone keeps them; TestCopyOverCur proves, by reflection over every field,
// that nothing of the caller's is shared.

// rowCopier returns the deep copy of d that a write stores, sharing the
// parts equal to cur's when stored (cur is the stored row it replaces).
// It takes rows by value: a row passed by pointer to a function value
// would escape to the heap.
type rowCopier[D location.Cloner[D]] func(d, cur D, stored bool) D

// copy is f's copy of *d over *cur, or d's Clone when f is nil (a table
// whose rows share nothing).
func (f rowCopier[D]) copy(d, cur *D, stored bool) D {
	if f == nil {
		return (*d).Clone()
	}
	return f(*d, *cur, stored)
}

// meshNodeCopy returns a deep copy of d (location.MeshNodeDescriptor.Clone)
// that shares with cur (nil: none) the parts equal to d's.
func meshNodeCopy(d, cur *location.MeshNodeDescriptor) location.MeshNodeDescriptor {
	if cur == nil {
		return d.Clone()
	}
	c := *d
	c.EntrySpotID = ptrOver(d.EntrySpotID, cur.EntrySpotID)
	c.PopulationCapacity.SpotTypes = sliceOver(d.PopulationCapacity.SpotTypes, cur.PopulationCapacity.SpotTypes)
	c.ChannelWeights = mapOver(d.ChannelWeights, cur.ChannelWeights)
	c.SpotTypes = sliceOver(d.SpotTypes, cur.SpotTypes)
	c.ObjectCapabilities = sliceOver(d.ObjectCapabilities, cur.ObjectCapabilities)
	c.MaintenanceWave = ptrOver(d.MaintenanceWave, cur.MaintenanceWave)
	return c
}

// peerCopy returns a deep copy of p (location.PeerLocation.Clone) that
// shares with cur (nil: none) the parts equal to p's.
func peerCopy(p, cur *location.PeerLocation) location.PeerLocation {
	if cur == nil {
		return p.Clone()
	}
	c := *p
	c.NodeRID = ptrOver(p.NodeRID, cur.NodeRID)
	c.Metadata = mapOver(p.Metadata, cur.Metadata)
	c.Capabilities = sliceOver(p.Capabilities, cur.Capabilities)
	return c
}

// ptrOver returns cur when it points at a value equal to *p, else a
// pointer to a copy of *p (nil for nil).
func ptrOver[T comparable](p, cur *T) *T {
	if p == nil {
		return nil
	}
	if cur != nil && *cur == *p {
		return cur
	}
	v := *p
	return &v
}

// sliceOver returns cur when it holds the elements of s (both nil, or both
// non-nil), else slices.Clone(s).
func sliceOver[E comparable](s, cur []E) []E {
	if (s == nil) == (cur == nil) && slices.Equal(s, cur) {
		return cur
	}
	return slices.Clone(s)
}

// mapOver returns cur when it holds the entries of m (both nil, or both
// non-nil), else maps.Clone(m).
func mapOver[K, V comparable](m, cur map[K]V) map[K]V {
	if (m == nil) == (cur == nil) && maps.Equal(m, cur) {
		return cur
	}
	return maps.Clone(m)
}
