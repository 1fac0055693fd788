package location

import (
	"context"
	"time"
)

// This file is the contract of a location store: what every method answers,
// what it compares (fencing), and which numbers it issues. memstore and
// etcdstore implement it with the shared decision procedures of package
// rules; the conformance package checks any implementation against it. IDs
// in parentheses (A-nn, D-nn, E-n, Qn, INV-n) are defined in
// docs/decisions.md and docs/deviations.md.
//
// Words used below:
//   - "live" for an owner id: the id holds an owner lease that has not ended,
//     of any generation. "The exact lease is live" for a token: the id's live
//     lease has exactly the token's lease generation.
//   - "Stored(g)", "IgnoredStale", "RejectedConflict": a WriteResult with that
//     status; a failed result always carries generation 0 and UpdatedAt
//     Epoch(). A stored result carries the row's generation and the call's
//     store time (except a descriptor replay, which reports the row's own
//     UpdatedAt).
//   - "Bumps (K, mesh)": the change stamp of kind K for the mesh and the
//     kind's global stamp move (see ChangeStampReader).

// MeshNodeStore is the mesh-node descriptor table, keyed by (mesh, RID). The
// three descriptor tables share one write procedure (02 §2): a descriptor
// carries its owner's token, a lifecycle generation (one per node process)
// and a descriptor revision (growing within a lifecycle).
type MeshNodeStore interface {
	// UpdateMeshNode writes a descriptor. Fencing, in order:
	//  1. The writer's exact lease (d's owner id and lease generation) must be
	//     live, whatever the intent, else RejectedConflict.
	//  2. No row: NewClaim or Takeover creates it under a new generation;
	//     Renew is IgnoredStale. A server descriptor with an entry spot
	//     also claims that spot id; a claim held by another descriptor key,
	//     owner or lifecycle makes the write RejectedConflict (a claim whose
	//     holder's exact lease is no longer live counts as free, A-03).
	//  3. A row exists: Takeover replaces it under a new generation; so does
	//     NewClaim when the row's owner id is not live, or when the same owner
	//     id restarted (the row has another lease generation and the writer
	//     holds the live one). The entry claim follows the row.
	//  4. Otherwise a descriptor equal to the row (full fingerprint, 02 §2.8)
	//     is a replay: Stored with the row's generation and its stored
	//     UpdatedAt, nothing written.
	//  5. Otherwise the same owner token and lifecycle with a greater revision
	//     and unchanged immutable fields is a revision update: Stored with the
	//     row's generation. Anything else is IgnoredStale — including a
	//     NewClaim over another live owner's row.
	//
	// Numbers: a new generation is 1 on every create and +1 on a takeover in
	// memory; on etcd it is greater than every earlier generation of
	// the key (E-3). Renewals, replays and revision updates keep it. A real
	// write bumps (Peer, mesh) and the mesh-node change stamp. Bad
	// input (ValidateMeshNode) is an *InputError.
	UpdateMeshNode(ctx context.Context, d MeshNodeDescriptor, intent WriteIntent) (WriteResult, error)
	// RemoveMeshNode deletes the row when owner is exactly its owner token
	// (id and lease generation; liveness is not required) and releases its
	// entry-spot claim: Stored. Otherwise (no row, another token)
	// IgnoredStale. A removal bumps (Peer, mesh) and the mesh-node stamp. The
	// key is not validated.
	RemoveMeshNode(ctx context.Context, k MeshNodeKey, owner OwnerToken) (WriteStatus, error)
	// ListMeshNodes lists a mesh's descriptors in key order, with active and
	// reserved capacity replaced by the authority ledgers' usage.
	//
	// Rows of dead owners are listed too. Capacity usage is read at the row's
	// lifecycle generation (D-19) and at the same point in time as the rows
	// (03b E-14). Paging as PageRequest says; the name is not validated.
	ListMeshNodes(ctx context.Context, meshName string, p PageRequest) (Page[MeshNodeDescriptor], error)
}

