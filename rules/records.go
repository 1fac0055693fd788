package rules

import (
	"strconv"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// EntryClaim is a mesh node's claim on its entry spot id (table
// TableEntryClaims, keyed by the user_spot authority key of the id).
type EntryClaim struct {
	Descriptor          location.MeshNodeKey `json:"descriptor"`
	OwnerID             string               `json:"ownerId"`
	LeaseGeneration     int64                `json:"leaseGeneration"`
	LifecycleGeneration int64                `json:"lifecycleGeneration"`
}

// Bucket names one capacity ledger bucket: a node incarnation and what is
// counted there.
type Bucket struct {
	Descriptor location.MeshNodeKey
	Lifecycle  int64
	// Name is "actor", "spot", or a spot object kind ("user_spot",
	// "instance_spot") for typed buckets.
	Name string
	// StableType is "" for the actor and spot buckets.
	StableType string
}

// Bucket names.
const (
	BucketActor = "actor"
	BucketSpot  = "spot"
)

// Key is the bucket's key in TableLedger.
func (b Bucket) Key() string {
	return keys.Segments(b.Descriptor.MeshName, string(b.Descriptor.RID), strconv.FormatInt(b.Lifecycle, 10), b.Name, b.StableType)
}

// LedgerEntry is the usage of one bucket (table TableLedger). A bucket whose
// counts are both zero is deleted.
type LedgerEntry struct {
	Active   int64 `json:"active"`
	Reserved int64 `json:"reserved"`
}

// AuthorityRow is a stored authority record (table TableAuthority). Its store
// version is StoreVersion in memstore; etcdstore derives it from the key's
// ModRevision and ignores the field when encoding.
type AuthorityRow struct {
	StoreVersion             location.StoreVersion        `json:"storeVersion,omitempty"`
	Payload                  []byte                       `json:"payload"`
	ObjectGeneration         int64                        `json:"objectGeneration"`
	AuthorityOwnerGeneration int64                        `json:"authorityOwnerGeneration"`
	Owner                    location.OwnerToken          `json:"owner"`
	Allocation               location.PlacementAllocation `json:"allocation"`
	PendingCreation          *location.PendingCreation    `json:"pendingCreation,omitempty"`
	// Creation is set on rows made by Reserve and kept after they become
	// active.
	Creation *CreationInfo `json:"creation,omitempty"`
}

// CreationInfo is the creation bookkeeping of a reserved row.
type CreationInfo struct {
	ReservationID string                  `json:"reservationId"`
	Target        location.CreationTarget `json:"target"`
	// Terminal is "" until the creation ends, then "committed".
	Terminal string `json:"terminal,omitempty"`
}

// Relocation and aggregate record states.
const (
	RecordReserved  = "reserved"
	RecordPrepared  = "prepared"
	RecordCommitted = "committed"
	RecordAborted   = "aborted"
)

// RelocationRecord is a relocation capacity reservation (table
// TableRelocations, keyed by reservation id).
type RelocationRecord struct {
	Request location.RelocationReservationRequest `json:"request"`
	// State is RecordReserved, RecordPrepared (adopted by an aggregate),
	// RecordCommitted or RecordAborted.
	State     string                   `json:"state"`
	Aggregate *location.AggregateFence `json:"aggregate,omitempty"`
}

// AggregateRecord is a prepared aggregate (table TableAggregates).
type AggregateRecord struct {
	Request location.AggregatePrepareRequest `json:"request"`
	// State is RecordPrepared, RecordCommitted or RecordAborted.
	State string `json:"state"`
	// CapacityReservationID is set when the aggregate adopted a relocation
	// reservation (it equals the aggregate id).
	CapacityReservationID string `json:"capacityReservationId,omitempty"`
}

// ReservationTerminal is how a creation reservation ended (table
// TableReservationTerminals): "committed", "rejected", "failed" or "aborted".
type ReservationTerminal struct {
	State string `json:"state"`
}

// TransferPointer names a slot's active transfer (table TableTransferActive).
type TransferPointer struct {
	TransferID string `json:"transferId"`
}
