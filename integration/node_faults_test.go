package integration

import (
	"testing"
	"time"

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
	nm := startNodeMesh(t, backend, faultNodes, 1)
	var plan []nodeFault
	for r := range faultRounds {
		round := allNodeFaults()
		if r > 0 {
			nm.rnd.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		plan = append(plan, round...)
	}
	nm.run(t.Context(), plan, func(f nodeFault) time.Duration { return nodeFaultHold(f, nm.rnd.IntN) })
	reportFigures(t, "TestNodeFaults (in-process members)", nm.figures())
	nm.close()
	require.NoError(t, backend.close())
	require.NoError(t, goleak.Find(append(etcdServerConnections(), leaks)...))
}
