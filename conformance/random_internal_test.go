package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRandomGenerateIsDeterministic(t *testing.T) {
	caps := Capabilities{ExactNumbers: true, InMemorySemantics: true, MeshNodeChangeStamp: true}
	render := func(seq []randomOp) []string {
		out := make([]string, len(seq))
		for i, op := range seq {
			out[i] = op.String()
		}
		return out
	}
	for seed := int64(1); seed <= 50; seed++ {
		a, b := generateSequence(seed, 40, caps), generateSequence(seed, 40, caps)
		require.Equal(t, render(a), render(b), "seed %d", seed)
		require.GreaterOrEqual(t, len(a), 10)
		require.LessOrEqual(t, len(a), 40)
	}
	require.NotEqual(t, render(generateSequence(1, 40, caps)), render(generateSequence(2, 40, caps)))
}

func TestRandomClockStaysInsideLeaseTTLs(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		seq := generateSequence(seed, 400, Capabilities{})
		var steps int
		for _, op := range seq {
			if op.name == "Clock.Advance" {
				steps++
			}
		}
		require.Positive(t, len(seq))
		// The budget is enforced by the generator: replaying the steps on
		// a model clock must stay below the claim TTL.
		model := newModelFixture(seed)
		x := &runState{model: model, sut: newModelFixture(seed)}
		for _, op := range seq {
			if op.name == "Clock.Advance" {
				op.run(x)
			}
		}
		elapsed := model.Clock.Now().Sub(T0())
		require.LessOrEqual(t, elapsed, randomClockBudget, "seed %d: %d steps", seed, steps)
		require.Less(t, randomClockBudget, randomClaimTTL)
	}
}

func TestRandomReproduceCommand(t *testing.T) {
	opts := RandomOptions{Ops: 60, Package: "./memstore"}
	require.Equal(t, "ZLINK_RANDOM_SEED=7 ZLINK_RANDOM_OPS=60 go test ./memstore -run '^TestRandom$/^exact$' -count=1",
		reproduceCommand(opts, "TestRandom/exact", 7))
	opts.IgnoreEnv = true
	require.Contains(t, reproduceCommand(opts, "TestRandom", 7), "RandomOptions{Seed: 7, Sequences: 1, Ops: 60}")
}
