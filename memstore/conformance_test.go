package memstore_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// memstore implements the whole store and the optional mesh-node stamp.
var (
	_ location.Store                 = (*memstore.Store)(nil)
	_ location.MeshNodeChangeStamper = (*memstore.Store)(nil)
)

// memstoreHarness plugs memstore into the conformance suite with every
// capability declared: exact numbers, in-memory semantics, both counter
// hooks and the mesh-node change stamp.
func memstoreHarness() conformance.Harness {
	return conformance.Harness{
		Name: "memstore",
		NewFixture: func(conformance.TB) conformance.Fixture {
			clk := clock.NewManual(conformance.T0())
			s := memstore.New(memstore.Options{Clock: clk.Now})
			return conformance.Fixture{
				Store:                s,
				Clock:                clk,
				ExpireOwnerLease:     s.ExpireOwnerLease,
				SetOwnerLeaseCounter: s.SetOwnerLeaseCounter,
				SetAuthorityCounters: s.SetAuthorityCounters,
			}
		},
		Capabilities: conformance.Capabilities{
			DenseCounters:         true,
			DecimalTokens:         true,
			ExactStamps:           true,
			LeaseExpiryByClock:    true,
			InMemorySemantics:     true,
			OwnerLeaseCounterHook: true,
			AuthorityCounterHook:  true,
			MeshNodeChangeStamp:   true,
		},
	}
}

// TestConformance runs every catalogue scenario against memstore.
func TestConformance(t *testing.T) {
	conformance.Run(t, memstoreHarness())
}

// TestConformanceRunSuite runs the owner-lease section through RunSuite,
// the runner of the command's check subcommand, and requires the same
// verdict as go test gives.
func TestConformanceRunSuite(t *testing.T) {
	const section = "LS A. Owner leases"
	rep := conformance.RunSuite(t.Context(), memstoreHarness(), conformance.SuiteOptions{
		Filter: func(s conformance.Scenario) bool { return s.Section == section },
	})
	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out))
	require.True(t, rep.OK(), "report:\n%s", out.String())
	require.Equal(t, 22, rep.Passed+rep.Skipped, "every scenario of section A ran")
	require.Zero(t, rep.Skipped, "memstore declares every capability")
	require.Len(t, rep.Groups, 1)
	require.Equal(t, section, rep.Groups[0].Section)
	require.True(t, strings.HasPrefix(rep.Scenarios[0].Name, "memstore/LS-001_"))
}
