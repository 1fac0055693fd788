//go:build stress

package integration

import "time"

// The long node-fault run of make stress: seven nodes, every fault ten
// times in a random order, held for random times.
const (
	faultNodes  = 7
	faultRounds = 10
)

// nodeFaultHold draws how long a fault lasts: partitions and quorum losses
// from 0.5 s (the sessions survive) to 4 s (they end), members down 0.1 to
// 2 s, losses for 0.5 to 2.5 s.
func nodeFaultHold(f nodeFault, intN func(int) int) time.Duration {
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+intN(hi-lo+1)) * time.Millisecond }
	switch f {
	case nfPartition, nfQuorumLoss:
		return ms(500, 4000)
	case nfLostResponses:
		return ms(500, 2500)
	case nfLeaseRevoked:
		return 0
	default:
		return ms(100, 2000)
	}
}
