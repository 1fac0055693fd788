package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// The benchmark harness (docs/performance.md): every hot operation runs
// twice in the same process, on the same client and member — through the
// store, and as its raw-etcd twin that sends the same transactions without
// the store — at several numbers of concurrent callers. The two sides run
// in rounds of ABBA order (store, raw, raw, store; four rounds, an eighth of
// the calls each time) so that the changing load of a shared, noisy machine
// falls on both alike, and the
// benchmark reports both sides' throughput, latency percentiles, requests
// per call, and their ratio.

// envBenchFsync, set to 1, makes every benchmark run on a private member
// with fsync on (production durability) instead of the shared test member,
// which runs without fsync.
const envBenchFsync = "ZLINK_BENCH_FSYNC"

// envBenchSide, set to store or raw, makes compare run that side only (the
// other side's figures are then 0), so that a CPU profile
// (-cpuprofile) shows one side's work; for example
//
//	ZLINK_BENCH_SIDE=store go test -run '^$' -bench 'UpdateMeshNodeRevision$/callers=1$' -cpuprofile store.out ./etcdstore/
const envBenchSide = "ZLINK_BENCH_SIDE"

// benchCallers are the numbers of concurrent callers of every benchmark.
func benchCallers() []int { return []int{1, 16, 64} }

