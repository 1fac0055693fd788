package location_test

import (
	"testing"

	"github.com/zlink-systems/zlink-etcd/location"
)

// vRel is REL("R1", S, NA, NB) of the authority catalogue: a user spot
// "r1" of type room moving from node-a to node-b.
func vRel() location.RelocationReservationRequest {
	return location.RelocationReservationRequest{
		ReservationID: "R1", AuthorityKey: "zla1:s:2:r1", ExpectedStoreVersion: "7",
		ObjectKind: location.ObjectUserSpot, StableType: "room",
		SourceDescriptor: location.MeshNodeKey{MeshName: "m", RID: "node-a"}, SourceNodeLifecycleGeneration: 1,
		SourceOwner:      location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: 1},
		TargetDescriptor: location.MeshNodeKey{MeshName: "m", RID: "node-b"}, TargetNodeLifecycleGeneration: 1,
		TargetOwner: location.OwnerToken{OwnerID: "owner-b", LeaseGeneration: 2},
		Capacity:    vVS("room"),
	}
}

// vVS is VS(t) of the authority catalogue.
func vVS(stableType string) location.CapacityVector {
	return location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: stableType, Count: 1}}
}

func TestValidateRelocationReservation(t *testing.T) {
	vMutations(t, vRel, location.ValidateRelocationReservation, []vCase[location.RelocationReservationRequest]{
		{"AUTH-140 REL is valid", func(*location.RelocationReservationRequest) {}, vOK()},
		{"AUTH-143 reservation id empty", func(r *location.RelocationReservationRequest) { r.ReservationID = "" }, vType(location.CodeRelocationText)},
		{"AUTH-143 reservation id with NUL", func(r *location.RelocationReservationRequest) { r.ReservationID = "R\x001" }, vType(location.CodeRelocationText)},
		{"AUTH-143 stable type empty", func(r *location.RelocationReservationRequest) { r.StableType = "" }, vType(location.CodeRelocationText)},
		{"AUTH-143 capacity all zero", func(r *location.RelocationReservationRequest) { r.Capacity = location.CapacityVector{} }, vRange(location.CodeAuthorityCapacity)},
		{"text before capacity", func(r *location.RelocationReservationRequest) {
			r.StableType = ""
			r.Capacity = location.CapacityVector{}
		}, vType(location.CodeRelocationText)},
		{"key, owners and generations are not validated", func(r *location.RelocationReservationRequest) {
			r.AuthorityKey, r.ExpectedStoreVersion, r.ObjectKind = "", "", ""
			r.SourceOwner, r.TargetOwner = location.OwnerToken{}, location.OwnerToken{LeaseGeneration: -1}
			r.SourceNodeLifecycleGeneration, r.TargetNodeLifecycleGeneration = 0, -1
		}, vOK()},
		{"authority key invalid UTF-8", func(r *location.RelocationReservationRequest) { r.AuthorityKey = "zla1:s:1:\xff" }, vType(location.CodeTextUTF8)},
		{"target owner invalid UTF-8", func(r *location.RelocationReservationRequest) { r.TargetOwner.OwnerID = "\xff" }, vType(location.CodeTextUTF8)},
		{"spot type stable type invalid UTF-8", func(r *location.RelocationReservationRequest) { r.Capacity.SpotType.StableType = "\xff" }, vType(location.CodeTextUTF8)},
	})
}

func TestValidateCapacityVector(t *testing.T) {
	spotType := func(count int64) *location.SpotTypeDelta {
		return &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: "room", Count: count}
	}
	vInputs(t, location.ValidateCapacityVector, []vInput[location.CapacityVector]{
		{"VA", location.CapacityVector{Actors: 1}, vOK()},
		{"VS(room)", vVS("room"), vOK()},
		{"spot type alone", location.CapacityVector{SpotType: spotType(1)}, vOK()},
		{"maximum counts", location.CapacityVector{Actors: 1<<31 - 1, Spots: 1<<31 - 1, SpotType: spotType(1<<31 - 1)}, vOK()},
		{"kind and stable type are not checked", location.CapacityVector{Actors: 1, SpotType: &location.SpotTypeDelta{Count: 3}}, vOK()},
		{"AUTH-079 all zero", location.CapacityVector{}, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-079 actors -1", location.CapacityVector{Actors: -1, Spots: 1}, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-079 spot type count 0", location.CapacityVector{Spots: 1, SpotType: spotType(0)}, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-079 actors 2^31", location.CapacityVector{Actors: 1 << 31}, vRange(location.CodeAuthorityCapacity)},
		{"spots 2^31", location.CapacityVector{Spots: 1 << 31}, vRange(location.CodeAuthorityCapacity)},
		{"spot type count -1", location.CapacityVector{Spots: 1, SpotType: spotType(-1)}, vRange(location.CodeAuthorityCapacity)},
		{"spot type count 2^31", location.CapacityVector{Spots: 1, SpotType: spotType(1 << 31)}, vRange(location.CodeAuthorityCapacity)},
	})
}