// ClientServerStore is the client-server server descriptor table, keyed by
// (channel, server RID).
type ClientServerStore interface {
	// UpdateClientServer follows UpdateMeshNode's rules without entry-spot
	// claims (02 §2.5). Generations continue after a removal in memory (no
	// restart at 1); a real write bumps (ClientServer, channel), the channel
	// standing in the mesh slot. Bad input (ValidateClientServer) is an
	// *InputError.
	UpdateClientServer(ctx context.Context, d ClientServerDescriptor, intent WriteIntent) (WriteResult, error)
	// RemoveClientServer deletes the row when owner is exactly its owner
	// token (no liveness check): Stored; otherwise IgnoredStale. A removal
	// bumps (ClientServer, channel).
	RemoveClientServer(ctx context.Context, k ClientServerKey, owner OwnerToken) (WriteStatus, error)
	// ListClientServers lists a channel's descriptors in key order, rows of
	// dead owners included. Paging as PageRequest says.
	ListClientServers(ctx context.Context, channelName string, p PageRequest) (Page[ClientServerDescriptor], error)
}

// FanoutPublisherStore is the fanout publisher descriptor table, keyed by
// (channel, publisher RID).
type FanoutPublisherStore interface {
	// UpdateFanoutPublisher follows UpdateClientServer's rules (02 §2.7); no
	// change stamp moves. Bad input (ValidateFanoutPublisher) is an
	// *InputError.
	UpdateFanoutPublisher(ctx context.Context, d FanoutPublisherDescriptor, intent WriteIntent) (WriteResult, error)
	// RemoveFanoutPublisher deletes the row when owner is exactly its owner
	// token (no liveness check): Stored; otherwise IgnoredStale.
	RemoveFanoutPublisher(ctx context.Context, k FanoutPublisherKey, owner OwnerToken) (WriteStatus, error)
	// ListFanoutPublishers lists only rows whose owner id holds a live lease.
	//
	// A live lease of any generation keeps a row listed, also one written by
	// an earlier incarnation; on etcd rows and owner keys are read at
	// one revision (03b E-13). Paging as PageRequest says.
	ListFanoutPublishers(ctx context.Context, channelName string, p PageRequest) (Page[FanoutPublisherDescriptor], error)
}

// PeerStore is the auto-connect peer table. A peer row carries its own
// generation, which callers feed back to renew and remove it (02 §3); its
// identity drops the endpoint when a node RID is present.
type PeerStore interface {
	// UpdatePeer writes a peer row. The writer's own lease is not checked
	//
	//   - NewClaim over a row whose owner id is live (any generation, even the
	//     writer's own row) is RejectedConflict.
	//   - NewClaim otherwise, and Takeover always, store the row under a new
	//     generation (also over an existing row), which is returned and kept
	//     in the row.
	//   - Renew refreshes a row of the same owner id when p.Generation is 0 (a
	//     wildcard) or the row's generation: Stored with the row's generation,
	//     which is kept. Otherwise IgnoredStale.
	//
	// A write bumps (Peer, mesh). Bad input (ValidatePeer, including an
	// intent outside 1..3, A-31) is an *InputError.
	UpdatePeer(ctx context.Context, p PeerLocation, intent WriteIntent) (WriteResult, error)
	// RemovePeer compares owner.LeaseGeneration with the row generation.
	//
	// The row is deleted when owner.OwnerID is its owner id and
	// owner.LeaseGeneration its row generation (A-14: pass the generation a
	// write returned); the result is Stored with that generation and the
	// store time. Otherwise IgnoredStale. No liveness check. A removal bumps
	// (Peer, mesh). Bad keys (ValidatePeerKey: a present but empty node RID
	// is a Type error) are an *InputError.
	RemovePeer(ctx context.Context, k PeerKey, owner OwnerToken) (WriteResult, error)
	// ListPeers returns every matching row, unpaged, in key order.
	// Rows of dead owners are included.
	ListPeers(ctx context.Context, f PeerFilter) ([]PeerLocation, error)
}

