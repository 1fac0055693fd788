package location

import (
	"context"
	"time"
)

// MeshNodeStore is the mesh-node descriptor table.
type MeshNodeStore interface {
	UpdateMeshNode(ctx context.Context, d MeshNodeDescriptor, intent WriteIntent) (WriteResult, error)
	RemoveMeshNode(ctx context.Context, k MeshNodeKey, owner OwnerToken) (WriteStatus, error)
	// ListMeshNodes lists a mesh's descriptors in key order, with active and
	// reserved capacity replaced by the authority ledgers' usage.
	ListMeshNodes(ctx context.Context, meshName string, p PageRequest) (Page[MeshNodeDescriptor], error)
}

// ClientServerStore is the client-server server descriptor table.
type ClientServerStore interface {
	UpdateClientServer(ctx context.Context, d ClientServerDescriptor, intent WriteIntent) (WriteResult, error)
	RemoveClientServer(ctx context.Context, k ClientServerKey, owner OwnerToken) (WriteStatus, error)
	ListClientServers(ctx context.Context, channelName string, p PageRequest) (Page[ClientServerDescriptor], error)
}

// FanoutPublisherStore is the fanout publisher descriptor table.
type FanoutPublisherStore interface {
	UpdateFanoutPublisher(ctx context.Context, d FanoutPublisherDescriptor, intent WriteIntent) (WriteResult, error)
	RemoveFanoutPublisher(ctx context.Context, k FanoutPublisherKey, owner OwnerToken) (WriteStatus, error)
	// ListFanoutPublishers lists only rows whose owner id holds a live lease.
	ListFanoutPublishers(ctx context.Context, channelName string, p PageRequest) (Page[FanoutPublisherDescriptor], error)
}

// PeerStore is the auto-connect peer table.
type PeerStore interface {
	UpdatePeer(ctx context.Context, p PeerLocation, intent WriteIntent) (WriteResult, error)
	// RemovePeer compares owner.LeaseGeneration with the row generation.
	RemovePeer(ctx context.Context, k PeerKey, owner OwnerToken) (WriteResult, error)
	// ListPeers returns every matching row, unpaged, in key order.
	ListPeers(ctx context.Context, f PeerFilter) ([]PeerLocation, error)
}

// SpotStore is the spot table.
type SpotStore interface {
	UpdateSpot(ctx context.Context, s SpotLocation, intent WriteIntent) (WriteResult, error)
	RemoveSpot(ctx context.Context, k SpotKey, owner OwnerToken) (WriteStatus, error)
	// ResolveSpot returns the row, or nil when there is none.
	ResolveSpot(ctx context.Context, k SpotKey) (*SpotLocation, error)
	ListSpots(ctx context.Context, f SpotFilter, p PageRequest) (Page[SpotLocation], error)
}

// ActorStore is the actor table.
type ActorStore interface {
	UpdateActor(ctx context.Context, a ActorLocation, intent WriteIntent) (WriteResult, error)
	RemoveActor(ctx context.Context, k ActorKey, owner OwnerToken) (WriteStatus, error)
	// ResolveActor returns the row, or nil when there is none.
	ResolveActor(ctx context.Context, k ActorKey) (*ActorLocation, error)
	ListActors(ctx context.Context, f ActorFilter, p PageRequest) (Page[ActorLocation], error)
}

// RouteStore is the route table.
type RouteStore interface {
	UpdateRoute(ctx context.Context, r RouteLocation, intent WriteIntent) (WriteResult, error)
	// RemoveRoute compares owner.LeaseGeneration with the row generation.
	RemoveRoute(ctx context.Context, k RouteKey, owner OwnerToken) (WriteResult, error)
	// ResolveRoute returns the row, or nil when there is none.
	ResolveRoute(ctx context.Context, k RouteKey) (*RouteLocation, error)
	ListRoutes(ctx context.Context, f RouteFilter, p PageRequest) (Page[RouteLocation], error)
}

// OwnerLeaseStore issues and maintains owner leases. TTLs are whole
// milliseconds (a sub-millisecond remainder is truncated), 1 ms .. 2^53-1 ms.
type OwnerLeaseStore interface {
	ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (OwnerLeaseClaimResult, error)
	ReadOwnerLease(ctx context.Context, ownerID string) (OwnerLeaseReadResult, error)
	RenewOwnerLease(ctx context.Context, t OwnerToken, ttl time.Duration) (OwnerLeaseRenewResult, error)
	// ReleaseOwnerLease answers KindReleased or KindStale.
	ReleaseOwnerLease(ctx context.Context, t OwnerToken) (ResultKind, error)
}

// OwnerCleanup removes everything an owner holds.
type OwnerCleanup interface {
	// RemoveAllByOwner removes the exact token's authority records and every
	// location row of the owner id, if the token's lease is live; it returns
	// how many were removed (0 when the lease is not live).
	RemoveAllByOwner(ctx context.Context, t OwnerToken) (int64, error)
}

