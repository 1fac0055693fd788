package storecore

import (
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Read sets (Call.Reads): what each decision of package rules is expected
// to read, written beside the wiring so that a backend that reads remotely
// can read it in one round trip before the decision's first run (etcd), or
// find all of it in its cache and skip the read. They are hints: a row a
// decision reads beyond them is read on demand, at the cost of a round
// trip; a row named but not read costs a little more data. Keys come from
// the input before it is validated, so they must never fail on bad input.

// rowReads is a decision that reads one row.
func rowReads(t rules.Table, key string) func(Peek) ReadSet {
	return func(Peek) ReadSet { return ReadSet{Refs: []Ref{Row(t, key)}} }
}

// rowAndOwner is a descriptor, spot or actor write: the row and the
// writer's owner lease.
func rowAndOwner(rs *ReadSet, t rules.Table, key, ownerID string) {
	rs.Refs = append(rs.Refs, Row(t, key), Lease(ownerID))
}

// ownerRow is a peer or route write: the row and, for a new claim only,
// the owner lease (rules.UpdatePeer consults the liveness of the row's
// owner id only then; renewals never do, and naming an owner lease that
// does not exist would cost a read on every renewal of a row whose owner
// holds no lease).
func ownerRow(rs *ReadSet, t rules.Table, key, ownerID string, intent location.WriteIntent) {
	if intent == location.IntentNewClaim {
		rowAndOwner(rs, t, key, ownerID)
		return
	}
	rs.Refs = append(rs.Refs, Row(t, key))
}

// meshNodeReads is a mesh-node write: the row, the writer's owner lease,
// and the entry-spot claim it consults.
func meshNodeReads(d *location.MeshNodeDescriptor, _ location.WriteIntent, rs *ReadSet) {
	rowAndOwner(rs, location.TableMeshNodes, rules.MeshNodeKey(d.Key()), d.OwnerID)
	if d.EntrySpotID != nil {
		if claim, err := rules.EntryClaimKey(*d.EntrySpotID); err == nil {
			rs.Refs = append(rs.Refs, Row(rules.TableEntryClaims, string(claim)))
		}
	}
}

// projectionReads are the ledger buckets rules.ProjectMeshNode reads for a
// descriptor.
func projectionReads(d *location.MeshNodeDescriptor) []Ref {
	node, lifecycle := d.Key(), d.LifecycleGeneration
	out := []Ref{bucket(node, lifecycle, rules.BucketActor, ""), bucket(node, lifecycle, rules.BucketSpot, "")}
	for _, t := range d.PopulationCapacity.SpotTypes {
		out = append(out, bucket(node, lifecycle, string(t.ObjectKind), t.StableType))
	}
	return out
}

// bucket names a capacity ledger bucket.
func bucket(node location.MeshNodeKey, lifecycle int64, name, stableType string) Ref {
	return Row(rules.TableLedger, rules.Bucket{Descriptor: node, Lifecycle: lifecycle, Name: name, StableType: stableType}.Key())
}

// transferReads are what a transition of ref reads: the slot's active
// pointer and the transfer's record.
func transferReads(ref location.ActorTransferRef) func(Peek) ReadSet {
	return func(Peek) ReadSet {
		return ReadSet{Refs: []Ref{
			Row(rules.TableTransferActive, rules.TransferSlotKey(ref.MeshName, ref.ActorID)),
			Row(rules.TableTransferRecords, rules.TransferRecordKey(ref)),
		}}
	}
}

// exchangeReads is what an exchange reads: the record and, when the record
// is at hand, the owner's descriptor and owner lease that its liveness
// check reads (so that a steady-state preserve is one transaction), and the
// relocation reservation a fence names.
func exchangeReads(x *exchange, peek Peek, rs *ReadSet) {
	rs.Refs = append(rs.Refs, Row(rules.TableAuthority, string(x.key)))
	if rec, ok := peek(rules.TableAuthority, string(x.key)); ok {
		if row, ok := rec.Value.(rules.AuthorityRow); ok {
			rs.Refs = append(rs.Refs, Row(location.TableMeshNodes, rules.MeshNodeKey(row.Allocation.Descriptor)), Lease(row.Owner.OwnerID))
		}
	}
	if fence := x.m.RelocationFence; fence != nil {
		rs.Refs = append(rs.Refs, Row(rules.TableRelocations, string(*fence)))
	}
}

// reserveReads is everything Reserve reads when the key is free: the target's
// descriptor and owner lease, the new record and its entry-spot claim (both
// usually absent, and read anyway: the record's object generation must come
// from a fresh read, decision E-3), and the capacity ledger buckets
// admission checks (actor, spot, and the request's spot type).
func reserveReads(r *location.ReserveRequest) ReadSet {
	refs := []Ref{Row(location.TableMeshNodes, rules.MeshNodeKey(r.Target.Descriptor())), Lease(r.Target.Owner.OwnerID)}
	if key, err := location.EncodeAuthorityKey(r.Key.Kind, r.Key.GlobalID); err == nil {
		refs = append(refs, Row(rules.TableAuthority, string(key)), Row(rules.TableEntryClaims, string(key)))
	}
	node, lifecycle := r.Target.Descriptor(), r.Target.NodeLifecycleGeneration
	refs = append(refs, bucket(node, lifecycle, rules.BucketActor, ""), bucket(node, lifecycle, rules.BucketSpot, ""))
	if t := r.Capacity.SpotType; t != nil {
		refs = append(refs, bucket(node, lifecycle, string(t.ObjectKind), t.StableType))
	}
	return ReadSet{Refs: refs}
}

// creationReads is what a later creation step (Commit, CompleteCreation,
// AbortCreation) reads: the target's descriptor and owner lease, the record,
// the capacity ledger buckets the record's allocation moves, and the
// reservation terminal, expected absent (named after a fresh id, it exists
// only once the reservation ended). After this process's own Reserve the
// record, descriptor, owner lease and buckets are at hand, so the step is
// one transaction. Without the record at hand, the buckets are guessed from
// the target (its actor and spot buckets and, when its descriptor is at
// hand, its spot types' buckets).
func creationReads(peek Peek, k location.ObjectCreationKey, reservationID string, target location.CreationTarget) ReadSet {
	rs := ReadSet{Refs: []Ref{Row(location.TableMeshNodes, rules.MeshNodeKey(target.Descriptor())), Lease(target.Owner.OwnerID)}}
	if key, err := location.EncodeAuthorityKey(k.Kind, k.GlobalID); err == nil {
		rs.Refs = append(rs.Refs, Row(rules.TableAuthority, string(key)))
		rs.Refs = append(rs.Refs, creationBuckets(peek, string(key), target)...)
	}
	if reservationID != "" {
		rs.Absent = append(rs.Absent, Row(rules.TableReservationTerminals, reservationID))
	}
	return rs
}

// creationBuckets returns the ledger buckets a creation step of the record
// at key will move: those of the record's allocation when it is at hand,
// else a guess from the target.
func creationBuckets(peek Peek, key string, target location.CreationTarget) []Ref {
	if rec, ok := peek(rules.TableAuthority, key); ok {
		if row, ok := rec.Value.(rules.AuthorityRow); ok {
			return allocationBuckets(row.Allocation)
		}
	}
	node, lifecycle := target.Descriptor(), target.NodeLifecycleGeneration
	out := []Ref{bucket(node, lifecycle, rules.BucketActor, ""), bucket(node, lifecycle, rules.BucketSpot, "")}
	if rec, ok := peek(location.TableMeshNodes, rules.MeshNodeKey(node)); ok {
		if d, ok := rec.Value.(location.MeshNodeDescriptor); ok {
			for _, t := range d.PopulationCapacity.SpotTypes {
				out = append(out, bucket(node, lifecycle, string(t.ObjectKind), t.StableType))
			}
		}
	}
	return out
}

// allocationBuckets returns the ledger buckets an allocation's capacity
// occupies (those the rules' ledger changes move): actor and spot when
// counted, and the spot type's.
func allocationBuckets(a location.PlacementAllocation) []Ref {
	node, lifecycle, c := a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity
	var out []Ref
	if c.Actors != 0 {
		out = append(out, bucket(node, lifecycle, rules.BucketActor, ""))
	}
	if c.Spots != 0 {
		out = append(out, bucket(node, lifecycle, rules.BucketSpot, ""))
	}
	if c.SpotType != nil {
		out = append(out, bucket(node, lifecycle, string(c.SpotType.ObjectKind), c.SpotType.StableType))
	}
	return out
}
