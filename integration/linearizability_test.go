package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// figures are the totals of a run of histories (docs/reliability.md).
type figures struct {
	histories, ops, unknown, notApplied, lostInjected  int
	faults                                             map[faultType]int
	violations, lostWrites, fenced, illegal, undecided int
	checkedKeys, scanChecks                            int
	leaks, missed                                      int
	cache                                              cacheFigures
}

// add adds one history's report.
func (f *figures) add(r *runReport) {
	f.histories++
	f.ops += r.ops
	f.unknown += r.unknown
	f.notApplied += r.notApplied
	f.lostInjected += r.lostInjected
	for k, n := range r.faults {
		f.faults[k] += n
	}
	f.violations += len(r.violations)
	f.lostWrites += r.lostWrites
	f.fenced += r.fenced
	f.checkedKeys += r.checkedKeys
	f.missed += r.faultsMissed
	f.scanChecks += r.scanChecks
	f.cache.hits += r.cache.hits
	f.cache.misses += r.cache.misses
	f.cache.fallbacks += r.cache.fallbacks
	f.cache.relists += r.cache.relists
	switch r.result {
	case porcupine.Illegal:
		f.illegal++
	case porcupine.Unknown:
		f.undecided++
	}
}

// String renders the figures, one per line.
func (f *figures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "histories checked:        %d\n", f.histories)
	fmt.Fprintf(&b, "operations:               %d\n", f.ops)
	fmt.Fprintf(&b, "unknown outcomes:         %d\n", f.unknown)
	fmt.Fprintf(&b, "left out (not applied):   %d\n", f.notApplied)
	fmt.Fprintf(&b, "lost responses injected:  %d\n", f.lostInjected)
	total := 0
	for _, k := range allFaults() {
		total += f.faults[k]
	}
	fmt.Fprintf(&b, "faults injected:          %d\n", total)
	for _, k := range allFaults() {
		fmt.Fprintf(&b, "  %-28s %d\n", k, f.faults[k])
	}
	fmt.Fprintf(&b, "faults not triggered:     %d\n", f.missed)
	fmt.Fprintf(&b, "scans cut by compaction:  %d\n", f.scanChecks)
	fmt.Fprintf(&b, "keys checked for loss:    %d\n", f.checkedKeys)
	fmt.Fprintf(&b, "watch-cache reads:        %d answered, %d sent to etcd at once, %d after a wait; %d ranges re-read\n",
		f.cache.hits, f.cache.misses, f.cache.fallbacks, f.cache.relists)
	fmt.Fprintf(&b, "violations:               %d\n", f.violations)
	fmt.Fprintf(&b, "  not linearizable:       %d\n", f.illegal)
	fmt.Fprintf(&b, "  check undecided:        %d\n", f.undecided)
	fmt.Fprintf(&b, "  lost writes:            %d\n", f.lostWrites)
	fmt.Fprintf(&b, "  fenced writes:          %d\n", f.fenced)
	fmt.Fprintf(&b, "goroutine leaks:          %d\n", f.leaks)
	return b.String()
}

// faultPlan draws the faults of history i: faultsPerHistory of them. The
// short run rotates through the types so that every one is injected over
// its few histories; the stress run draws a random order of the types for
// each history (seeded by i), so that faults meet in every combination.
func faultPlan(i int) []faultType {
	all := allFaults()
	if stressBuild {
		rnd := rand.New(rand.NewPCG(uint64(i), 3))
		rnd.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
		return all[:min(faultsPerHistory, len(all))]
	}
	var out []faultType
	for j := range faultsPerHistory {
		out = append(out, all[(i*faultsPerHistory+j)%len(all)])
	}
	return out
}

// reportFigures logs the figures and writes them to the file named by
// ZLINK_RELIABILITY_REPORT, when set.
func reportFigures(t *testing.T, name string, f fmt.Stringer) {
	t.Logf("%s figures:\n%s", name, f)
	if path := os.Getenv("ZLINK_RELIABILITY_REPORT"); path != "" {
		fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = fmt.Fprintf(fh, "== %s (%s)\n%s\n", name, time.Now().UTC().Format(time.RFC3339), f)
		require.NoError(t, err)
		require.NoError(t, fh.Close())
	}
}

// TestLinearizability runs histories of the mixed workload on a
// three-member cluster with faults injected, and checks each one.
func TestLinearizability(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	f := &figures{faults: map[faultType]int{}}
	tc, err := startCluster(t.Context())
	require.NoError(t, err)
	for i := range linearHistories {
		cfg := runConfig{seed: uint64(i + 1), clients: 4, ops: opsPerClient, pace: 15 * time.Millisecond,
			faults: faultPlan(i), opTimeout: time.Second, checkTimeout: linearCheckTimeout}
		rep := runHistory(t.Context(), tc, cfg)
		require.Empty(t, rep.failure, "history %d could not run", i)
		f.add(rep)
		t.Logf("history %d (seed %d): %s", i, cfg.seed, rep)
		for _, v := range rep.violations {
			t.Errorf("history %d (seed %d): %s", i, cfg.seed, v)
		}
	}
	require.NoError(t, tc.close())
	if err := goleak.Find(append(etcdServerConnections(), leaks)...); err != nil {
		f.leaks++
		t.Errorf("goroutine leak: %v", err)
	}
	reportFigures(t, "TestLinearizability", f)
	for _, k := range allFaults() {
		if stressBuild {
			require.Positive(t, f.faults[k], "fault %s was never injected", k)
		}
	}
}

// etcdServerConnections ignores the etcd servers' peer HTTP connections,
// which outlive a member's Close until their keep-alive ends (the test's
// own code opens no HTTP connection: its clients speak gRPC).
func etcdServerConnections() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).backgroundRead"),
	}
}
