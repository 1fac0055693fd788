//go:build !stress

package integration

import "time"

// The short node-fault run of make test: five nodes, every fault once.
const (
	faultNodes = 5
	// faultRounds is how many times the run goes through every fault.
	faultRounds = 1
)

// faultHold is how long a node-level fault lasts: long enough for a
// partition or a quorum loss to end the sessions (trusted for 2 s).
func nodeFaultHold(f nodeFault, _ func(int) int) time.Duration {
	switch f {
	case nfPartition, nfQuorumLoss:
		return 2500 * time.Millisecond
	case nfLostResponses:
		return 1500 * time.Millisecond
	default:
		return 300 * time.Millisecond
	}
}
