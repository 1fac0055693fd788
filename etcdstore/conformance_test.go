package etcdstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/etcdharness"
)

// etcdHarness plugs the etcd store into the conformance suite through
// internal/etcdharness (the harness the command's check subcommand uses):
// every fixture is a store under its own sub-prefix of a prefix unique to
// the test, on one client of the shared member, with relational numbers and
// the mesh-node change stamp; owner leases expire on demand by revoking
// their etcd lease. The fixtures are isolated, so scenarios and random
// sequences run in parallel.
func etcdHarness(t *testing.T) conformance.Harness {
	t.Helper()
	h, err := etcdharness.New(etcdtest.Connect(t), etcdharness.Options{Prefix: etcdtest.UniquePrefix(t), Parallel: true})
	require.NoError(t, err)
	return h.Conformance()
}

// TestConformance runs every catalogue scenario against the etcd store.
func TestConformance(t *testing.T) {
	conformance.Run(t, etcdHarness(t))
}

// TestRandom runs the model-based random tester: seeded random sequences
// against the etcd store and the memstore model, results compared up to the
// renaming of store-chosen numbers, several sequences at a time. The default
// number of sequences (1,000; 50,000 with -tags stress) is 500 under the race
// detector (make test) and 5,000 under the race detector with -tags stress
// (make stress), and 50 in short mode; ZLINK_RANDOM_* variables override
// (conformance.ApplyEnv).
func TestRandom(t *testing.T) {
	opts := conformance.RandomOptions{Package: "./etcdstore"}
	switch {
	case testing.Short():
		opts.Sequences = 50
	case etcdstore.RaceEnabled && stressBuild:
		opts.Sequences = 5000
	case etcdstore.RaceEnabled:
		opts.Sequences = 500
	}
	conformance.RunRandom(t, etcdHarness(t), opts)
}
