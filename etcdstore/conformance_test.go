package etcdstore

import (
	"testing"

	"github.com/zlink-systems/zlink-etcd/conformance"
)

// etcdHarness plugs the etcd store into the conformance suite: relational
// numbers (generations and versions are revisions, stamps are key versions,
// tokens are opaque), no in-memory-only behaviours, no counter hooks, the
// mesh-node change stamp; owner leases expire on demand by revoking their
// etcd lease.
func etcdHarness() conformance.Harness {
	return conformance.Harness{
		Name: "etcd",
		NewFixture: func(t conformance.TB) conformance.Fixture {
			f := newFixture(t)
			return conformance.Fixture{
				Store:            f.s,
				Clock:            f.clock,
				ExpireOwnerLease: f.s.ExpireOwnerLease,
			}
		},
		Capabilities: conformance.Capabilities{MeshNodeChangeStamp: true},
		Parallel:     true,
	}
}

// TestConformance runs every catalogue scenario against the etcd store.
func TestConformance(t *testing.T) {
	conformance.Run(t, etcdHarness())
}

// TestRandom runs the model-based random tester: seeded random sequences
// against the etcd store and the memstore model, results compared up to the
// renaming of store-chosen numbers. The default number of sequences (1,000;
// 50,000 with -tags stress) drops to 200 under the race detector and 50 in
// short mode; ZLINK_RANDOM_* variables override (conformance.ApplyEnv).
func TestRandom(t *testing.T) {
	opts := conformance.RandomOptions{Package: "./etcdstore"}
	switch {
	case testing.Short():
		opts.Sequences = 50
	case raceEnabled:
		opts.Sequences = 200
	}
	conformance.RunRandom(t, etcdHarness(), opts)
}
