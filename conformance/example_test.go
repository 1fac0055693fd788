package conformance_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// A third-party store plugs into the suite with a Harness. Here the store
// is memstore, standing in for yours: a fresh store per scenario, the clock
// it reads, a way to end an owner lease at once, and the capabilities it
// claims. In a test, conformance.Run(t, h) runs the same scenarios as
// subtests; RunSuite runs them anywhere.
func Example_thirdPartyStore() {
	h := conformance.Harness{
		Name: "mystore",
		NewFixture: func(t conformance.TB) conformance.Fixture {
			clk := clock.NewManual(conformance.T0())
			s := memstore.New(memstore.Options{Clock: clk.Now})
			return conformance.Fixture{Store: s, Clock: clk, ExpireOwnerLease: s.ExpireOwnerLease}
		},
		// Claim only what the store does: memstore could claim every
		// capability; this harness claims the mesh-node change stamp only,
		// so scenarios that need more are skipped with the reason.
		Capabilities: conformance.Capabilities{MeshNodeChangeStamp: true},
	}
	report := conformance.RunSuite(context.Background(), h, conformance.SuiteOptions{
		Filter: func(sc conformance.Scenario) bool { return strings.HasPrefix(sc.ID, "LS-00") },
	})
	fmt.Println("ok:", report.OK(), "passed:", report.Passed, "skipped:", report.Skipped)
	// Output: ok: true passed: 8 skipped: 1
}
