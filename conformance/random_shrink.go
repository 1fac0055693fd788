package conformance

import (
	"fmt"
	"strings"
)

// Shrinking of a failing sequence by delta debugging, and the failure
// report.

// shrinkResult is a shrunk sequence and its failure.
type shrinkResult struct {
	seq      []randomOp
	mismatch *randomMismatch
	runs     int
}

// shrink removes operations from seq while the sequence, re-run from
// scratch on fresh fixtures, still fails with the same signature (method
// and rule); it stops after budget runs. seq is the sequence up to and
// including the failing operation.
func shrink(run *randomRun, seed int64, seq []randomOp, first *randomMismatch, budget int) shrinkResult {
	run.t.Helper()
	best := shrinkResult{seq: seq, mismatch: first}
	want := first.signature()
	// fails runs a candidate and keeps it when it fails alike, cut after
	// its failing operation.
	fails := func(candidate []randomOp) bool {
		best.runs++
		res := run.runSequence(seed, candidate)
		if res.mismatch == nil || res.mismatch.signature() != want {
			return false
		}
		best.seq = candidate[:res.mismatch.OpIndex+1]
		best.mismatch = res.mismatch
		return true
	}
	chunks := 2
	for len(best.seq) > 1 && best.runs < budget {
		size := (len(best.seq) + chunks - 1) / chunks
		removed := false
		for start := 0; start < len(best.seq) && best.runs < budget; start += size {
			end := min(start+size, len(best.seq))
			candidate := make([]randomOp, 0, len(best.seq)-(end-start))
			candidate = append(candidate, best.seq[:start]...)
			candidate = append(candidate, best.seq[end:]...)
			if len(candidate) > 0 && fails(candidate) {
				removed = true
				chunks = max(chunks-1, 2)
				break
			}
		}
		if removed {
			continue
		}
		if size == 1 {
			break
		}
		chunks = min(chunks*2, len(best.seq))
	}
	return best
}

// describeFailure shrinks a failing sequence and writes the report.
func describeFailure(run *randomRun, opts RandomOptions, testName string, seed int64, seq []randomOp, res seqResult) RandomFailure {
	run.t.Helper()
	h := run.h
	m := res.mismatch
	f := RandomFailure{Seed: seed, Ops: opts.Ops, OpIndex: m.OpIndex, Op: m.Op, Rule: m.Rule}
	var b strings.Builder
	fmt.Fprintf(&b, "random sequence seed=%d (harness %s, %d operations) failed at operation #%d:\n", seed, h.Name, len(seq), m.OpIndex)
	writeMismatch(&b, m)
	if opts.ShrinkRuns > 0 {
		s := shrink(run, seed, seq[:m.OpIndex+1], m, opts.ShrinkRuns)
		fmt.Fprintf(&b, "shrunk to %d of %d operations (%d re-runs); it fails at the last one:\n", len(s.seq), m.OpIndex+1, s.runs)
		for i, op := range s.seq {
			fmt.Fprintf(&b, "  #%d %s\n", i, op)
		}
		if s.mismatch != m {
			b.WriteString("the shrunk sequence's failure:\n")
			writeMismatch(&b, s.mismatch)
		}
	}
	fmt.Fprintf(&b, "reproduce: %s", reproduceCommand(opts, testName, seed))
	f.Message = b.String()
	return f
}

// writeMismatch writes one mismatch: operation, rule, arguments, results.
func writeMismatch(b *strings.Builder, m *randomMismatch) {
	fmt.Fprintf(b, "  operation: %s\n", m.Op)
	fmt.Fprintf(b, "  rule %s broken: %s\n", m.Rule, m.Detail)
	if m.Input != "" {
		fmt.Fprintf(b, "  arguments (model numbers): %s\n", m.Input)
	}
	if len(m.Passed) > 0 {
		fmt.Fprintf(b, "  renamed for the store: %s\n", strings.Join(m.Passed, "; "))
	}
	fmt.Fprintf(b, "  model result: %s\n", m.Model)
	fmt.Fprintf(b, "  store result: %s\n", m.Store)
}

// reproduceCommand is the one-line command that re-runs one sequence (the
// options to use when the run ignores the environment).
func reproduceCommand(opts RandomOptions, testName string, seed int64) string {
	if opts.IgnoreEnv {
		return fmt.Sprintf("run RandomOptions{Seed: %d, Sequences: 1, Ops: %d} (this run ignores %s)", seed, opts.Ops, EnvRandomSeed)
	}
	run := ""
	if testName != "" {
		parts := strings.Split(testName, "/")
		for i, p := range parts {
			parts[i] = "^" + p + "$"
		}
		run = fmt.Sprintf(" -run '%s'", strings.Join(parts, "/"))
	}
	return fmt.Sprintf("%s=%d %s=%d go test %s%s -count=1", EnvRandomSeed, seed, EnvRandomOps, opts.Ops, opts.Package, run)
}
