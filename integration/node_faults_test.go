package integration

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestNodeFaults runs mesh nodes on an in-process three-member cluster
// through every node-level fault (faultRounds times, in a random order
// after the first round), checking after each that the nodes converged to
// the live set, published, and fenced every ended incarnation in time.
func TestNodeFaults(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	backend, err := startInProcBackend(t.Context())
	require.NoError(t, err)
	runNodeFaults(t, backend, 1, "TestNodeFaults (in-process members)", leaks, func(rnd *rand.Rand) []nodeFault {
		return shuffledFaultRounds(rnd, faultRounds, true)
	})
}