// SpotStore is the spot table, keyed by (mesh, spot id). A spot row carries
// the lease generation of the owner that wrote it; its row generation lives
// in the table (02 §4).
type SpotStore interface {
	// UpdateSpot writes a spot row. The writer's own lease is not checked
	//
	//   - NewClaim over a row whose owner id is live (any generation, even the
	//     writer's own row) is RejectedConflict.
	//   - NewClaim otherwise, and Takeover always, store the row under a new
	//     generation.
	//   - Renew replaces every field of a row with the same owner id and lease
	//     generation and keeps its generation, even when that lease has ended
	//     otherwise IgnoredStale.
	//
	// A write bumps (Spot, mesh). Bad input (ValidateSpot) is an
	// *InputError.
	UpdateSpot(ctx context.Context, s SpotLocation, intent WriteIntent) (WriteResult, error)
	// RemoveSpot deletes the row when owner equals its owner id and lease
	// generation (no liveness check): Stored. Otherwise IgnoredStale. A
	// removal bumps (Spot, mesh).
	RemoveSpot(ctx context.Context, k SpotKey, owner OwnerToken) (WriteStatus, error)
	// ResolveSpot returns the row, or nil when there is none.
	// The row is a copy; rows of dead owners are returned too.
	ResolveSpot(ctx context.Context, k SpotKey) (*SpotLocation, error)
	// ListSpots lists matching rows in key order, rows of dead owners
	// included. Paging as PageRequest says; the filter is not validated.
	ListSpots(ctx context.Context, f SpotFilter, p PageRequest) (Page[SpotLocation], error)
}

// ActorStore is the actor table, keyed by (mesh, actor id). Its rows follow
// the spot table's rules.
type ActorStore interface {
	// UpdateActor is UpdateSpot's contract on the actor table; a write bumps
	// (Actor, mesh). Bad input (ValidateActor) is an *InputError.
	UpdateActor(ctx context.Context, a ActorLocation, intent WriteIntent) (WriteResult, error)
	// RemoveActor is RemoveSpot's contract on the actor table; a removal
	// bumps (Actor, mesh).
	RemoveActor(ctx context.Context, k ActorKey, owner OwnerToken) (WriteStatus, error)
	// ResolveActor returns the row, or nil when there is none.
	// The row is a copy.
	ResolveActor(ctx context.Context, k ActorKey) (*ActorLocation, error)
	// ListActors lists matching rows in key order. The filter has no mesh
	// (on etcd the whole table is scanned, 03b E-12). Paging as PageRequest
	// says.
	ListActors(ctx context.Context, f ActorFilter, p PageRequest) (Page[ActorLocation], error)
}

// RouteStore is the route table, keyed by (route kind, route key). Its rows
// follow the peer table's rules.
type RouteStore interface {
	// UpdateRoute is UpdatePeer's contract on the route table; a write bumps
	// the global Route stamp only. Bad input (ValidateRoute) is an
	// *InputError.
	UpdateRoute(ctx context.Context, r RouteLocation, intent WriteIntent) (WriteResult, error)
	// RemoveRoute compares owner.LeaseGeneration with the row generation.
	// It is RemovePeer's contract on the route table.
	RemoveRoute(ctx context.Context, k RouteKey, owner OwnerToken) (WriteResult, error)
	// ResolveRoute returns the row, or nil when there is none.
	// The row is a copy.
	ResolveRoute(ctx context.Context, k RouteKey) (*RouteLocation, error)
	// ListRoutes lists matching rows in key order. Paging as PageRequest
	// says.
	ListRoutes(ctx context.Context, f RouteFilter, p PageRequest) (Page[RouteLocation], error)
}

