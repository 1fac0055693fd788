package location

import (
	"bytes"
	"maps"
	"slices"
)

// Deep copies. Stores copy every value on the way in and on the way out
// (anomaly A-40), so that neither the caller nor the store can change the
// other's data through a shared slice, map or pointer. Every Clone keeps nil
// as nil and an empty slice or map as empty, so a clone compares equal to its
// original. Types without references also have a Clone, which returns a plain
// copy, so that generic code (ClonePage) can treat every row alike.

// Cloner is a value that can deep-copy itself.
type Cloner[T any] interface {
	Clone() T
}

// ClonePage returns a deep copy of a page.
func ClonePage[T Cloner[T]](p Page[T]) Page[T] {
	return Page[T]{Items: CloneAll(p.Items), ContinuationToken: p.ContinuationToken}
}

// CloneAll returns a deep copy of a slice of cloneable values (nil stays nil).
func CloneAll[T Cloner[T]](items []T) []T {
	if items == nil {
		return nil
	}
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = it.Clone()
	}
	return out
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneWith returns a pointer to clone(*p), or nil.
func cloneWith[T any](p *T, clone func(T) T) *T {
	if p == nil {
		return nil
	}
	v := clone(*p)
	return &v
}

// Clone returns a deep copy of the population.
func (p Population) Clone() Population {
	p.SpotTypes = slices.Clone(p.SpotTypes)
	return p
}

// Clone returns a deep copy of the descriptor.
func (d MeshNodeDescriptor) Clone() MeshNodeDescriptor {
	d.EntrySpotID = clonePtr(d.EntrySpotID)
	d.PopulationCapacity = d.PopulationCapacity.Clone()
	d.ChannelWeights = maps.Clone(d.ChannelWeights)
	d.SpotTypes = slices.Clone(d.SpotTypes)
	d.ObjectCapabilities = slices.Clone(d.ObjectCapabilities)
	d.MaintenanceWave = clonePtr(d.MaintenanceWave)
	return d
}

// Clone returns a copy of the descriptor (it holds no references).
func (d ClientServerDescriptor) Clone() ClientServerDescriptor { return d }

// Clone returns a copy of the descriptor (it holds no references).
func (d FanoutPublisherDescriptor) Clone() FanoutPublisherDescriptor { return d }

// Clone returns a deep copy of the key.
func (k PeerKey) Clone() PeerKey {
	k.NodeRID = clonePtr(k.NodeRID)
	k.Endpoint = clonePtr(k.Endpoint)
	return k
}

// Clone returns a deep copy of the row.
func (p PeerLocation) Clone() PeerLocation {
	p.NodeRID = clonePtr(p.NodeRID)
	p.Metadata = maps.Clone(p.Metadata)
	p.Capabilities = slices.Clone(p.Capabilities)
	return p
}

// Clone returns a deep copy of the filter.
func (f PeerFilter) Clone() PeerFilter {
	f.AutoConnectType = clonePtr(f.AutoConnectType)
	f.MeshName = clonePtr(f.MeshName)
	f.Role = clonePtr(f.Role)
	f.NodeRID = clonePtr(f.NodeRID)
	f.Endpoint = clonePtr(f.Endpoint)
	return f
}

// Clone returns a copy of the row (it holds no references).
func (s SpotLocation) Clone() SpotLocation { return s }

// Clone returns a deep copy of the filter.
func (f SpotFilter) Clone() SpotFilter {
	f.MeshName = clonePtr(f.MeshName)
	f.SpotType = clonePtr(f.SpotType)
	f.NodeRID = clonePtr(f.NodeRID)
	f.SpotKind = clonePtr(f.SpotKind)
	return f
}

// Clone returns a copy of the row (it holds no references).
func (a ActorLocation) Clone() ActorLocation { return a }

// Clone returns a deep copy of the filter.
func (f ActorFilter) Clone() ActorFilter {
	f.ActorType = clonePtr(f.ActorType)
	f.NodeRID = clonePtr(f.NodeRID)
	f.SpotID = clonePtr(f.SpotID)
	f.LocationKind = clonePtr(f.LocationKind)
	return f
}

// Clone returns a deep copy of the row.
func (r RouteLocation) Clone() RouteLocation {
	r.Value = bytes.Clone(r.Value)
	return r
}

// Clone returns a deep copy of the filter.
func (f RouteFilter) Clone() RouteFilter {
	f.RouteKind = clonePtr(f.RouteKind)
	f.OwnerNodeRID = clonePtr(f.OwnerNodeRID)
	f.OwnerID = clonePtr(f.OwnerID)
	return f
}

// Clone returns a deep copy of the scope.
func (s ChangeStampScope) Clone() ChangeStampScope {
	s.MeshName = clonePtr(s.MeshName)
	s.ChannelName = clonePtr(s.ChannelName)
	return s
}

// Clone returns a deep copy of the request.
func (r ActorTransferPrepareRequest) Clone() ActorTransferPrepareRequest {
	r.Participants = slices.Clone(r.Participants)
	return r
}

// Clone returns a deep copy of the record.
func (r ActorTransferRecord) Clone() ActorTransferRecord {
	r.Participants = slices.Clone(r.Participants)
	return r
}

// Clone returns a deep copy of the result.
func (r ActorTransferWriteResult) Clone() ActorTransferWriteResult {
	r.Record = cloneWith(r.Record, ActorTransferRecord.Clone)
	return r
}

// Clone returns a deep copy of the vector.
func (v CapacityVector) Clone() CapacityVector {
	v.SpotType = clonePtr(v.SpotType)
	return v
}

