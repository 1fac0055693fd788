package conformance

import (
	"os"
	"strconv"
)

// Environment variables that steer a random run (RandomOptions.ApplyEnv).
const (
	// EnvRandomSeed runs the sequences from this seed; alone, it runs just
	// that one sequence (the failure reports print it).
	EnvRandomSeed = "ZLINK_RANDOM_SEED"
	// EnvRandomSequences sets the number of sequences.
	EnvRandomSequences = "ZLINK_RANDOM_SEQUENCES"
	// EnvRandomOps sets the longest sequence.
	EnvRandomOps = "ZLINK_RANDOM_OPS"
)

// ApplyEnv returns o with the ZLINK_RANDOM_* variables applied:
// ZLINK_RANDOM_SEED=N starts at seed N and, unless ZLINK_RANDOM_SEQUENCES
// is set too, runs that one sequence; ZLINK_RANDOM_SEQUENCES=N runs N
// sequences; ZLINK_RANDOM_OPS=N sets the longest sequence. Values that are
// not decimal integers are ignored.
func (o RandomOptions) ApplyEnv() RandomOptions {
	seed, seedSet := envInt(EnvRandomSeed)
	if seedSet {
		o.Seed = seed
		o.Sequences = 1
	}
	if n, ok := envInt(EnvRandomSequences); ok && n > 0 {
		o.Sequences = int(n)
	}
	if n, ok := envInt(EnvRandomOps); ok && n > 0 {
		o.Ops = int(n)
	}
	return o
}

// envInt reads a decimal integer variable.
func envInt(name string) (int64, bool) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}