// OwnerLeaseStore issues and maintains owner leases. TTLs are whole
// milliseconds (a sub-millisecond remainder is truncated), 1 ms .. 2^53-1 ms.
//
// A lease ends when its TTL elapses without a renewal, when it is released,
// or (test harnesses) when it is expired on demand. Every fenced write
// elsewhere compares the lease at the moment it commits, and ReadOwnerLease
// reports the lease's state at the moment of the read, never an earlier
// answer. In memory expiry is decided with the store clock (expired at
// expiresAt); on etcd the lease is an etcd lease that ends at or after the
// reported expiry (E-6, 03b E-02).
type OwnerLeaseStore interface {
	// ClaimOwnerLease issues a new lease for ownerID: KindConflict while the
	// id holds a live lease (even for the holder itself, A-35); otherwise
	// KindClaimed with a token of a new lease generation, LeaseExpiresAt =
	// StoreNow + ttl. Lease generations are unique and grow across all
	// claims: a dense global counter in memory (KindGenerationExhausted at
	// 2^63-1), the owner key's CreateRevision on etcd, where exhaustion is
	// unreachable (03b E-05). Bad input (ValidateOwnerID, ValidateLeaseTTL)
	// is an *InputError.
	ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (OwnerLeaseClaimResult, error)
	// ReadOwnerLease answers KindFound with the live lease's token, expiry
	// and the store time, or KindMissing (no other field) when the id holds
	// no live lease. The answer reflects every claim, renewal, release and
	// expiry that happened before the call; a store must not answer from a
	// cache that outlives the lease. In memory an expired entry is deleted
	// by the read. Bad input (ValidateOwnerID) is an *InputError.
	ReadOwnerLease(ctx context.Context, ownerID string) (OwnerLeaseReadResult, error)
	// RenewOwnerLease moves the expiry of t's lease to StoreNow + ttl (which
	// may be earlier than before, A-36) when t is the id's live lease:
	// KindRenewed. Otherwise (ended, released, another generation)
	// KindStale, and nothing changes. The generation never changes. Bad input
	// (ValidateOwnerID, ValidateLeaseTTL) is an *InputError.
	RenewOwnerLease(ctx context.Context, t OwnerToken, ttl time.Duration) (OwnerLeaseRenewResult, error)
	// ReleaseOwnerLease answers KindReleased or KindStale.
	//
	// It ends t's lease at once when t is the id's current lease: KindReleased.
	// Otherwise KindStale. The owner's rows stay. In memory an expired entry
	// not yet read away is still released (A-20; on etcd it is already gone,
	// 03b E-19). The token is not validated.
	ReleaseOwnerLease(ctx context.Context, t OwnerToken) (ResultKind, error)
}

// OwnerCleanup removes everything an owner holds.
type OwnerCleanup interface {
	// RemoveAllByOwner removes the exact token's authority records and every
	// location row of the owner id, if the token's lease is live; it returns
	// how many were removed (0 when the lease is not live).
	//
	// Location rows go whatever lease generation wrote them; entry-
	// spot claims of removed mesh nodes are released; removed authority
	// records release their capacity and leave no reservation terminal
	// (D-32). Each removed row bumps its stamps as a single remove would
	// . The lease itself, transfers and generation counters stay. In
	// memory it is one atomic step; on etcd it runs in batches, each fenced by
	// the token's lease, and stops when the lease ends (E-8, Q12): the count
	// is what was actually removed. Not validated.
	RemoveAllByOwner(ctx context.Context, t OwnerToken) (int64, error)
}

