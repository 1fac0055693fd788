package conformance

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the model-based random tester's entry points: RunRandom for
// go test, RunRandomSuite for the command's check subcommand. Each sequence
// of random calls (valid and invalid) runs on a fresh memstore model and on
// a fresh fixture of the store under test, and every result of the store is
// compared with the model's (random_compare.go); numbers a store may choose
// itself are compared up to a consistent renaming (random_rename.go).

// RandomOptions configure a random run. The zero value runs the default
// number of sequences from seed 1. Environment variables override the
// options unless IgnoreEnv is set (see ApplyEnv).
type RandomOptions struct {
	// Seed is the seed of the first sequence; sequence i uses Seed+i, so any
	// sequence can be run alone from its own seed. 0 means 1.
	Seed int64
	// Sequences is how many sequences to run; 0 means DefaultRandomSequences
	// (1,000, or 50,000 when built with -tags stress).
	Sequences int
	// Ops is the longest sequence; each sequence draws its length from
	// Ops/4..Ops. 0 means DefaultRandomOps.
	Ops int
	// MaxFailures stops the run after this many failing sequences (each one
	// is shrunk, which costs many runs); 0 means 1.
	MaxFailures int
	// ShrinkRuns bounds the re-runs spent shrinking one failing sequence; 0
	// means 400, a negative value disables shrinking.
	ShrinkRuns int
	// Package is the package path the reproduce command names, for example
	// "./memstore"; empty means "./...".
	Package string
	// IgnoreEnv makes the run ignore the ZLINK_RANDOM_* variables (tests that
	// need a fixed configuration set it).
	IgnoreEnv bool
	// Workers is how many sequences run at the same time, each on fixtures
	// of its own, when the harness's fixtures are isolated from each other
	// (Harness.Parallel); 0 means DefaultRandomWorkers. Without
	// Harness.Parallel the sequences run one after the other. Every
	// sequence is the same whatever the number of workers (it depends on
	// its seed alone), and so is the report: sequences are counted and
	// failures reported in seed order, as a serial run would.
	Workers int
}

// Defaults of RandomOptions.
const (
	// DefaultRandomOps is the default longest sequence.
	DefaultRandomOps = 60
	// defaultShrinkRuns bounds the re-runs of one shrink.
	defaultShrinkRuns = 400
	// DefaultRandomWorkers is how many sequences run at the same time on a
	// harness with isolated fixtures. A sequence spends most of its time
	// waiting for its store, so more workers than cores pay.
	DefaultRandomWorkers = 8
)

// DefaultRandomSequences is the number of sequences a run makes by default:
// 1,000, or 50,000 in a build with the stress tag (make stress).
func DefaultRandomSequences() int {
	if stressBuild {
		return 50000
	}
	return 1000
}

// RandomFailure is one failing sequence.
type RandomFailure struct {
	// Seed is the seed of the failing sequence and Ops the longest sequence
	// of the run (the generator needs both to rebuild it).
	Seed int64
	Ops  int
	// OpIndex and Op are the failing operation of the original sequence;
	// Rule names the comparison rule it broke.
	OpIndex int
	Op      string
	Rule    string
	// Message is the whole report: the operation, both results, the rule,
	// the shrunk sequence and the command that reproduces it.
	Message string
}

// RandomReport is the result of one random run.
type RandomReport struct {
	Harness string
	// Sequences and Ops count the sequences and operations run (shrinking
	// not included).
	Sequences int
	Ops       int
	Failures  []RandomFailure
	Duration  time.Duration
	// Outcomes counts the model's outcomes per method over the run, for
	// example "Reserve reserved" or "UpdateSpot invalid:spot.id": what the
	// sequences exercised.
	Outcomes map[string]int
}

// OK reports whether no sequence failed.
func (r RandomReport) OK() bool { return len(r.Failures) == 0 }

// String summarises the run in one line.
func (r RandomReport) String() string {
	verdict := "ok"
	if !r.OK() {
		verdict = fmt.Sprintf("%d failing", len(r.Failures))
	}
	return fmt.Sprintf("random %s: %d sequences, %d operations, %s, %s", r.Harness, r.Sequences, r.Ops, r.Duration.Round(time.Millisecond), verdict)
}

// RunRandom runs seeded random sequences against the harness's store and
// the memstore model and reports every failing sequence with t.Errorf: the
// seed, the operation, both results, the broken rule, a shrunk sequence
// and a one-line command that reproduces it. It logs a summary.
func RunRandom(t TB, h Harness, opts RandomOptions) RandomReport {
	t.Helper()
	rep := runRandom(t, h, opts, t.Name())
	for _, f := range rep.Failures {
		t.Errorf("%s", f.Message)
	}
	t.Logf("%s", rep)
	return rep
}

