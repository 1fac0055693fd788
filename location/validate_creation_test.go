package location_test

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// vT0 is the catalogues' starting time, 2026-07-03T00:00:00.000Z.
func vT0() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }

// vTA is the creation target TA of the authority catalogue.
func vTA() location.CreationTarget {
	return location.CreationTarget{MeshName: "m", NodeRID: "node-a", NodeLifecycleGeneration: 1,
		Owner: location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: 1}}
}

// vRS is the reserve request of RS(id, TA) in the authority catalogue.
func vRS(id string) location.ReserveRequest {
	return location.ReserveRequest{
		Key: location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: id},
		Intent: location.CreationIntent{StableType: "room", RequestContentReference: "req:" + id,
			RequestSHA256: bytes.Repeat([]byte{1}, 32), RequestEncodedSize: 10},
		Target:          vTA(),
		CreatingPayload: []byte("creating"),
		Capacity:        vVS("room"),
	}
}

func TestValidateReserve(t *testing.T) {
	vMutations(t, func() location.ReserveRequest { return vRS("c1") }, location.ValidateReserve, []vCase[location.ReserveRequest]{
		{"AUTH-076 RS is valid", func(*location.ReserveRequest) {}, vOK()},
		{"AUTH-077 RA is valid", func(r *location.ReserveRequest) {
			r.Key.Kind = location.ObjectActor
			r.Intent.StableType = "player"
			r.Capacity = location.CapacityVector{Actors: 1}
		}, vOK()},
		{"instance spot", func(r *location.ReserveRequest) { r.Key.Kind = location.ObjectInstanceSpot }, vOK()},
		{"AUTH-078 global id empty", func(r *location.ReserveRequest) { r.Key.GlobalID = "" }, vType(location.CodeAuthorityIdentityText)},
		{"AUTH-078 global id with NUL", func(r *location.ReserveRequest) { r.Key.GlobalID = "a\x00b" }, vType(location.CodeAuthorityIdentityText)},
		{"AUTH-078 global id 256 ASCII bytes", func(r *location.ReserveRequest) { r.Key.GlobalID = strings.Repeat("x", 256) }, vRange(location.CodeAuthorityIdentityLength)},
		{"AUTH-078 global id 128 × é", func(r *location.ReserveRequest) { r.Key.GlobalID = strings.Repeat("é", 128) }, vRange(location.CodeAuthorityIdentityLength)},
		{"AUTH-078 stable type empty", func(r *location.ReserveRequest) { r.Intent.StableType = "" }, vType(location.CodeAuthorityIntentText)},
		{"AUTH-078 content reference empty", func(r *location.ReserveRequest) { r.Intent.RequestContentReference = "" }, vType(location.CodeAuthorityIntentText)},
		{"AUTH-079 digest 31 bytes", func(r *location.ReserveRequest) { r.Intent.RequestSHA256 = r.Intent.RequestSHA256[:31] }, vType(location.CodeAuthorityReceipt)},
		{"AUTH-079 digest 33 bytes", func(r *location.ReserveRequest) { r.Intent.RequestSHA256 = append(r.Intent.RequestSHA256, 1) }, vType(location.CodeAuthorityReceipt)},
		{"AUTH-079 encoded size -1", func(r *location.ReserveRequest) { r.Intent.RequestEncodedSize = -1 }, vType(location.CodeAuthorityReceipt)},
		{"AUTH-079 encoded size 1 MiB + 1", func(r *location.ReserveRequest) { r.Intent.RequestEncodedSize = location.MaxPayloadBytes + 1 }, vType(location.CodeAuthorityReceipt)},
		{"AUTH-079 creating payload 1 MiB + 1", func(r *location.ReserveRequest) { r.CreatingPayload = make([]byte, location.MaxPayloadBytes+1) }, vRange(location.CodeAuthorityPayload)},
		{"AUTH-079 capacity empty", func(r *location.ReserveRequest) { r.Capacity = location.CapacityVector{} }, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-079 capacity actors -1", func(r *location.ReserveRequest) { r.Capacity = location.CapacityVector{Actors: -1, Spots: 1} }, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-079 capacity spot type count 0", func(r *location.ReserveRequest) { r.Capacity.SpotType.Count = 0 }, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-079 capacity actors 2^31", func(r *location.ReserveRequest) { r.Capacity = location.CapacityVector{Actors: 1 << 31} }, vRange(location.CodeAuthorityCapacity)},
		{"AUTH-079 encoded size and payload exactly 1 MiB", func(r *location.ReserveRequest) {
			r.Intent.RequestEncodedSize = location.MaxPayloadBytes
			r.CreatingPayload = make([]byte, location.MaxPayloadBytes)
		}, vOK()},
		{"AUTH-010 global id invalid UTF-8", func(r *location.ReserveRequest) { r.Key.GlobalID = "\xffa" }, vType(location.CodeAuthorityIdentityText)},
		{"global id 255 bytes", func(r *location.ReserveRequest) { r.Key.GlobalID = strings.Repeat("x", 255) }, vOK()},
		{"empty creating payload and size 0", func(r *location.ReserveRequest) { r.CreatingPayload = nil; r.Intent.RequestEncodedSize = 0 }, vOK()},
		{"unknown object kind", func(r *location.ReserveRequest) { r.Key.Kind = "entry_spot" }, vType(location.CodeAuthorityObjectKind)},
		{"target is not validated", func(r *location.ReserveRequest) { r.Target = location.CreationTarget{NodeLifecycleGeneration: -1} }, vOK()},
		{"target owner invalid UTF-8", func(r *location.ReserveRequest) { r.Target.Owner.OwnerID = "\xff" }, vType(location.CodeTextUTF8)},
		{"identity before intent", func(r *location.ReserveRequest) { r.Key.GlobalID = ""; r.Intent.StableType = "" }, vType(location.CodeAuthorityIdentityText)},
		{"intent before payload", func(r *location.ReserveRequest) {
			r.Intent.RequestContentReference = ""
			r.CreatingPayload = make([]byte, location.MaxPayloadBytes+1)
		}, vType(location.CodeAuthorityIntentText)},
		{"payload before capacity", func(r *location.ReserveRequest) {
			r.CreatingPayload = make([]byte, location.MaxPayloadBytes+1)
			r.Capacity = location.CapacityVector{}
		}, vRange(location.CodeAuthorityPayload)},
		{"capacity before receipt", func(r *location.ReserveRequest) { r.Capacity = location.CapacityVector{}; r.Intent.RequestSHA256 = nil }, vRange(location.CodeAuthorityCapacity)},
		{"receipt before key length", func(r *location.ReserveRequest) {
			r.Intent.RequestSHA256 = nil
			r.Key.GlobalID = strings.Repeat("x", 256)
		}, vType(location.CodeAuthorityReceipt)},
	})
}

func TestValidateCommit(t *testing.T) {
	commit := func() location.CommitRequest {
		return location.CommitRequest{
			Key:           location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: "k1"},
			ReservationID: "8f1c0e0e-6f0a-4b0a-9c1e-0e0e0e0e0e0e", ExpectedStoreVersion: "1", Target: vTA(), ReadyPayload: []byte("ready"),
		}
	}
	vMutations(t, commit, location.ValidateCommit, []vCase[location.CommitRequest]{
		{"AUTH-096 commit is valid", func(*location.CommitRequest) {}, vOK()},
		{"AUTH-098 actors must use completeCreation", func(r *location.CommitRequest) { r.Key.Kind = location.ObjectActor }, vType(location.CodeAuthorityKindPath)},
		{"AUTH-099 ready payload 1 MiB + 1", func(r *location.CommitRequest) { r.ReadyPayload = make([]byte, location.MaxPayloadBytes+1) }, vRange(location.CodeAuthorityPayload)},
		{"ready payload exactly 1 MiB", func(r *location.CommitRequest) { r.ReadyPayload = make([]byte, location.MaxPayloadBytes) }, vOK()},
		{"payload before kind", func(r *location.CommitRequest) {
			r.ReadyPayload = make([]byte, location.MaxPayloadBytes+1)
			r.Key.Kind = location.ObjectActor
		}, vRange(location.CodeAuthorityPayload)},
		{"instance spot (D-28: kinds share keys)", func(r *location.CommitRequest) { r.Key.Kind = location.ObjectInstanceSpot }, vOK()},
		{"global id empty fails key encoding", func(r *location.CommitRequest) { r.Key.GlobalID = "" }, vRange(location.CodeAuthorityIdentityLength)},
		{"global id 256 bytes", func(r *location.CommitRequest) { r.Key.GlobalID = strings.Repeat("x", 256) }, vRange(location.CodeAuthorityIdentityLength)},
		{"global id with NUL is encodable", func(r *location.CommitRequest) { r.Key.GlobalID = "k\x00" }, vOK()},
		{"reservation id, version and target are not validated", func(r *location.CommitRequest) {
			r.ReservationID, r.ExpectedStoreVersion, r.Target = "", "", location.CreationTarget{}
		}, vOK()},
	})
}