// ActorTransferStore records actor transfers. An actor slot (mesh, actor id)
// has at most one active transfer and keeps every transfer record; records
// are never deleted and transfers bump no change stamp (03 §3). A failed
// transition answers a status without a record.
type ActorTransferStore interface {
	// PrepareActorTransfer starts a transfer. With an active transfer in the
	// slot: the same transfer id still prepared answers TransferStored with
	// the existing record unchanged (the request's other fields are not
	// compared, A-26); any other is TransferRejectedConflict. Otherwise a new
	// prepared record (participants deduplicated, recovery lease expiring at
	// now + TTL) replaces any finished record of that id and becomes the
	// slot's active transfer. Bad input (ValidateTransferPrepare) is an
	// *InputError.
	PrepareActorTransfer(ctx context.Context, r ActorTransferPrepareRequest) (ActorTransferWriteResult, error)
	// CommitActorTransfer moves the slot's active transfer ref from prepared
	// to committed. TransferNotFound unless ref is the slot's active
	// transfer; TransferInvalidState unless it is prepared;
	// TransferRejectedConflict unless recoveryOwnerID is its recorded
	// recovery owner (whose recovery lease is not checked, A-27). Bad refs
	// (ValidateTransferRef) are an *InputError.
	CommitActorTransfer(ctx context.Context, ref ActorTransferRef, recoveryOwnerID string) (ActorTransferWriteResult, error)
	// ActivateActorTransfer moves the active transfer from committed to
	// activated and leaves the slot without an active transfer; outcomes as
	// CommitActorTransfer.
	ActivateActorTransfer(ctx context.Context, ref ActorTransferRef, recoveryOwnerID string) (ActorTransferWriteResult, error)
	// AbortActorTransfer moves the active transfer from prepared to aborted
	// and leaves the slot without an active transfer; outcomes as
	// CommitActorTransfer.
	AbortActorTransfer(ctx context.Context, ref ActorTransferRef, recoveryOwnerID string) (ActorTransferWriteResult, error)
	// TakeOverActorTransfer hands a transfer whose recovery lease has expired
	// (at or before now, by the store clock) to successorOwnerID with a
	// recovery lease of now + ttl; state and active pointer stay.
	// TransferNotFound without a record of ref; TransferInvalidState unless
	// it is prepared or committed (the active pointer is not consulted,
	// A-27); TransferRejectedConflict while the recovery lease runs. Bad input
	// (ValidateTransferTakeover) is an *InputError.
	TakeOverActorTransfer(ctx context.Context, ref ActorTransferRef, successorOwnerID string, ttl time.Duration) (ActorTransferWriteResult, error)
	// ResolveActorTransfer returns the slot's active transfer, or nil.
	// The record is a copy.
	ResolveActorTransfer(ctx context.Context, meshName, actorID string) (*ActorTransferRecord, error)
}

// ChangeStampReader reads change stamps: counters that move when rows of a
// scope change and never otherwise.
type ChangeStampReader interface {
	// GetChangeStamp returns the stamp of (s.Kind, s.MeshName): a nil or
	// empty mesh name selects the kind's global stamp; s.ChannelName is
	// ignored (A-06: pass a channel as MeshName). A stamp is 0 until its
	// scope first changes and never decreases. Location-row writes and
	// removals that change a row move it (see each method), a replay or a
	// failed write does not; transfers and authority records never do; the
	// named scope kinds never move. In memory a stamp moves by exactly
	// 1 per changed row; on etcd it grows on every transaction that changes
	// the scope (E-5). Not validated.
	GetChangeStamp(ctx context.Context, s ChangeStampScope) (int64, error)
}

// MeshNodeChangeStamper is an optional capability: a stamp that changes
// whenever a mesh-node row of the mesh changes, and never decreases. ok is
// false when the store cannot tell.
type MeshNodeChangeStamper interface {
	// GetMeshNodeChangeStamp returns the mesh's mesh-node stamp: it moves on
	// every create, update, takeover and removal of a mesh-node row of the
	// mesh (RemoveAllByOwner included) and on nothing else. With ok false a
	// caller must assume the mesh changed.
	GetMeshNodeChangeStamp(ctx context.Context, meshName string) (stamp int64, ok bool, err error)
}