// benchClient returns the client a benchmark runs on: the shared member's,
// or a private member's with fsync on when envBenchFsync is 1.
func benchClient(tb etcdtest.TB) *clientv3.Client {
	tb.Helper()
	if os.Getenv(envBenchFsync) != "1" {
		return etcdtest.Connect(tb)
	}
	m, err := etcdtest.StartMember(tb.Context(), etcdtest.Config{Fsync: true})
	if err != nil {
		tb.Fatalf("bench: fsync member: %v", err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	c, err := etcdtest.NewClient(m.Endpoints())
	if err != nil {
		tb.Fatalf("bench: fsync member client: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// benchSide is one side of a comparison.
type benchSide struct {
	// call makes one call as caller (0 ≤ caller < callers).
	call func(ctx context.Context, caller int) error
	// rec counts the side's requests (round trips).
	rec *txn.Recorder
	// prepare, when set, runs before each phase with the timer stopped; each
	// caller will then make perCaller calls.
	prepare func(ctx context.Context, callers, perCaller int) error
	// cleanup, when set, runs after each phase with the timer stopped.
	cleanup func(ctx context.Context) error
}

// phaseResult is what one phase of one side measured.
type phaseResult struct {
	wall      time.Duration
	cpu       time.Duration
	latencies []time.Duration
	calls     int
	requests  int
}

// sideResult sums the phases of one side.
type sideResult struct {
	wall      time.Duration
	cpu       time.Duration
	latencies []time.Duration
	calls     int
	requests  int
}

func (r *sideResult) add(p phaseResult) {
	r.wall += p.wall
	r.cpu += p.cpu
	r.latencies = append(r.latencies, p.latencies...)
	r.calls += p.calls
	r.requests += p.requests
}

// cpuPerCallUs is the process's CPU time per call of the side, in
// microseconds: the client's and (in-process) the member's.
func (r *sideResult) cpuPerCallUs() float64 {
	if r.calls == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.calls)
}

// callsPerSecond is the side's throughput.
func (r *sideResult) callsPerSecond() float64 {
	if r.wall <= 0 {
		return 0
	}
	return float64(r.calls) / r.wall.Seconds()
}

// percentileMs returns the q-th percentile (0 < q ≤ 1) of the latencies in
// milliseconds, nearest-rank.
func (r *sideResult) percentileMs(q float64) float64 {
	if len(r.latencies) == 0 {
		return 0
	}
	slices.Sort(r.latencies)
	rank := max(int(math.Ceil(q*float64(len(r.latencies))))-1, 0)
	return float64(r.latencies[rank]) / float64(time.Millisecond)
}

// runPhase runs perCaller calls on each of callers goroutines at once.
func runPhase(ctx context.Context, side benchSide, callers, perCaller int) (phaseResult, error) {
	if perCaller == 0 {
		return phaseResult{}, nil
	}
	before := side.rec.Total()
	lat := make([][]time.Duration, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	cpu := processCPU()
	start := time.Now()
	for c := range callers {
		lat[c] = make([]time.Duration, 0, perCaller)
		wg.Go(func() {
			for range perCaller {
				t := time.Now()
				if err := side.call(ctx, c); err != nil {
					errs[c] = fmt.Errorf("caller %d: %w", c, err)
					return
				}
				lat[c] = append(lat[c], time.Since(t))
			}
		})
	}
	wg.Wait()
	res := phaseResult{wall: time.Since(start), cpu: processCPU() - cpu, calls: callers * perCaller, requests: side.rec.Total() - before}
	for _, l := range lat {
		res.latencies = append(res.latencies, l...)
	}
	return res, errors.Join(errs...)
}

// compare alternates the two sides in rounds (store, raw, raw, store each),
// so that the load of a shared machine, which changes from one tenth of a
// second to the next, falls on both sides alike: the more rounds, the finer
// the alternation, but a phase's start and end (its callers ramping up and
// down) must stay small beside it. So: at least minBenchRounds rounds, more
// while every caller still makes minPhaseCalls calls per phase, at most
// maxBenchRounds.
const (
	minBenchRounds = 4
	maxBenchRounds = 32
	minPhaseCalls  = 25
)

// benchRounds returns the number of rounds for perCaller calls per caller.
func benchRounds(perCaller int) int {
	return min(maxBenchRounds, max(minBenchRounds, perCaller/(2*minPhaseCalls)))
}

// splitCalls splits n calls into parts as even as can be (some may be 0).
func splitCalls(n, parts int) []int {
	out := make([]int, parts)
	for i := range out {
		out[i] = n*(i+1)/parts - n*i/parts
	}
	return out
}

// compare runs the store side and its raw twin b.N times each (rounded up
// to a multiple of callers), with callers concurrent callers, in
// benchRounds rounds of store, raw, raw, store, and reports:
//
//	ns/op        store wall time per call
//	ops/s        store calls per second
//	p50-ms       store latency, median
//	p99-ms       store latency, 99th percentile
//	rpc/op       store requests per call (a parallel pair counts 2)
//	raw-ops/s, raw-p50-ms, raw-p99-ms, raw-rpc/op  the same for the twin
//	ratio        store time / raw time for the same number of calls
//	             (1 = no overhead; 2 = half the throughput)
//	cpu-us/op, raw-cpu-us/op  the process's CPU time per call (the
//	             client's and the in-process member's, garbage collection
//	             included), and cpu-ratio their ratio: less disturbed than
//	             the time by other load on the machine
func compare(b *testing.B, callers int, store, raw benchSide) {
	b.Helper()
	ctx := context.Background()
	b.StopTimer()
	b.ResetTimer()
	perCaller := (b.N + callers - 1) / callers
	rounds := benchRounds(perCaller)
	parts := splitCalls(perCaller, 2*rounds)
	var st, rw sideResult
	phase := func(side benchSide, n int, timed bool, into *sideResult) {
		if n == 0 {
			return
		}
		if side.prepare != nil {
			if err := side.prepare(ctx, callers, n); err != nil {
				b.Fatalf("prepare: %v", err)
			}
		}
		if timed {
			b.StartTimer()
		}
		res, err := runPhase(ctx, side, callers, n)
		if timed {
			b.StopTimer()
		}
		if err != nil {
			b.Fatalf("phase: %v", err)
		}
		into.add(res)
		if side.cleanup != nil {
			if err := side.cleanup(ctx); err != nil {
				b.Fatalf("cleanup: %v", err)
			}
		}
	}
	// The timer runs during the store's phases (the raw side's alone when
	// only it runs, so that go test sizes b.N by it).
	only := os.Getenv(envBenchSide)
	for r := range rounds {
		if only != "raw" {
			phase(store, parts[2*r], true, &st)
		}
		if only != "store" {
			phase(raw, parts[2*r], only == "raw", &rw)
			phase(raw, parts[2*r+1], only == "raw", &rw)
		}
		if only != "raw" {
			phase(store, parts[2*r+1], true, &st)
		}
	}

	timed := st
	if only == "raw" {
		timed = rw
	}
	b.ReportMetric(float64(timed.wall.Nanoseconds())/float64(timed.calls), "ns/op")
	calls := float64(st.calls)
	b.ReportMetric(st.callsPerSecond(), "ops/s")
	b.ReportMetric(st.percentileMs(0.50), "p50-ms")
	b.ReportMetric(st.percentileMs(0.99), "p99-ms")
	b.ReportMetric(float64(st.requests)/calls, "rpc/op")
	b.ReportMetric(rw.callsPerSecond(), "raw-ops/s")
	b.ReportMetric(rw.percentileMs(0.50), "raw-p50-ms")
	b.ReportMetric(rw.percentileMs(0.99), "raw-p99-ms")
	b.ReportMetric(float64(rw.requests)/float64(rw.calls), "raw-rpc/op")
	b.ReportMetric(st.wall.Seconds()/rw.wall.Seconds(), "ratio")
	b.ReportMetric(st.cpuPerCallUs(), "cpu-us/op")
	b.ReportMetric(rw.cpuPerCallUs(), "raw-cpu-us/op")
	b.ReportMetric(st.cpu.Seconds()/rw.cpu.Seconds(), "cpu-ratio")
}

// processCPU returns the CPU time the process has used, all threads
// together (the in-process etcd member's and the garbage collector's
// included). Unlike the time, it does not grow while the process waits for
// a core that other processes hold.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchTB is what fixtures are built with: failures go to the running
// (sub-)benchmark, cleanups and the context belong to its parent, so that a
// fixture built on a sub-benchmark's first run (b.N = 1) lives through the
// later runs that go test makes of it.
type benchTB struct {
	*testing.B
	parent *testing.B
}

// Cleanup registers f with the parent benchmark.
func (t benchTB) Cleanup(f func()) { t.parent.Cleanup(f) }

// Context returns the parent benchmark's context.
func (t benchTB) Context() context.Context { return t.parent.Context() }

// runAtEveryConcurrency runs one sub-benchmark per number of callers;
// build prepares both sides for that many callers, once, outside the timer.
func runAtEveryConcurrency(b *testing.B, build func(tb benchTB, callers int) (store, raw benchSide)) {
	for _, callers := range benchCallers() {
		var store, raw benchSide
		built := false
		b.Run(fmt.Sprintf("callers=%d", callers), func(sb *testing.B) {
			if !built {
				store, raw = build(benchTB{B: sb, parent: b}, callers)
				built = true
			}
			compare(sb, callers, store, raw)
		})
	}
}

// The rounds of a comparison share the calls out evenly.
func TestSplitCalls(t *testing.T) {
	for _, tc := range []struct {
		n, parts int
		want     []int
	}{
		{0, 4, []int{0, 0, 0, 0}},
		{1, 4, []int{0, 0, 0, 1}},
		{10, 4, []int{2, 3, 2, 3}},
		{16, 8, []int{2, 2, 2, 2, 2, 2, 2, 2}},
	} {
		if got := splitCalls(tc.n, tc.parts); !slices.Equal(got, tc.want) {
			t.Errorf("splitCalls(%d, %d) = %v, want %v", tc.n, tc.parts, got, tc.want)
		}
	}
}

// The rounds of a comparison: at least 4, at most 32, and in between as
// many as leave every caller 25 calls per phase.
func TestBenchRounds(t *testing.T) {
	for _, tc := range []struct{ perCaller, want int }{
		{0, 4}, {1, 4}, {199, 4}, {200, 4}, {250, 5}, {1000, 20}, {1599, 31}, {1600, 32}, {100000, 32},
	} {
		if got := benchRounds(tc.perCaller); got != tc.want {
			t.Errorf("benchRounds(%d) = %d, want %d", tc.perCaller, got, tc.want)
		}
	}
}