// vOP is OP(n) of the authority catalogue.
func vOP(n uint64) location.OperationIdentity {
	return location.OperationIdentity{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: n}}
}

// vPublication is P(op, deadline) of the authority catalogue: envelope "env"
// with its SHA-256.
func vPublication(op location.OperationIdentity, deadline time.Time) location.TerminalPublication {
	sum := sha256.Sum256([]byte("env"))
	return location.TerminalPublication{Operation: op, TerminalEnvelope: []byte("env"), TerminalEnvelopeSHA256: sum[:], OperationDeadline: deadline}
}

func TestValidateCompleteCreation(t *testing.T) {
	complete := func() location.CompleteCreationRequest {
		return location.CompleteCreationRequest{
			Key:           location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: "a1"},
			ReservationID: "8f1c0e0e-6f0a-4b0a-9c1e-0e0e0e0e0e0e", ExpectedStoreVersion: "1", Target: vTA(),
			Completion: location.CreationCompletion{
				Kind: location.TerminalCreated, ReadyPayload: []byte("ready-actor"),
				Terminal: vPublication(vOP(1), vT0().Add(60*time.Second)),
			},
		}
	}
	bigEnvelope := func(r *location.CompleteCreationRequest, size int) {
		r.Completion.Terminal.TerminalEnvelope = make([]byte, size)
		sum := sha256.Sum256(r.Completion.Terminal.TerminalEnvelope)
		r.Completion.Terminal.TerminalEnvelopeSHA256 = sum[:]
	}
	cases := []struct {
		name   string
		mutate func(r *location.CompleteCreationRequest)
		now    time.Time
		want   vWant
	}{
		{"AUTH-108 created is valid", func(*location.CompleteCreationRequest) {}, vT0(), vOK()},
		{"AUTH-109 rejected is valid", func(r *location.CompleteCreationRequest) { r.Completion.Kind = location.TerminalRejected }, vT0(), vOK()},
		{"AUTH-110 failed is valid", func(r *location.CompleteCreationRequest) { r.Completion.Kind = location.TerminalFailed }, vT0(), vOK()},
		{"AUTH-112 spots are rejected", func(r *location.CompleteCreationRequest) { r.Key.Kind = location.ObjectUserSpot }, vT0(), vType(location.CodeAuthorityKindPath)},
		{"AUTH-113 ready payload 1 MiB + 1", func(r *location.CompleteCreationRequest) {
			r.Completion.ReadyPayload = make([]byte, location.MaxPayloadBytes+1)
		}, vT0(), vRange(location.CodeAuthorityPayload)},
		{"ready payload of a rejection is ignored", func(r *location.CompleteCreationRequest) {
			r.Completion.Kind = location.TerminalRejected
			r.Completion.ReadyPayload = make([]byte, location.MaxPayloadBytes+1)
		}, vT0(), vOK()},
		{"AUTH-114 envelope 1 MiB + 1", func(r *location.CompleteCreationRequest) { bigEnvelope(r, location.MaxPayloadBytes+1) }, vT0(), vRange(location.CodeTerminalEnvelope)},
		{"envelope exactly 1 MiB", func(r *location.CompleteCreationRequest) { bigEnvelope(r, location.MaxPayloadBytes) }, vT0(), vOK()},
		{"AUTH-114 digest 31 bytes", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.TerminalEnvelopeSHA256 = r.Completion.Terminal.TerminalEnvelopeSHA256[:31]
		}, vT0(), vRange(location.CodeTerminalEnvelope)},
		{"AUTH-114 digest of other bytes", func(r *location.CompleteCreationRequest) {
			sum := sha256.Sum256([]byte("other"))
			r.Completion.Terminal.TerminalEnvelopeSHA256 = sum[:]
		}, vT0(), vType(location.CodeTerminalDigestMismatch)},
		{"AUTH-115 RID empty", func(r *location.CompleteCreationRequest) { r.Completion.Terminal.Operation.SourceNodeRID = "" }, vT0(), vType(location.CodeTerminalOperationRID)},
		{"AUTH-115 RID with NUL", func(r *location.CompleteCreationRequest) { r.Completion.Terminal.Operation.SourceNodeRID = "s\x00" }, vT0(), vType(location.CodeTerminalOperationRID)},
		{"AUTH-115 RID 256 bytes", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.Operation.SourceNodeRID = location.RoutingID(strings.Repeat("s", 256))
		}, vT0(), vType(location.CodeTerminalOperationRID)},
		{"AUTH-115 source generation 0", func(r *location.CompleteCreationRequest) { r.Completion.Terminal.Operation.SourceNodeGeneration = 0 }, vT0(), vRange(location.CodeTerminalOperationIDs)},
		{"AUTH-115 operation id zero", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.Operation.OperationID = location.OperationID{}
		}, vT0(), vRange(location.CodeTerminalOperationIDs)},
		{"AUTH-115 operation id {1, 0}", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.Operation.OperationID = location.OperationID{High: 1}
		}, vT0(), vOK()},
		{"AUTH-116 deadline T0 - 5 min", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.OperationDeadline = vT0().Add(-5 * time.Minute)
		}, vT0(), vRange(location.CodeTerminalWindow)},
		{"AUTH-116 deadline T0 - 5 min + 1 ms", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.OperationDeadline = vT0().Add(-5*time.Minute + time.Millisecond)
		}, vT0(), vOK()},
		{"window compares whole milliseconds", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.OperationDeadline = vT0().Add(-5*time.Minute + 999*time.Microsecond)
		}, vT0(), vRange(location.CodeTerminalWindow)},
		{"AUTH-117 reservation id empty", func(r *location.CompleteCreationRequest) { r.ReservationID = "" }, vT0(), vType(location.CodeTerminalReservationID)},
		{"AUTH-123 window closed after retention", func(*location.CompleteCreationRequest) {}, vT0().Add(60*time.Second + 5*time.Minute), vRange(location.CodeTerminalWindow)},
		{"AUTH-228 created without a publication", func(r *location.CompleteCreationRequest) { r.Completion.Terminal = location.TerminalPublication{} }, vT0(), vType(location.CodeTerminalPublication)},
		{"AUTH-228 rejected without a publication", func(r *location.CompleteCreationRequest) {
			r.Completion = location.CreationCompletion{Kind: location.TerminalRejected}
		}, vT0(), vType(location.CodeTerminalPublication)},
		{"AUTH-228 failed without a publication", func(r *location.CompleteCreationRequest) {
			r.Completion = location.CreationCompletion{Kind: location.TerminalFailed}
		}, vT0(), vType(location.CodeTerminalPublication)},
		{"unknown completion kind", func(r *location.CompleteCreationRequest) { r.Completion.Kind = "" }, vT0(), vType(location.CodeTerminalCompletionKind)},
		{"deadline beyond the representable range", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.OperationDeadline = time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)
		}, vT0(), vRange(location.CodeTerminalWindow)},
		{"actor id 256 bytes fails key encoding", func(r *location.CompleteCreationRequest) { r.Key.GlobalID = strings.Repeat("a", 256) }, vT0(), vRange(location.CodeAuthorityIdentityLength)},
		{"kind before completion kind", func(r *location.CompleteCreationRequest) {
			r.Key.Kind = location.ObjectUserSpot
			r.Completion.Kind = ""
		}, vT0(), vType(location.CodeAuthorityKindPath)},
		{"completion kind before payload", func(r *location.CompleteCreationRequest) {
			r.Completion.Kind = "bogus"
			r.Completion.ReadyPayload = make([]byte, location.MaxPayloadBytes+1)
		}, vT0(), vType(location.CodeTerminalCompletionKind)},
		{"payload before publication", func(r *location.CompleteCreationRequest) {
			r.Completion.ReadyPayload = make([]byte, location.MaxPayloadBytes+1)
			r.Completion.Terminal = location.TerminalPublication{}
		}, vT0(), vRange(location.CodeAuthorityPayload)},
		{"operation before envelope", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.Operation.SourceNodeGeneration = 0
			r.Completion.Terminal.TerminalEnvelopeSHA256 = nil
		}, vT0(), vRange(location.CodeTerminalOperationIDs)},
		{"digest before window", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.TerminalEnvelope = []byte("other")
			r.Completion.Terminal.OperationDeadline = vT0().Add(-time.Hour)
		}, vT0(), vType(location.CodeTerminalDigestMismatch)},
		{"window before reservation id", func(r *location.CompleteCreationRequest) {
			r.Completion.Terminal.OperationDeadline = vT0().Add(-time.Hour)
			r.ReservationID = ""
		}, vT0(), vRange(location.CodeTerminalWindow)},
		{"reservation id before key encoding", func(r *location.CompleteCreationRequest) {
			r.ReservationID = ""
			r.Key.GlobalID = ""
		}, vT0(), vType(location.CodeTerminalReservationID)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := complete()
			tc.mutate(&r)
			vCheck(t, location.ValidateCompleteCreation(r, tc.now), tc.want)
		})
	}
}