// AuthorityStore reads and compare-exchanges authority records.
//
// A record is reserved (an object being created) or active. Its store
// version changes on every write of it and is compared only for equality;
// its object generation is fixed for its life; its owner generation changes
// only with its owner (INV-1 … INV-4). Versions are dense decimal counters
// in memory and ModRevisions on etcd (E-4). Liveness of an owner is the
// 04 §1.11 rule: its server descriptor is serving with that lifecycle and
// owner token, and the owner's exact lease is live.
type AuthorityStore interface {
	// ReadAuthority answers KindSnapshot with a copy of the record, or
	// KindMissing. The key must be a canonical "zla1:" key (Q10); anything
	// else is an *InputError.
	ReadAuthority(ctx context.Context, key AuthorityKey) (AuthorityReadResult, error)
	// CompareExchangeAuthority applies m when the record is active and its
	// version is exactly expected; otherwise KindConflict with the current
	// read result (reserved records never match). By mutation kind:
	//   - put/preserve (new payload) and delete need the owner live;
	//   - restore (new payload) needs m.ExpectedOwner to be the owner, not
	//     its liveness;
	//   - rebindOwnerLease needs m.ExpectedOwner to be the owner and the
	//     target token live on the record's node incarnation; only the lease
	//     generation, payload and version change;
	//   - put/newOwner needs the relocation reservation m.RelocationFence
	//     reserved for this record and target owner, and its target live; the
	//     owner, its generation and the capacity move to the target.
	//
	// A failed condition is KindConflict and changes nothing (INV-10).
	// Success is KindStored with the new snapshot (a new version), or
	// KindDeleted with the version the deletion consumed; KindGenerationExhausted
	// when no version or owner generation is left (memory only). The whole
	// mutation, payload size included, is validated first
	// (ValidateCompareExchange, D-02).
	CompareExchangeAuthority(ctx context.Context, key AuthorityKey, expected StoreVersion, m AuthorityMutation) (CompareExchangeResult, error)
	// ListAuthorities lists records whose key starts with prefix, in byte
	// order, limit 1..1000 per page; cursor "" starts a scan.
	//
	// KindPage with NextCursor non-empty iff more records remain; the pages
	// of one scan never mix two states of the store (INV-13): in memory any
	// change expires the cursors, on etcd a scan reads one revision (Q2). A
	// cursor that cannot be used (undecodable, foreign, expired, compacted)
	// answers KindScanExpired (E-10). Bad input (ValidateListAuthorities) is
	// an *InputError.
	ListAuthorities(ctx context.Context, prefix string, cursor string, limit int) (AuthorityScanResult, error)
}

// ObjectCreationStore creates objects through reserved authority records: a
// spot is reserved, then committed; an actor is reserved, then completed
// (which also publishes a creation terminal); either may be aborted.
type ObjectCreationStore interface {
	// Reserve creates a reserved record for a new object on a live creation
	// target and reserves its capacity there. In order: an entry-spot claim
	// on the key is KindConflict with a missing current (D-33); an existing
	// record is KindTypeMismatch (another object kind or stable type),
	// KindAlreadyExists (active) or KindConflict; a target that is not live
	// is KindConflict; admission against the target's limits failing is
	// KindPlacementCapacityExhausted (a limit of 0 means unlimited, Q8);
	// KindGenerationExhausted in memory when a counter is spent. Success is
	// KindReserved with a fresh reservation id (lower-case UUID v4, INV-15)
	// and the reserved snapshot (new version, object and owner generation).
	// Bad input (ValidateReserve) is an *InputError.
	Reserve(ctx context.Context, r ReserveRequest) (ReserveResult, error)
	// Commit completes a spot creation.
	//
	// The reservation's reserved record (same reservation id, version and
	// creation target, the target live) becomes active with the ready
	// payload: KindCommitted; its capacity moves to the active ledger. A
	// replay after success is KindAlreadyCommitted with the current record
	// while that record is the reservation's (D-05); anything else is
	// KindStale; KindGenerationExhausted in memory. Bad input (ValidateCommit)
	// is an *InputError.
	Commit(ctx context.Context, r CommitRequest) (CommitResult, error)
	// CompleteCreation completes an actor creation and publishes its terminal.
	//
	// The whole request, key included, is validated first (at the store
	// clock: the terminal's publication window must be open), before any
	// terminal is looked up (deviations.md, 04 §2.6). Then a visible terminal
	// of the operation identity answers KindAlreadyCompleted with it (only
	// the identity is compared, D-07); a reservation that already ended is
	// KindStale (an expired terminal counts as absent, D-06); the
	// reservation's reserved record on a live target is required, else
	// KindStale. Success: created makes the record active (KindCreated,
	// Ready and Terminal); rejected or failed delete it (KindRejected,
	// KindFailed); the reserved capacity is released and the terminal stays
	// readable until operationDeadline + 5 min (E-11). KindGenerationExhausted
	// in memory when no version is left.
	CompleteCreation(ctx context.Context, r CompleteCreationRequest) (CompleteCreationResult, error)
	// ReadCreationTerminal answers KindFound with the operation's terminal
	// while it is visible (StoreNow is its publication time, D-14), else
	// KindMissing. Bad input (ValidateOperationIdentity) is an *InputError.
	ReadCreationTerminal(ctx context.Context, op OperationIdentity) (TerminalReadResult, error)
	// AbortCreation answers KindAborted, KindAlreadyAborted or KindStale.
	//
	// The key is validated first (D-22). A reservation already aborted is
	// KindAlreadyAborted for any key; the reservation's reserved record (same
	// id, version and target; liveness not required) is deleted and its
	// capacity released: KindAborted. Anything else is KindStale, also a
	// committed reservation or one whose record RemoveAllByOwner removed
	// (D-32). No version is consumed.
	AbortCreation(ctx context.Context, r AbortRequest) (ResultKind, error)
}

