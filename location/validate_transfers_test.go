package location_test

import (
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// vXfer is XFER of the locations catalogue.
func vXfer() location.ActorTransferPrepareRequest { return fixture.XFER() }

func TestValidateTransferPrepare(t *testing.T) {
	vMutations(t, vXfer, location.ValidateTransferPrepare, []vCase[location.ActorTransferPrepareRequest]{
		{"LS-170 XFER is valid", func(*location.ActorTransferPrepareRequest) {}, vOK()},
		{"LS-171 meshName spaces", func(r *location.ActorTransferPrepareRequest) { r.MeshName = "  " }, vType(location.CodeTransferIdentity)},
		{"LS-171 actorId empty", func(r *location.ActorTransferPrepareRequest) { r.ActorID = "" }, vType(location.CodeTransferIdentity)},
		{"LS-171 transferId upper case", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "01234567-89AB-CDEF-0123-456789ABCDEF" }, vType(location.CodeTransferIDFormat)},
		{"LS-171 transferId not a uuid", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "not-a-uuid" }, vType(location.CodeTransferIDFormat)},
		{"LS-171 transferId in braces", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "{" + fixture.XferID + "}" }, vType(location.CodeTransferIDFormat)},
		{"LS-171 recoveryOwnerId space", func(r *location.ActorTransferPrepareRequest) { r.RecoveryOwnerID = " " }, vType(location.CodeTransferLease)},
		{"LS-171 ttl 0", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = 0 }, vType(location.CodeTransferLease)},
		{"LS-171 ttl -1 ms", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = -time.Millisecond }, vType(location.CodeTransferLease)},
		{"LS-171 expectedActorGeneration 0", func(r *location.ActorTransferPrepareRequest) { r.ExpectedActorGeneration = 0 }, vRange(location.CodeTransferGenerations)},
		{"LS-171 expectedMembershipEpoch 0", func(r *location.ActorTransferPrepareRequest) { r.ExpectedMembershipEpoch = 0 }, vRange(location.CodeTransferGenerations)},
		{"LS-171 participants empty", func(r *location.ActorTransferPrepareRequest) { r.Participants = nil }, vType(location.CodeTransferParticipants)},
		{"LS-208 ttl 1 ms accepted", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = time.Millisecond }, vOK()},
		{"LS-208 ttl under 1 ms", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = 999 * time.Microsecond }, vType(location.CodeTransferLease)},
		{"LS-208 ttl negative", func(r *location.ActorTransferPrepareRequest) { r.RecoveryLeaseTTL = -time.Second }, vType(location.CodeTransferLease)},
		{"identity NUL and padding allowed", func(r *location.ActorTransferPrepareRequest) { r.MeshName = " g\x00 "; r.ActorID = "\u0085" }, vOK()},
		{"identity invalid UTF-8", func(r *location.ActorTransferPrepareRequest) { r.ActorID = "\xff" }, vType(location.CodeTransferIdentity)},
		{"generations have no upper bound", func(r *location.ActorTransferPrepareRequest) {
			r.ExpectedActorGeneration, r.ExpectedMembershipEpoch = location.MaxGeneration, location.MaxGeneration
		}, vOK()},
		{"duplicate participants are a set, not an error", func(r *location.ActorTransferPrepareRequest) { r.Participants = []location.RoutingID{"n", "n"} }, vOK()},
		{"actor refs are opaque", func(r *location.ActorTransferPrepareRequest) {
			r.Source = location.ActorRef{}
			r.Target = location.ActorRef{ObjectGeneration: -1}
		}, vOK()},
		{"source actor id invalid UTF-8", func(r *location.ActorTransferPrepareRequest) { r.Source.ActorID = "\xff" }, vType(location.CodeTextUTF8)},
		{"identity before transfer id", func(r *location.ActorTransferPrepareRequest) { r.MeshName = ""; r.TransferID = "x" }, vType(location.CodeTransferIdentity)},
		{"transfer id before lease", func(r *location.ActorTransferPrepareRequest) { r.TransferID = "x"; r.RecoveryLeaseTTL = 0 }, vType(location.CodeTransferIDFormat)},
		{"lease before generations", func(r *location.ActorTransferPrepareRequest) { r.RecoveryOwnerID = ""; r.ExpectedActorGeneration = 0 }, vType(location.CodeTransferLease)},
		{"generations before participants", func(r *location.ActorTransferPrepareRequest) { r.ExpectedMembershipEpoch = 0; r.Participants = nil }, vRange(location.CodeTransferGenerations)},
	})
}

func vXferRef() location.ActorTransferRef { return fixture.XferRef(fixture.XFER()) }

func TestValidateTransferRef(t *testing.T) {
	vMutations(t, vXferRef, location.ValidateTransferRef, []vCase[location.ActorTransferRef]{
		{"valid", func(*location.ActorTransferRef) {}, vOK()},
		{"LS-189 upper-case transferId", func(r *location.ActorTransferRef) { r.TransferID = "01234567-89AB-CDEF-0123-456789ABCDEF" }, vType(location.CodeTransferIDFormat)},
		{"LS-189 meshName empty", func(r *location.ActorTransferRef) { r.MeshName = "" }, vType(location.CodeTransferIdentity)},
		{"actorId spaces", func(r *location.ActorTransferRef) { r.ActorID = " \t" }, vType(location.CodeTransferIdentity)},
		{"transferId empty", func(r *location.ActorTransferRef) { r.TransferID = "" }, vType(location.CodeTransferIDFormat)},
	})
}

func TestValidateTransferTakeover(t *testing.T) {
	cases := []struct {
		name      string
		mutate    func(r *location.ActorTransferRef)
		successor string
		ttl       time.Duration
		want      vWant
	}{
		{"LS-181 valid", func(*location.ActorTransferRef) {}, "recovery-b", 30 * time.Second, vOK()},
		{"LS-185 successor space", func(*location.ActorTransferRef) {}, " ", 30 * time.Second, vType(location.CodeTransferLease)},
		{"LS-185 ttl 0", func(*location.ActorTransferRef) {}, "recovery-b", 0, vType(location.CodeTransferLease)},
		{"LS-185 transferId upper case", func(r *location.ActorTransferRef) { r.TransferID = "01234567-89AB-CDEF-0123-456789ABCDEF" }, "recovery-b", 30 * time.Second, vType(location.CodeTransferIDFormat)},
		{"LS-185 meshName empty", func(r *location.ActorTransferRef) { r.MeshName = "" }, "recovery-b", 30 * time.Second, vType(location.CodeTransferIdentity)},
		{"LS-208 ttl 1 ms accepted", func(*location.ActorTransferRef) {}, "recovery-b", time.Millisecond, vOK()},
		{"LS-208 ttl negative", func(*location.ActorTransferRef) {}, "recovery-b", -time.Millisecond, vType(location.CodeTransferLease)},
		{"LS-208 ttl under 1 ms", func(*location.ActorTransferRef) {}, "recovery-b", time.Microsecond, vType(location.CodeTransferLease)},
		{"successor equal to the current owner is fine", func(*location.ActorTransferRef) {}, "recovery-a", time.Second, vOK()},
		{"ref before successor", func(r *location.ActorTransferRef) { r.ActorID = "" }, "", 0, vType(location.CodeTransferIdentity)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := vXferRef()
			tc.mutate(&r)
			vCheck(t, location.ValidateTransferTakeover(r, tc.successor, tc.ttl), tc.want)
		})
	}
}