func TestValidateOperationIdentity(t *testing.T) {
	vMutations(t, func() location.OperationIdentity { return vOP(1) }, location.ValidateOperationIdentity, []vCase[location.OperationIdentity]{
		{"AUTH-127 OP(1) is valid", func(*location.OperationIdentity) {}, vOK()},
		{"AUTH-130 RID empty", func(op *location.OperationIdentity) { op.SourceNodeRID = "" }, vType(location.CodeTerminalOperationRID)},
		{"AUTH-130 RID with NUL", func(op *location.OperationIdentity) { op.SourceNodeRID = "s\x00" }, vType(location.CodeTerminalOperationRID)},
		{"AUTH-130 RID 256 bytes", func(op *location.OperationIdentity) { op.SourceNodeRID = location.RoutingID(strings.Repeat("s", 256)) }, vType(location.CodeTerminalOperationRID)},
		{"RID 255 bytes", func(op *location.OperationIdentity) { op.SourceNodeRID = location.RoutingID(strings.Repeat("s", 255)) }, vOK()},
		{"opaque RID bytes", func(op *location.OperationIdentity) { op.SourceNodeRID = "\xff\xfe" }, vOK()},
		{"AUTH-130 source generation 0", func(op *location.OperationIdentity) { op.SourceNodeGeneration = 0 }, vRange(location.CodeTerminalOperationIDs)},
		{"source generation at the maximum", func(op *location.OperationIdentity) { op.SourceNodeGeneration = location.MaxGeneration }, vOK()},
		{"AUTH-130 both halves zero", func(op *location.OperationIdentity) { op.OperationID = location.OperationID{} }, vRange(location.CodeTerminalOperationIDs)},
		{"AUTH-115 {high 1, low 0}", func(op *location.OperationIdentity) { op.OperationID = location.OperationID{High: 1} }, vOK()},
		{"AUTH-115 {high 0, low 1}", func(op *location.OperationIdentity) { op.OperationID = location.OperationID{Low: 1} }, vOK()},
		{"halves at the maximum", func(op *location.OperationIdentity) {
			op.OperationID = location.OperationID{High: 1<<64 - 1, Low: 1<<64 - 1}
		}, vOK()},
		{"RID before generation", func(op *location.OperationIdentity) { op.SourceNodeRID = ""; op.SourceNodeGeneration = 0 }, vType(location.CodeTerminalOperationRID)},
	})
}