// RelocationCapacityStore reserves target capacity for relocations.
type RelocationCapacityStore interface {
	// ReserveRelocationCapacity reserves the target's capacity for moving one
	// active record, without writing the record, so that a later
	// put/newOwner can present the same expected version. A reservation of
	// the same id is KindAlreadyReserved when its request is equal field by
	// field, in any state (D-10), else KindConflict; the record must be
	// active and match the request, else KindConflict (with the current read
	// result); a target that is not live is KindTargetUnavailable (the
	// source may be dead); failed admission is
	// KindPlacementCapacityExhausted. Success is KindReserved with the fence.
	// No version is consumed. Bad input (ValidateRelocationReservation) is an
	// *InputError.
	ReserveRelocationCapacity(ctx context.Context, r RelocationReservationRequest) (RelocationReserveResult, error)
	// AbortRelocationCapacity answers KindAborted, KindAlreadyAborted,
	// KindAlreadyCommitted or KindStale.
	//
	// A reserved reservation is aborted and its capacity released
	// (KindAborted); an aborted one is KindAlreadyAborted, a committed one
	// KindAlreadyCommitted; an unknown one, or one an aggregate adopted, is
	// KindStale.
	AbortRelocationCapacity(ctx context.Context, fence RelocationFence) (ResultKind, error)
}