// RunRandomSuite runs RunRandom outside go test (the command's check
// subcommand): fixtures get a TB whose cleanups run when the run ends, and
// the failures come back in the report. A fixture that cannot be built is
// reported as a failure of its sequence's seed.
func RunRandomSuite(ctx context.Context, h Harness, opts RandomOptions) RandomReport {
	t := newSuiteT(ctx, h.Name+"/random")
	var rep RandomReport
	t.run(func() { rep = runRandom(t, h, opts, "") })
	if t.Failed() && rep.OK() {
		rep.Failures = append(rep.Failures, RandomFailure{
			Rule:    ruleHarness,
			Message: "random run aborted: " + strings.Join(t.messages(), "\n"),
		})
	}
	if rep.Harness == "" {
		rep.Harness = h.Name
	}
	return rep
}

// runRandom is the run itself; testName, when set, goes into the reproduce
// command.
func runRandom(t TB, h Harness, opts RandomOptions, testName string) RandomReport {
	t.Helper()
	opts = opts.withDefaults()
	started := time.Now()
	rep := RandomReport{Harness: h.Name, Outcomes: map[string]int{}}
	run := newRandomRun(t, h)
	workers := 1
	if h.Parallel {
		workers = opts.Workers
	}
	// Sequences that ran, in seed order; a sequence that did not finish
	// (its fixture failed the test) ends the prefix that counts.
	for _, o := range runSequences(t, run, opts, workers) {
		if !o.done {
			break
		}
		if o.res.harness != nil {
			rep.Failures = append(rep.Failures, RandomFailure{Seed: o.seed, Rule: ruleHarness, Message: o.res.harness.Error()})
			break
		}
		rep.Sequences++
		rep.Ops += o.res.ran
		for k, n := range o.res.outcomes {
			rep.Outcomes[k] += n
		}
		if o.res.mismatch == nil {
			continue
		}
		rep.Failures = append(rep.Failures, describeFailure(run, opts, testName, o.seed, o.seq, o.res))
		if len(rep.Failures) >= opts.MaxFailures {
			break
		}
	}
	rep.Duration = time.Since(started)
	return rep
}

// sequenceRun is one sequence of a random run and its outcome.
type sequenceRun struct {
	seed int64
	seq  []randomOp
	res  seqResult
	done bool
}

// runSequences runs the sequences of a run on the given number of workers,
// which take the seeds in increasing order and stop taking new ones once
// MaxFailures sequences failed or the context ended. The sequences that ran
// form a prefix of the returned slice (in seed order).
func runSequences(t TB, run *randomRun, opts RandomOptions, workers int) []sequenceRun {
	out := make([]sequenceRun, opts.Sequences)
	var (
		next     atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
	)
	work := func() {
		for t.Context().Err() == nil && failures.Load() < int64(opts.MaxFailures) {
			i := int(next.Add(1) - 1)
			if i >= len(out) {
				return
			}
			seed := opts.Seed + int64(i)
			seq := generateSequence(seed, opts.Ops, run.h.Capabilities)
			res := run.runSequence(seed, seq)
			out[i] = sequenceRun{seed: seed, seq: seq, res: res, done: true}
			if res.mismatch != nil || res.harness != nil {
				failures.Add(1)
			}
		}
	}
	if workers <= 1 {
		work()
		return out
	}
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return out
}

// withDefaults fills the zero fields and applies the environment.
func (o RandomOptions) withDefaults() RandomOptions {
	if !o.IgnoreEnv {
		o = o.ApplyEnv()
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Sequences <= 0 {
		o.Sequences = DefaultRandomSequences()
	}
	if o.Ops <= 0 {
		o.Ops = DefaultRandomOps
	}
	if o.Ops < 4 {
		o.Ops = 4
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = 1
	}
	if o.ShrinkRuns == 0 {
		o.ShrinkRuns = defaultShrinkRuns
	}
	if o.Package == "" {
		o.Package = "./..."
	}
	if o.Workers <= 0 {
		o.Workers = DefaultRandomWorkers
	}
	return o
}

// WriteOutcomes writes the outcome counts, one method and outcome a line.
func (r RandomReport) WriteOutcomes(w io.Writer) error {
	keys := make([]string, 0, len(r.Outcomes))
	for k := range r.Outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := fmt.Fprintf(w, "%7d  %s\n", r.Outcomes[k], k); err != nil {
			return fmt.Errorf("conformance: write outcomes: %w", err)
		}
	}
	return nil
}
