package location_test

import (
	"bytes"
	"testing"

	"github.com/zlink-systems/zlink-etcd/location"
)

// vAgg is AGG("AG1", 1, [g1 newOwner, g2 newOwner], {spots 2, room 2})
// of the authority catalogue.
func vAgg() location.AggregatePrepareRequest {
	participant := func(key string) location.AggregateParticipant {
		return location.AggregateParticipant{
			AuthorityKey: location.AuthorityKey(key), ExpectedStoreVersion: "3",
			OwnerTransition: location.TransitionNewOwner, AuthorityPayload: []byte("moved"), MembershipMutation: []byte("m"),
		}
	}
	return location.AggregatePrepareRequest{
		AggregateID: "AG1", AggregateGeneration: 1,
		Participants:     []location.AggregateParticipant{participant("zla1:s:2:g1"), participant("zla1:s:2:g2")},
		InventoryDigest:  bytes.Repeat([]byte{7}, 32),
		TargetDescriptor: location.MeshNodeKey{MeshName: "m", RID: "node-b"}, TargetDescriptorLifecycleGeneration: 1,
		Capacity: location.CapacityVector{Spots: 2, SpotType: &location.SpotTypeDelta{
			ObjectKind: location.ObjectUserSpot, StableType: "room", Count: 2,
		}},
		TargetOwner: location.OwnerToken{OwnerID: "owner-b", LeaseGeneration: 2},
	}
}

func TestValidatePrepareAggregate(t *testing.T) {
	vMutations(t, vAgg, location.ValidatePrepareAggregate, []vCase[location.AggregatePrepareRequest]{
		{"AUTH-156 AGG is valid", func(*location.AggregatePrepareRequest) {}, vOK()},
		{"AUTH-159 id empty", func(r *location.AggregatePrepareRequest) { r.AggregateID = "" }, vType(location.CodeAggregateID)},
		{"AUTH-159 generation 0", func(r *location.AggregatePrepareRequest) { r.AggregateGeneration = 0 }, vRange(location.CodeAggregateShape)},
		{"AUTH-159 no participants", func(r *location.AggregatePrepareRequest) { r.Participants = nil }, vRange(location.CodeAggregateShape)},
		{"AUTH-159 digest 31 bytes", func(r *location.AggregatePrepareRequest) { r.InventoryDigest = r.InventoryDigest[:31] }, vType(location.CodeAggregateDigest)},
		{"AUTH-159 capacity all zero", func(r *location.AggregatePrepareRequest) { r.Capacity = location.CapacityVector{} }, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-159 duplicate participant", func(r *location.AggregatePrepareRequest) {
			r.Participants[1].AuthorityKey = r.Participants[0].AuthorityKey
		}, vType(location.CodeAggregateParticipantOrder)},
		{"AUTH-159 participants not byte-sorted", func(r *location.AggregatePrepareRequest) {
			r.Participants[0], r.Participants[1] = r.Participants[1], r.Participants[0]
		}, vType(location.CodeAggregateParticipantOrder)},
		{"AUTH-164 preserve-only with empty capacity", func(r *location.AggregatePrepareRequest) {
			r.Participants = r.Participants[:1]
			r.Participants[0].OwnerTransition = location.TransitionPreserve
			r.Capacity = location.CapacityVector{}
		}, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-164 preserve-only with a capacity passes validation", func(r *location.AggregatePrepareRequest) {
			r.Participants = r.Participants[:1]
			r.Participants[0].OwnerTransition = location.TransitionPreserve
			r.Capacity = vVS("room")
		}, vOK()},
		{"AUTH-227 participant payload 1 MiB + 1", func(r *location.AggregatePrepareRequest) {
			r.Participants[1].AuthorityPayload = make([]byte, location.MaxPayloadBytes+1)
		}, vRange(location.CodeAuthorityPayload)},
		{"AUTH-227 participant payload exactly 1 MiB", func(r *location.AggregatePrepareRequest) {
			r.Participants[1].AuthorityPayload = make([]byte, location.MaxPayloadBytes)
		}, vOK()},
		{"byte order, not locale order (AUTH-066 keys)", func(r *location.AggregatePrepareRequest) {
			p := r.Participants[0]
			r.Participants = nil
			for _, k := range []string{"zla1:a:10:aaaaaaaaaa", "zla1:a:1:B", "zla1:a:1:a", "zla1:a:2:aa"} {
				p.AuthorityKey = location.AuthorityKey(k)
				r.Participants = append(r.Participants, p)
			}
		}, vOK()},
		{"locale order is rejected", func(r *location.AggregatePrepareRequest) {
			p := r.Participants[0]
			r.Participants = nil
			for _, k := range []string{"zla1:a:1:a", "zla1:a:1:B"} {
				p.AuthorityKey = location.AuthorityKey(k)
				r.Participants = append(r.Participants, p)
			}
		}, vType(location.CodeAggregateParticipantOrder)},
		{"unknown transition", func(r *location.AggregatePrepareRequest) { r.Participants[0].OwnerTransition = "" }, vType(location.CodeAggregateTransition)},
		{"membership mutation is not size-checked", func(r *location.AggregatePrepareRequest) {
			r.Participants[0].MembershipMutation = make([]byte, location.MaxPayloadBytes+1)
		}, vOK()},
		{"id with NUL", func(r *location.AggregatePrepareRequest) { r.AggregateID = "AG\x00" }, vType(location.CodeAggregateID)},
		{"digest 33 bytes", func(r *location.AggregatePrepareRequest) { r.InventoryDigest = append(r.InventoryDigest, 0) }, vType(location.CodeAggregateDigest)},
		{"participant key invalid UTF-8", func(r *location.AggregatePrepareRequest) { r.Participants[1].AuthorityKey = "zla1:s:2:\xff" }, vType(location.CodeTextUTF8)},
		{"target owner invalid UTF-8", func(r *location.AggregatePrepareRequest) { r.TargetOwner.OwnerID = "\xff" }, vType(location.CodeTextUTF8)},
		{"id before shape", func(r *location.AggregatePrepareRequest) { r.AggregateID = ""; r.AggregateGeneration = 0 }, vType(location.CodeAggregateID)},
		{"shape before digest", func(r *location.AggregatePrepareRequest) { r.AggregateGeneration = 0; r.InventoryDigest = nil }, vRange(location.CodeAggregateShape)},
		{"digest before capacity", func(r *location.AggregatePrepareRequest) {
			r.InventoryDigest = nil
			r.Capacity = location.CapacityVector{}
		}, vType(location.CodeAggregateDigest)},
		{"capacity before order", func(r *location.AggregatePrepareRequest) {
			r.Capacity = location.CapacityVector{}
			r.Participants[1].AuthorityKey = r.Participants[0].AuthorityKey
		}, vRange(location.CodeAuthorityCapacity)},
		{"order before payload", func(r *location.AggregatePrepareRequest) {
			r.Participants[1].AuthorityKey = r.Participants[0].AuthorityKey
			r.Participants[0].AuthorityPayload = make([]byte, location.MaxPayloadBytes+1)
		}, vType(location.CodeAggregateParticipantOrder)},
	})
}