// Clone returns a deep copy of the allocation.
func (a PlacementAllocation) Clone() PlacementAllocation {
	a.Capacity = a.Capacity.Clone()
	return a
}

// Clone returns a deep copy of the pending creation.
func (p PendingCreation) Clone() PendingCreation {
	p.RequestSHA256 = bytes.Clone(p.RequestSHA256)
	return p
}

// Clone returns a deep copy of the snapshot.
func (s AuthoritySnapshot) Clone() AuthoritySnapshot {
	s.Payload = bytes.Clone(s.Payload)
	s.Allocation = s.Allocation.Clone()
	s.PendingCreation = cloneWith(s.PendingCreation, PendingCreation.Clone)
	return s
}

// Clone returns a deep copy of the result.
func (r AuthorityReadResult) Clone() AuthorityReadResult {
	r.Snapshot = cloneWith(r.Snapshot, AuthoritySnapshot.Clone)
	return r
}

// Clone returns a deep copy of the mutation.
func (m AuthorityMutation) Clone() AuthorityMutation {
	m.Payload = bytes.Clone(m.Payload)
	m.TargetOwner = clonePtr(m.TargetOwner)
	m.RelocationFence = clonePtr(m.RelocationFence)
	m.ExpectedOwner = clonePtr(m.ExpectedOwner)
	return m
}

// Clone returns a deep copy of the result.
func (r CompareExchangeResult) Clone() CompareExchangeResult {
	r.Stored = cloneWith(r.Stored, AuthoritySnapshot.Clone)
	r.Current = cloneWith(r.Current, AuthorityReadResult.Clone)
	return r
}

// Clone returns a deep copy of the entry.
func (e AuthorityEntry) Clone() AuthorityEntry {
	e.Snapshot = e.Snapshot.Clone()
	return e
}

// Clone returns a deep copy of the result.
func (r AuthorityScanResult) Clone() AuthorityScanResult {
	r.Items = CloneAll(r.Items)
	return r
}

// Clone returns a deep copy of the intent.
func (i CreationIntent) Clone() CreationIntent {
	i.RequestSHA256 = bytes.Clone(i.RequestSHA256)
	return i
}

// Clone returns a deep copy of the publication.
func (p TerminalPublication) Clone() TerminalPublication {
	p.TerminalEnvelope = bytes.Clone(p.TerminalEnvelope)
	p.TerminalEnvelopeSHA256 = bytes.Clone(p.TerminalEnvelopeSHA256)
	return p
}

// Clone returns a deep copy of the record.
func (r TerminalRecord) Clone() TerminalRecord {
	r.TerminalEnvelope = bytes.Clone(r.TerminalEnvelope)
	r.TerminalEnvelopeSHA256 = bytes.Clone(r.TerminalEnvelopeSHA256)
	return r
}

// Clone returns a deep copy of the result.
func (r TerminalReadResult) Clone() TerminalReadResult {
	r.Record = cloneWith(r.Record, TerminalRecord.Clone)
	return r
}

// Clone returns a deep copy of the request.
func (r ReserveRequest) Clone() ReserveRequest {
	r.Intent = r.Intent.Clone()
	r.CreatingPayload = bytes.Clone(r.CreatingPayload)
	r.Capacity = r.Capacity.Clone()
	return r
}

// Clone returns a deep copy of the result.
func (r ReserveResult) Clone() ReserveResult {
	r.Creating = cloneWith(r.Creating, AuthoritySnapshot.Clone)
	r.Current = cloneWith(r.Current, AuthorityReadResult.Clone)
	return r
}

// Clone returns a deep copy of the request.
func (r CommitRequest) Clone() CommitRequest {
	r.ReadyPayload = bytes.Clone(r.ReadyPayload)
	return r
}

// Clone returns a deep copy of the result.
func (r CommitResult) Clone() CommitResult {
	r.Ready = cloneWith(r.Ready, AuthoritySnapshot.Clone)
	return r
}

// Clone returns a deep copy of the completion.
func (c CreationCompletion) Clone() CreationCompletion {
	c.ReadyPayload = bytes.Clone(c.ReadyPayload)
	c.Terminal = c.Terminal.Clone()
	return c
}

// Clone returns a deep copy of the request.
func (r CompleteCreationRequest) Clone() CompleteCreationRequest {
	r.Completion = r.Completion.Clone()
	return r
}

// Clone returns a deep copy of the result.
func (r CompleteCreationResult) Clone() CompleteCreationResult {
	r.Ready = cloneWith(r.Ready, AuthoritySnapshot.Clone)
	r.Terminal = cloneWith(r.Terminal, TerminalRecord.Clone)
	return r
}

// Clone returns a deep copy of the request.
func (r RelocationReservationRequest) Clone() RelocationReservationRequest {
	r.Capacity = r.Capacity.Clone()
	return r
}

// Clone returns a deep copy of the result.
func (r RelocationReserveResult) Clone() RelocationReserveResult {
	r.Current = cloneWith(r.Current, AuthorityReadResult.Clone)
	return r
}

// Clone returns a deep copy of the participant.
func (p AggregateParticipant) Clone() AggregateParticipant {
	p.AuthorityPayload = bytes.Clone(p.AuthorityPayload)
	p.MembershipMutation = bytes.Clone(p.MembershipMutation)
	return p
}

// Clone returns a deep copy of the request.
func (r AggregatePrepareRequest) Clone() AggregatePrepareRequest {
	r.Participants = CloneAll(r.Participants)
	r.InventoryDigest = bytes.Clone(r.InventoryDigest)
	r.Capacity = r.Capacity.Clone()
	return r
}
