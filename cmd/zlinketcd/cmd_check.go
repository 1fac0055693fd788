package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/internal/etcdharness"
)

// checkCommand runs the conformance suite against the cluster.
func checkCommand() command {
	return command{
		name:    "check",
		summary: "run the conformance suite against the cluster under a scratch prefix",
		help: `Runs every scenario of the conformance catalogue (the same suite memstore
and etcdstore pass in go test) against a fresh etcd store per scenario,
each under its own sub-prefix of a scratch prefix inside --prefix
("<prefix>zlinketcd-check-<random>/"), removed afterwards together with
the owner leases the scenarios left. Prints progress per catalogue section,
then a PASS/FAIL/SKIP table per section and every failure with its
messages; every few seconds the count of scenarios done goes to stderr.
Skipped scenarios are those the etcd store does not claim (in-memory-only
behaviours and counter hooks). --random N adds N sequences of the
model-based random tester. Exit status 1 when anything failed.

Every request is bounded by --command-timeout; one that runs out of it
(a cluster that lost its quorum, say) ends the run at once with the cause.
An interrupted run reports the scenario it was in as interrupted, and the
results before it.`,
		flags: func(fs *flag.FlagSet) runFunc {
			runExpr := fs.String("run", "", "only scenarios whose name (ID_title) matches this regular expression")
			random := fs.Int("random", 0, "also run this many random sequences against the memstore model")
			seed := fs.Int64("seed", 1, "seed of the first random sequence")
			verbose := fs.Bool("v", false, "print every scenario as it ends")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageErrorf("check takes no arguments, got %q", strings.Join(args, " "))
				}
				var filter *regexp.Regexp
				if *runExpr != "" {
					re, err := regexp.Compile(*runExpr)
					if err != nil {
						return usageErrorf("--run: %v", err)
					}
					filter = re
				}
				if *random < 0 {
					return usageErrorf("--random must not be negative")
				}
				opts := checkOptions{filter: filter, random: *random, seed: *seed, verbose: *verbose}
				if _, _, err := opts.selection(); err != nil {
					return err
				}
				s, err := e.open(ctx, sessionOptions{write: true})
				if err != nil {
					return err
				}
				defer s.close()
				return runCheck(ctx, e, s, opts)
			}
		},
	}
}

// checkOptions are the check subcommand's options.
type checkOptions struct {
	filter  *regexp.Regexp
	random  int
	seed    int64
	verbose bool
}

// selection is the suite's options with the filter, the number of
// scenarios it selects and the width of their section names.
func (o checkOptions) selection() (conformance.SuiteOptions, [2]int, error) {
	suite := conformance.SuiteOptions{}
	if o.filter != nil {
		suite.Filter = func(sc conformance.Scenario) bool { return o.filter.MatchString(sc.Name()) }
	}
	total, width := 0, 0
	for _, sc := range conformance.Scenarios() {
		if suite.Filter == nil || suite.Filter(sc) {
			total++
			width = max(width, utf8.RuneCountInString(sectionOf(sc)))
		}
	}
	if total == 0 {
		return suite, [2]int{}, usageErrorf("--run %q matches no scenario", o.filter)
	}
	return suite, [2]int{total, width}, nil
}

// runCheck runs the suite and reports; it fails when a scenario failed.
func runCheck(ctx context.Context, e *env, s *session, opts checkOptions) (err error) {
	w := e.stdout
	suite, counts, err := opts.selection()
	if err != nil {
		return err
	}
	total, width := counts[0], counts[1]
	run, err := e.beginScratch(ctx, s, "check")
	if err != nil {
		return err
	}
	defer func() { err = run.finish(ctx, err) }()
	h, err := etcdharness.New(s.client, etcdharness.Options{Prefix: run.prefix, Store: etcdStoreOptions(s)})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "check: %d scenarios against %s under %s\n", total, s.describe, run.prefix)
	prog := e.startProgress()
	defer prog.end()
	progress := &sectionProgress{w: w, verbose: opts.verbose, width: width, ctx: ctx, total: total, stderr: prog}
	suite.OnResult = progress.add
	rep := conformance.RunSuite(ctx, h.Conformance(), suite)
	progress.flush()
	if ctx.Err() != nil {
		return progress.reportInterrupted(rep)
	}
	fmt.Fprintln(w)
	if err := rep.WriteTable(w); err != nil {
		return err
	}
	ok := rep.OK()
	if opts.random > 0 {
		fmt.Fprintf(w, "\ncheck: %d random sequences from seed %d…\n", opts.random, opts.seed)
		prog.set("check: %d random sequences from seed %d…", opts.random, opts.seed)
		rr := conformance.RunRandomSuite(ctx, h.Conformance(), conformance.RandomOptions{
			Seed: opts.seed, Sequences: opts.random, IgnoreEnv: true, Package: "./etcdstore"})
		if ctx.Err() != nil {
			fmt.Fprintf(w, "check: the random sequences were interrupted\n")
			return fmt.Errorf("interrupted during the random sequences: %w", context.Cause(ctx))
		}
		fmt.Fprintln(w, rr.String())
		for _, f := range rr.Failures {
			fmt.Fprintf(w, "\nFAIL random seed %d\n    %s\n", f.Seed, strings.ReplaceAll(strings.TrimRight(f.Message, "\n"), "\n", "\n    "))
		}
		ok = ok && rr.OK()
	}
	if !ok {
		return fmt.Errorf("conformance FAILED: %d of %d scenarios failed (details above)", rep.Failed, len(rep.Scenarios))
	}
	fmt.Fprintf(w, "\ncheck: PASS (%d passed, %d skipped) in %s\n", rep.Passed, rep.Skipped, rep.Duration.Round(time.Millisecond))
	return nil
}

