package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// A harness with isolated fixtures runs its sequences on several workers,
// and the report is the serial run's: the same sequences, operations and
// outcomes, and the same first failure, found and shrunk from the same
// seed.
func TestRandomParallel(t *testing.T) {
	tests := []struct {
		name  string
		h     conformance.Harness
		opts  conformance.RandomOptions
		fails bool
	}{
		{name: "conforming", h: memHarness("memstore", conformance.Capabilities{ExactNumbers: true, InMemorySemantics: true}, nil),
			opts: conformance.RandomOptions{Seed: 11, Sequences: 60, IgnoreEnv: true}},
		{name: "broken", h: memHarness("release-always", conformance.Capabilities{}, func(s *memstore.Store) location.Store {
			return releaseAlwaysReleased{s}
		}), opts: conformance.RandomOptions{Seed: 1, Sequences: 200, IgnoreEnv: true, ShrinkRuns: 50}, fails: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			serial := conformance.RunRandomSuite(t.Context(), tc.h, tc.opts)
			require.Equal(t, tc.fails, !serial.OK())
			h := tc.h
			h.Parallel = true
			for _, workers := range []int{2, 7} {
				opts := tc.opts
				opts.Workers = workers
				parallel := conformance.RunRandomSuite(t.Context(), h, opts)
				require.Equal(t, serial.Sequences, parallel.Sequences, "workers %d", workers)
				require.Equal(t, serial.Ops, parallel.Ops)
				require.Equal(t, serial.Outcomes, parallel.Outcomes)
				require.Equal(t, serial.Failures, parallel.Failures)
			}
		})
	}
}