// AggregateStore moves several authority records in one step.
type AggregateStore interface {
	// PrepareAggregate records an aggregate (id, generation) for a live
	// target (else KindConflict) and holds its capacity there: KindPrepared
	// with the fence. It adopts a relocation reservation
	// whose id is the aggregate id when it matches (D-24), or admitting the
	// capacity otherwise (failure: KindConflict, D-23). Every participant
	// must be active with its expected version, a preserve participant's
	// owner live, and the newOwner participants' capacities must add up to
	// the aggregate's, else KindConflict (so a preserve-only aggregate can
	// never be prepared, D-04). An existing record is KindAlreadyPrepared
	// (prepared, identical request), KindStale (committed) or KindConflict
	// (D-25). Participants are not locked and no version is consumed (D-26).
	// KindGenerationExhausted is declared and never returned (D-39).
	// Bad input (ValidatePrepareAggregate, participant payloads up to 1 MiB,
	// D-03) is an *InputError.
	PrepareAggregate(ctx context.Context, r AggregatePrepareRequest) (AggregatePrepareResult, error)
	// CommitAggregate answers KindCommitted, KindAlreadyCommitted, KindStale
	// or KindGenerationExhausted.
	//
	// An unknown or aborted aggregate is KindStale, a committed one
	// KindAlreadyCommitted. Each participant, in order, must still be active
	// with its expected
	// version (a newOwner participant's target live, a preserve
	// participant's owner live), else KindStale. On success each gets a new
	// version and payload, a newOwner participant also the target owner, a
	// new owner generation and the target node; capacity moves from the
	// sources and the target's reserved ledger to the target's active
	// ledger: KindCommitted. KindGenerationExhausted (memory only) when the
	// versions or owner generations it needs are not left. A stale or
	// exhausted commit leaves the aggregate prepared with its capacity held
	// (D-26).
	CommitAggregate(ctx context.Context, f AggregateFence) (ResultKind, error)
	// AbortAggregate answers KindAborted, KindAlreadyAborted or KindStale.
	//
	// A prepared aggregate is aborted, releasing the capacity it held (and
	// aborting an adopted reservation): KindAborted. An aborted one is
	// KindAlreadyAborted; an unknown or committed one is KindStale.
	AbortAggregate(ctx context.Context, f AggregateFence) (ResultKind, error)
}

// Store is the whole location store.
//
// Every method of every interface it embeds keeps these rules:
//   - Context first: a done context is returned, wrapped, before anything is
//     read or written.
//   - Input first: bad input is an error that wraps ErrInvalidArgument and is
//     an *InputError (class and stable code, docs/validation.md); it is
//     reported before any state is read, so it never depends on state (Q6).
//   - Business outcomes are results, not errors. A failed outcome changes
//     nothing and moves no stamp.
//   - Every call is atomic with respect to every other (one lock in memory,
//     one guarded transaction on etcd, E-7); RemoveAllByOwner on etcd is the
//     one batched operation.
//   - Errors besides bad input: ErrTooLarge (does not fit one transaction;
//     nothing written), ErrUnavailable (the backend could not be reached;
//     nothing applied), ErrInternal (a broken invariant; nothing written),
//     ErrScanExpired (a location list token whose snapshot is gone), and
//     ErrOutcomeUnknown. A store whose write may have applied without its
//     answer arriving resolves the outcome by re-reading before it answers
//     (E-9); when it cannot within the context's deadline it returns an
//     error wrapping ErrOutcomeUnknown (and not ErrUnavailable): the write
//     may have applied, or may still apply, and the caller must read to
//     find out. Every write method can answer it, reads never do; a caller
//     classifies a failed write as: ErrInvalidArgument, ErrTooLarge,
//     ErrInternal or ErrUnavailable (not applied); ErrOutcomeUnknown
//     (perhaps applied); anything else, such as the context's own error,
//     is best treated as perhaps applied too.
//   - Times come from the store's clock, in UTC at millisecond precision; a
//     real write stores UpdatedAt = the call's store time.
//   - Values are copied in and out: nothing a caller holds aliases the store
//
//   - Numbers — row, lease, object and owner generations, store versions,
//     change stamps, continuation tokens — are exact dense counters and
//     decimal offsets in memory; on etcd only their relations hold (positive;
//     equal where the contract keeps a number; greater than every earlier
//     number of the same key or counter where it issues one; E-3 … E-5).
//     Callers feed them back and compare them, never compute with them.
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
	//
	// The given tables are location tables (TableMeshNodes … TableRoutes);
	// none means all of them. A watcher must be sent a notification after
	// every later call that writes or removes a row of a watched table
	// (updates, removals, RemoveAllByOwner), and after every owner lease
	// ends by ReleaseOwnerLease or by the harness's expiry hook, since the
	// liveness of rows changed (etcd also reports a lease's own expiry; a
	// store that judges expiry by its clock alone cannot, so watchers still
	// poll). Only changes after WatchChanges returns count. A done ctx is an
	// error wrapping ctx.Err(), and no channel.
	WatchChanges(ctx context.Context, tables ...Table) (<-chan struct{}, error)
}
