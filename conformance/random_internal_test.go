package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRandomRenamerBindNum(t *testing.T) {
	tests := []struct {
		name    string
		exact   bool
		ordered bool
		pairs   [][2]int64
		// wantRule is the rule the last pair breaks ("" = none).
		wantRule string
	}{
		{name: "consistent renaming", ordered: true, pairs: [][2]int64{{1, 10}, {2, 20}, {1, 10}, {3, 35}}},
		{name: "model number renamed twice", pairs: [][2]int64{{1, 10}, {1, 11}}, wantRule: ruleBijection},
		{name: "store number stands for two", pairs: [][2]int64{{1, 10}, {2, 10}}, wantRule: ruleBijection},
		{name: "order kept when inserted between", ordered: true, pairs: [][2]int64{{1, 10}, {5, 50}, {3, 30}}},
		{name: "order broken below", ordered: true, pairs: [][2]int64{{2, 20}, {3, 15}}, wantRule: ruleOrder},
		{name: "order broken above", ordered: true, pairs: [][2]int64{{5, 50}, {3, 60}}, wantRule: ruleOrder},
		{name: "unordered namespace ignores order", pairs: [][2]int64{{5, 50}, {3, 60}}},
		{name: "zero compared exactly", pairs: [][2]int64{{0, 7}}, wantRule: ruleNumber},
		{name: "never-issued values compared exactly", pairs: [][2]int64{{hugeNumber + 1, hugeNumber + 1}, {hugeNumber + 2, 9}}, wantRule: ruleNumber},
		{name: "exact store", exact: true, pairs: [][2]int64{{1, 1}, {2, 3}}, wantRule: ruleNumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenamer(tt.exact)
			for i, p := range tt.pairs {
				rule, detail := r.bindNum("ns", tt.ordered, p[0], p[1])
				if i < len(tt.pairs)-1 {
					require.Empty(t, rule, "pair %d: %s", i, detail)
					continue
				}
				require.Equal(t, tt.wantRule, rule, detail)
			}
		})
	}
}

func TestRandomRenamerTranslates(t *testing.T) {
	r := newRenamer(false)
	rule, _ := r.bindNum(nsLease, true, 3, 1003)
	require.Empty(t, rule)
	require.Equal(t, int64(1003), r.toStoreNum(nsLease, 3))
	require.Equal(t, int64(0), r.toStoreNum(nsLease, 0))
	require.Equal(t, hugeNumber+1, r.toStoreNum(nsLease, hugeNumber+1))

	rule, _ = r.bindStr(nsReservation, true, "model-id", "store-id")
	require.Empty(t, rule)
	require.Equal(t, "store-id", r.toStoreStr(nsReservation, true, "model-id"))
	require.Equal(t, randomBogusReservation, r.toStoreStr(nsReservation, true, randomBogusReservation))
	rule, _ = r.bindStr(nsReservation, true, "other", "store-id")
	require.Equal(t, ruleBijection, rule)

	exact := newRenamer(true)
	rule, _ = exact.bindStr(nsVersion("k"), false, "4", "5")
	require.Equal(t, ruleNumber, rule, "versions are exact on an exact store")
	rule, _ = exact.bindStr(nsReservation, true, "a", "b")
	require.Empty(t, rule, "reservation ids are renamed even on an exact store")
}

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
