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
	"github.com/zlink-systems/zlink-etcd/internal/scratch"
)

// cleanupTimeout bounds the removal of a scratch prefix at the end of a
// run (also after an interrupt).
const cleanupTimeout = 30 * time.Second

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
messages. Skipped scenarios are those the etcd store does not claim
(in-memory-only behaviours and counter hooks). --random N adds N sequences
of the model-based random tester. Exit status 1 when anything failed.`,
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
				s, err := open(ctx, e.conn, e.stderr, e.log)
				if err != nil {
					return err
				}
				defer s.close()
				return runCheck(ctx, e.stdout, s, checkOptions{filter: filter, random: *random, seed: *seed, verbose: *verbose})
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

// runCheck runs the suite and reports; it fails when a scenario failed.
func runCheck(ctx context.Context, w io.Writer, s *session, opts checkOptions) (err error) {
	prefix, err := scratch.New(s.cfg.Prefix, "check")
	if err != nil {
		return err
	}
	h, err := etcdharness.New(s.client, etcdharness.Options{Prefix: prefix, Store: etcdStoreOptions(s)})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if _, cerr := scratch.Clean(cctx, s.client, prefix); cerr != nil && err == nil {
			err = fmt.Errorf("clean up %s: %w", prefix, cerr)
		}
	}()
	suite := conformance.SuiteOptions{}
	if opts.filter != nil {
		suite.Filter = func(sc conformance.Scenario) bool { return opts.filter.MatchString(sc.Name()) }
	}
	total, width := 0, 0
	for _, sc := range conformance.Scenarios() {
		if suite.Filter == nil || suite.Filter(sc) {
			total++
			width = max(width, utf8.RuneCountInString(sectionOf(sc)))
		}
	}
	if total == 0 {
		return usageErrorf("--run %q matches no scenario", opts.filter)
	}
	fmt.Fprintf(w, "check: %d scenarios against %s under %s\n", total, s.describe, prefix)
	progress := &sectionProgress{w: w, verbose: opts.verbose, width: width}
	suite.OnResult = progress.add
	rep := conformance.RunSuite(ctx, h.Conformance(), suite)
	progress.flush()
	fmt.Fprintln(w)
	if err := rep.WriteTable(w); err != nil {
		return err
	}
	ok := rep.OK()
	if opts.random > 0 && ctx.Err() == nil {
		fmt.Fprintf(w, "\ncheck: %d random sequences from seed %d…\n", opts.random, opts.seed)
		rr := conformance.RunRandomSuite(ctx, h.Conformance(), conformance.RandomOptions{
			Seed: opts.seed, Sequences: opts.random, IgnoreEnv: true, Package: "./etcdstore"})
		fmt.Fprintln(w, rr.String())
		for _, f := range rr.Failures {
			fmt.Fprintf(w, "\nFAIL random seed %d\n    %s\n", f.Seed, strings.ReplaceAll(strings.TrimRight(f.Message, "\n"), "\n", "\n    "))
		}
		ok = ok && rr.OK()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	if !ok {
		return fmt.Errorf("conformance FAILED: %d of %d scenarios failed (details above)", rep.Failed, len(rep.Scenarios))
	}
	fmt.Fprintf(w, "\ncheck: PASS (%d passed, %d skipped) in %s\n", rep.Passed, rep.Skipped, rep.Duration.Round(time.Millisecond))
	return nil
}

// sectionProgress prints one line per catalogue section as its scenarios
// end (and every scenario with verbose).
type sectionProgress struct {
	w       io.Writer
	verbose bool
	width   int
	section string
	counts  map[conformance.Outcome]int
	began   time.Time
}

// add records one scenario's result.
func (p *sectionProgress) add(r conformance.ScenarioResult) {
	if r.Section != p.section {
		p.flush()
		p.section, p.counts, p.began = r.Section, map[conformance.Outcome]int{}, time.Now()
	}
	p.counts[r.Outcome]++
	if p.verbose || r.Outcome == conformance.OutcomeFail {
		fmt.Fprintf(p.w, "  %-4s %s (%s)\n", strings.ToUpper(string(r.Outcome)), r.Name, r.Duration.Round(time.Millisecond))
	}
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

// sectionOf is the catalogue section a report groups sc under.
func sectionOf(sc conformance.Scenario) string {
	if sc.Section != "" {
		return sc.Section
	}
	id, _, _ := strings.Cut(sc.ID, "-")
	return id
}
