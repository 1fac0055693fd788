package conformance_test

import (
	"context"
	"testing"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// readmeHarness is the harness the README recommends to provider authors
// (section "Running the conformance suite against your own store"), with
// memstore standing in for their store: it claims the mesh-node change stamp
// only.
func readmeHarness() conformance.Harness {
	return conformance.Harness{
		Name: "mystore",
		NewFixture: func(t conformance.TB) conformance.Fixture {
			clk := clock.NewManual(conformance.T0()) // the suite sets it per scenario
			s := memstore.New(memstore.Options{Clock: clk.Now})
			t.Cleanup(func() {})
			return conformance.Fixture{
				Store: s,
				Clock: clk,
				// End ownerID's lease now, as if its TTL had elapsed; leave its rows.
				ExpireOwnerLease: func(ctx context.Context, ownerID string) error { return s.ExpireOwnerLease(ctx, ownerID) },
			}
		},
		Capabilities: conformance.Capabilities{MeshNodeChangeStamp: true},
	}
}

// The README's harness passes the whole suite on memstore: a store that
// claims less than it could is checked by relation, never failed for it.
func TestReadmeHarness(t *testing.T) {
	conformance.Run(t, readmeHarness())
}

// Each exact capability can be claimed alone: memstore, which has all of
// them, passes the whole suite claiming any single one, and claiming all
// of them separately is the same as the deprecated ExactNumbers.
func TestCapabilitiesAreIndependent(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps conformance.Capabilities
	}{
		{"DenseCounters", conformance.Capabilities{DenseCounters: true}},
		{"DecimalTokens", conformance.Capabilities{DecimalTokens: true}},
		{"ExactStamps", conformance.Capabilities{ExactStamps: true}},
		{"LeaseExpiryByClock", conformance.Capabilities{LeaseExpiryByClock: true}},
		{"all four", conformance.Capabilities{DenseCounters: true, DecimalTokens: true, ExactStamps: true, LeaseExpiryByClock: true, InMemorySemantics: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conformance.Run(t, memHarness("memstore", tc.caps, nil))
		})
	}
}