// ActorTransferStore records actor transfers.
type ActorTransferStore interface {
	PrepareActorTransfer(ctx context.Context, r ActorTransferPrepareRequest) (ActorTransferWriteResult, error)
	CommitActorTransfer(ctx context.Context, ref ActorTransferRef, recoveryOwnerID string) (ActorTransferWriteResult, error)
	ActivateActorTransfer(ctx context.Context, ref ActorTransferRef, recoveryOwnerID string) (ActorTransferWriteResult, error)
	AbortActorTransfer(ctx context.Context, ref ActorTransferRef, recoveryOwnerID string) (ActorTransferWriteResult, error)
	TakeOverActorTransfer(ctx context.Context, ref ActorTransferRef, successorOwnerID string, ttl time.Duration) (ActorTransferWriteResult, error)
	// ResolveActorTransfer returns the slot's active transfer, or nil.
	ResolveActorTransfer(ctx context.Context, meshName, actorID string) (*ActorTransferRecord, error)
}

// ChangeStampReader reads change stamps: counters that move when rows of a
// scope change and never otherwise.
type ChangeStampReader interface {
	GetChangeStamp(ctx context.Context, s ChangeStampScope) (int64, error)
}

// MeshNodeChangeStamper is an optional capability: a stamp that changes
// whenever a mesh-node row of the mesh changes, and never decreases. ok is
// false when the store cannot tell.
type MeshNodeChangeStamper interface {
	GetMeshNodeChangeStamp(ctx context.Context, meshName string) (stamp int64, ok bool, err error)
}

// AuthorityStore reads and compare-exchanges authority records.
type AuthorityStore interface {
	ReadAuthority(ctx context.Context, key AuthorityKey) (AuthorityReadResult, error)
	CompareExchangeAuthority(ctx context.Context, key AuthorityKey, expected StoreVersion, m AuthorityMutation) (CompareExchangeResult, error)
	// ListAuthorities lists records whose key starts with prefix, in byte
	// order, limit 1..1000 per page; cursor "" starts a scan.
	ListAuthorities(ctx context.Context, prefix string, cursor string, limit int) (AuthorityScanResult, error)
}

// ObjectCreationStore creates objects through reserved authority records.
type ObjectCreationStore interface {
	Reserve(ctx context.Context, r ReserveRequest) (ReserveResult, error)
	// Commit completes a spot creation.
	Commit(ctx context.Context, r CommitRequest) (CommitResult, error)
	// CompleteCreation completes an actor creation and publishes its terminal.
	CompleteCreation(ctx context.Context, r CompleteCreationRequest) (CompleteCreationResult, error)
	ReadCreationTerminal(ctx context.Context, op OperationIdentity) (TerminalReadResult, error)
	// AbortCreation answers KindAborted, KindAlreadyAborted or KindStale.
	AbortCreation(ctx context.Context, r AbortRequest) (ResultKind, error)
}

// RelocationCapacityStore reserves target capacity for relocations.
type RelocationCapacityStore interface {
	ReserveRelocationCapacity(ctx context.Context, r RelocationReservationRequest) (RelocationReserveResult, error)
	// AbortRelocationCapacity answers KindAborted, KindAlreadyAborted,
	// KindAlreadyCommitted or KindStale.
	AbortRelocationCapacity(ctx context.Context, fence RelocationFence) (ResultKind, error)
}

// AggregateStore moves several authority records in one step.
type AggregateStore interface {
	PrepareAggregate(ctx context.Context, r AggregatePrepareRequest) (AggregatePrepareResult, error)
	// CommitAggregate answers KindCommitted, KindAlreadyCommitted, KindStale
	// or KindGenerationExhausted.
	CommitAggregate(ctx context.Context, f AggregateFence) (ResultKind, error)
	// AbortAggregate answers KindAborted, KindAlreadyAborted or KindStale.
	AbortAggregate(ctx context.Context, f AggregateFence) (ResultKind, error)
}

// Store is the whole location store.
type Store interface {
	MeshNodeStore
	ClientServerStore
	FanoutPublisherStore
	PeerStore
	SpotStore
	ActorStore
	RouteStore
	OwnerLeaseStore
	OwnerCleanup
	ActorTransferStore
	ChangeStampReader
	AuthorityStore
	ObjectCreationStore
	RelocationCapacityStore
	AggregateStore
}

// ChangeWatcher is an optional capability of stores that can push change
// notifications (etcdstore can; memstore can too).
type ChangeWatcher interface {
	// WatchChanges sends a value on the returned channel soon after rows of
	// any of the given tables changed (bursts may be coalesced into one
	// notification, and a notification may be spurious, for example after the
	// store had to re-list). The channel is closed when ctx is done.
	WatchChanges(ctx context.Context, tables ...Table) (<-chan struct{}, error)
}
