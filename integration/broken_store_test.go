package integration

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

// The checks can fail: a store whose transactions lose a guard is caught.
func TestCheckerCatchesBrokenStore(t *testing.T) {
	tc, err := startCluster(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tc.close() })
	// Two owners keep claiming spot s1 from each other; every write waits
	// for the other client's, so that their decisions race.
	race := func(seed uint64, strip guardStrip) runConfig {
		return runConfig{seed: seed, clients: 2, ops: 16, pace: 5 * time.Millisecond, spotsOnly: true, pairWrites: true,
			strip: strip, opTimeout: 2 * time.Second, checkTimeout: time.Minute}
	}
	t.Run("a correct store passes the race", func(t *testing.T) {
		rep := runHistory(t.Context(), tc, race(1, stripNothing))
		require.Empty(t, rep.failure)
		t.Logf("%s", rep)
		require.Equal(t, porcupine.Ok, rep.result)
		require.Empty(t, rep.violations)
	})
	t.Run("row guards dropped: not linearizable", func(t *testing.T) {
		rep := runHistory(t.Context(), tc, race(1, stripRowGuards))
		require.Empty(t, rep.failure)
		t.Logf("%s", rep)
		for _, v := range rep.violations {
			t.Logf("violation: %.2000s", v)
		}
		require.Equal(t, porcupine.Illegal, rep.result, "the checker must reject the history")
		require.NotEmpty(t, rep.violations)
	})
	t.Run("owner guards dropped: fenced writes succeed", func(t *testing.T) {
		// The revocation lands before whichever owner-guarded write comes
		// next; when that write does not need its own writer's lease (a
		// takeover guards the previous owner's), nothing is fenced, so a
		// history may show no violation: the check must catch one within a
		// few histories.
		const histories = 5
		fenced := 0
		for i := range histories {
			cfg := runConfig{seed: uint64(2 + i), clients: 3, ops: 20, pace: 10 * time.Millisecond, strip: stripOwnerGuards,
				faults: []faultType{faultLeaseRevoke, faultLeaseRevoke}, opTimeout: 2 * time.Second, checkTimeout: time.Minute}
			rep := runHistory(t.Context(), tc, cfg)
			require.Empty(t, rep.failure)
			t.Logf("history %d: %s", i, rep)
			for _, v := range rep.violations {
				t.Logf("violation: %.3000s", v)
			}
			if fenced = rep.fenced; fenced > 0 {
				break
			}
		}
		require.Positive(t, fenced, "the fenced-write check must see a commit that should have failed within %d histories", histories)
	})
}