// sectionProgress prints one line per catalogue section as its scenarios
// end (and every scenario with verbose) on stdout, and the count of
// scenarios done on stderr. A scenario that ends after the run was
// interrupted is not a failure: it is the interrupted one, and those after
// it were not run.
type sectionProgress struct {
	w       io.Writer
	verbose bool
	width   int
	ctx     context.Context
	total   int
	stderr  *progress

	section string
	counts  map[conformance.Outcome]int
	began   time.Time
	// done counts the scenarios that ran to their end; interrupted names
	// the one the run stopped in.
	done        int
	outcomes    map[conformance.Outcome]int
	interrupted string
}

// add records one scenario's result.
func (p *sectionProgress) add(r conformance.ScenarioResult) {
	if p.ctx.Err() != nil && (notRun(r) || r.Outcome == conformance.OutcomeFail) {
		if p.interrupted == "" && !notRun(r) {
			p.interrupted = r.Name
		}
		return
	}
	if r.Section != p.section {
		p.flush()
		p.section, p.counts, p.began = r.Section, map[conformance.Outcome]int{}, time.Now()
	}
	p.counts[r.Outcome]++
	if p.outcomes == nil {
		p.outcomes = map[conformance.Outcome]int{}
	}
	p.outcomes[r.Outcome]++
	p.done++
	if p.verbose || r.Outcome == conformance.OutcomeFail {
		fmt.Fprintf(p.w, "  %-4s %s (%s)\n", strings.ToUpper(string(r.Outcome)), r.Name, r.Duration.Round(time.Millisecond))
	}
	p.stderr.set("check: %d/%d scenarios done (%d passed, %d failed, %d skipped), in %s", p.done, p.total,
		p.outcomes[conformance.OutcomePass], p.outcomes[conformance.OutcomeFail], p.outcomes[conformance.OutcomeSkip], r.Section)
}

// notRun reports whether the suite skipped r because the run had ended.
func notRun(r conformance.ScenarioResult) bool {
	return r.Outcome == conformance.OutcomeSkip && len(r.Messages) == 1 && strings.HasPrefix(r.Messages[0], "not run: ")
}

// flush prints the finished section's line.
func (p *sectionProgress) flush() {
	if p.section == "" {
		return
	}
	pad := strings.Repeat(" ", max(0, p.width-utf8.RuneCountInString(p.section)))
	fmt.Fprintf(p.w, "  %s%s  %3d passed  %2d failed  %2d skipped  %s\n", p.section, pad,
		p.counts[conformance.OutcomePass], p.counts[conformance.OutcomeFail], p.counts[conformance.OutcomeSkip],
		time.Since(p.began).Round(time.Millisecond))
	p.section = ""
}

// reportInterrupted prints the results of the scenarios that ran before
// the interruption and returns the run's error.
func (p *sectionProgress) reportInterrupted(rep conformance.Report) error {
	before := completed(rep, p.done)
	where := "between scenarios"
	if p.interrupted != "" {
		where = "during " + p.interrupted
	}
	fmt.Fprintf(p.w, "\ncheck: INTERRUPTED %s: %d of %d scenarios ran (%d passed, %d failed, %d skipped)\n",
		where, p.done, p.total, before.Passed, before.Failed, before.Skipped)
	if p.done > 0 {
		fmt.Fprintln(p.w)
		if err := before.WriteTable(p.w); err != nil {
			return err
		}
	}
	return fmt.Errorf("interrupted %s: %w", where, context.Cause(p.ctx))
}

// completed is rep restricted to its first n scenarios.
func completed(rep conformance.Report, n int) conformance.Report {
	out := conformance.Report{Harness: rep.Harness, Duration: rep.Duration}
	index := map[string]int{}
	for _, s := range rep.Scenarios[:min(n, len(rep.Scenarios))] {
		out.Scenarios = append(out.Scenarios, s)
		i, ok := index[s.Section]
		if !ok {
			i = len(out.Groups)
			index[s.Section] = i
			out.Groups = append(out.Groups, conformance.GroupResult{Section: s.Section})
		}
		g := &out.Groups[i]
		switch s.Outcome {
		case conformance.OutcomePass:
			g.Passed++
			out.Passed++
		case conformance.OutcomeFail:
			g.Failed++
			out.Failed++
		default:
			g.Skipped++
			out.Skipped++
		}
	}
	return out
}

// sectionOf is the catalogue section a report groups sc under.
func sectionOf(sc conformance.Scenario) string {
	if sc.Section != "" {
		return sc.Section
	}
	id, _, _ := strings.Cut(sc.ID, "-")
	return id
}