func TestValidateAbort(t *testing.T) {
	abort := func(kind location.ObjectKind, id string) location.AbortRequest {
		return location.AbortRequest{Key: location.ObjectCreationKey{Kind: kind, GlobalID: id}, ReservationID: "r", ExpectedStoreVersion: "1", Target: vTA()}
	}
	vInputs(t, location.ValidateAbort, []vInput[location.AbortRequest]{
		{"AUTH-132 abort is valid", abort(location.ObjectUserSpot, "x1"), vOK()},
		{"AUTH-137 actors", abort(location.ObjectActor, "x4"), vOK()},
		{"AUTH-138 another key", abort(location.ObjectActor, "other"), vOK()},
		{"AUTH-138 invalid key (D-22: validated first)", abort(location.ObjectUserSpot, ""), vRange(location.CodeAuthorityIdentityLength)},
		{"global id 256 bytes", abort(location.ObjectUserSpot, strings.Repeat("x", 256)), vRange(location.CodeAuthorityIdentityLength)},
		{"global id invalid UTF-8", abort(location.ObjectUserSpot, "\xff"), vType(location.CodeAuthorityIdentityText)},
		{"unknown kind", abort("", "x1"), vType(location.CodeAuthorityObjectKind)},
		{"NUL is encodable", abort(location.ObjectUserSpot, "\x00"), vOK()},
		{"nothing else is validated", location.AbortRequest{Key: location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: "a"}}, vOK()},
	})
}
