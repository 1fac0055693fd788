package conformance

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// This file runs the suite outside go test (the command's check
// subcommand): RunSuite drives every scenario with its own TB and returns a
// Report with a result per scenario and per catalogue section.

// Outcome is how one scenario ended.
type Outcome string

// Outcomes.
const (
	OutcomePass Outcome = "pass"
	OutcomeFail Outcome = "fail"
	OutcomeSkip Outcome = "skip"
)

// SuiteOptions configure RunSuite. The zero value runs every scenario.
type SuiteOptions struct {
	// Scenarios replaces the catalogue (Scenarios()) when non-nil.
	Scenarios []Scenario
	// Filter, when set, selects the scenarios to run; the others are not
	// reported.
	Filter func(Scenario) bool
	// OnResult, when set, is called after each scenario (for progress
	// output), from the goroutine that called RunSuite.
	OnResult func(ScenarioResult)
}

// ScenarioResult is the result of one scenario.
type ScenarioResult struct {
	ID      string
	Title   string
	Section string
	// Name is the scenario's test name, Harness.Name/ID_title.
	Name    string
	Outcome Outcome
	// Messages are the scenario's log, error and skip messages in order.
	Messages []string
	Duration time.Duration
}

// GroupResult counts the outcomes of one catalogue section.
type GroupResult struct {
	Section                 string
	Passed, Failed, Skipped int
}

// Report is the result of one RunSuite.
type Report struct {
	Harness   string
	Scenarios []ScenarioResult
	// Groups are the catalogue sections in the order they first appear.
	Groups                  []GroupResult
	Passed, Failed, Skipped int
	Duration                time.Duration
}

// OK reports whether no scenario failed.
func (r Report) OK() bool { return r.Failed == 0 }

// WriteTable writes one line per section with its counts and a total, then
// every failed scenario with its messages.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SECTION\tPASS\tFAIL\tSKIP\n")
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", g.Section, g.Passed, g.Failed, g.Skipped)
	}
	fmt.Fprintf(tw, "total (%s, %s)\t%d\t%d\t%d\n", r.Harness, r.Duration.Round(time.Millisecond), r.Passed, r.Failed, r.Skipped)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("conformance: write report: %w", err)
	}
	for _, s := range r.Scenarios {
		if s.Outcome != OutcomeFail {
			continue
		}
		if _, err := fmt.Fprintf(w, "\nFAIL %s\n", s.Name); err != nil {
			return fmt.Errorf("conformance: write report: %w", err)
		}
		for _, m := range s.Messages {
			if _, err := fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(strings.TrimRight(m, "\n"), "\n", "\n    ")); err != nil {
				return fmt.Errorf("conformance: write report: %w", err)
			}
		}
	}
	return nil
}

// RunSuite runs the scenarios against the harness one after the other and
// reports the results. Each scenario runs in its own goroutine with a TB
// whose FailNow and SkipNow end that goroutine (as the testing package
// does), and its cleanups run when it ends. When ctx is done, the
// scenarios not yet started are reported as skipped.
func RunSuite(ctx context.Context, h Harness, opts SuiteOptions) Report {
	scenarios := opts.Scenarios
	if scenarios == nil {
		scenarios = Scenarios()
	}
	start := time.Now()
	rep := Report{Harness: h.Name}
	groups := map[string]int{}
	for _, sc := range scenarios {
		if opts.Filter != nil && !opts.Filter(sc) {
			continue
		}
		res := runSuiteScenario(ctx, h, sc)
		rep.Scenarios = append(rep.Scenarios, res)
		i, ok := groups[res.Section]
		if !ok {
			i = len(rep.Groups)
			groups[res.Section] = i
			rep.Groups = append(rep.Groups, GroupResult{Section: res.Section})
		}
		g := &rep.Groups[i]
		switch res.Outcome {
		case OutcomePass:
			g.Passed++
			rep.Passed++
		case OutcomeFail:
			g.Failed++
			rep.Failed++
		default:
			g.Skipped++
			rep.Skipped++
		}
		if opts.OnResult != nil {
			opts.OnResult(res)
		}
	}
	rep.Duration = time.Since(start)
	return rep
}

// scenarioSection is the section a report groups a scenario under.
func scenarioSection(sc Scenario) string {
	if sc.Section != "" {
		return sc.Section
	}
	if i := strings.IndexByte(sc.ID, '-'); i > 0 {
		return sc.ID[:i]
	}
	return sc.ID
}

// runSuiteScenario runs one scenario on a suiteT.
func runSuiteScenario(ctx context.Context, h Harness, sc Scenario) ScenarioResult {
	res := ScenarioResult{ID: sc.ID, Title: sc.Title, Section: scenarioSection(sc), Name: h.Name + "/" + sc.Name()}
	if err := ctx.Err(); err != nil {
		res.Outcome = OutcomeSkip
		res.Messages = []string{fmt.Sprintf("not run: %v", err)}
		return res
	}
	t := newSuiteT(ctx, res.Name)
	began := time.Now()
	t.run(func() { runScenario(t, h, sc) })
	res.Duration = time.Since(began)
	res.Messages = t.messages()
	switch {
	case t.Failed():
		res.Outcome = OutcomeFail
	case t.isSkipped():
		res.Outcome = OutcomeSkip
	default:
		res.Outcome = OutcomePass
	}
	return res
}

// suiteT is the TB of one scenario run by RunSuite.
type suiteT struct {
	name   string
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	failed   bool
	skipped  bool
	msgs     []string
	cleanups []func()
}

// newSuiteT returns the TB of one scenario.
func newSuiteT(parent context.Context, name string) *suiteT {
	ctx, cancel := context.WithCancel(parent)
	return &suiteT{name: name, ctx: ctx, cancel: cancel}
}

// run calls body in a new goroutine and waits for it and for the cleanups,
// which run (last registered first) after the context is cancelled, each in
// its own goroutine so that a FailNow there ends only that cleanup.
func (t *suiteT) run(body func()) {
	t.guarded(body)
	t.cancel()
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		t.guarded(f)
	}
}

// guarded runs f in a new goroutine, waits for it, and records a panic as
// a failure.
func (t *suiteT) guarded(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		f()
	}()
	<-done
}

// record appends a message.
func (t *suiteT) record(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msgs = append(t.msgs, fmt.Sprintf(format, args...))
}

// messages returns a copy of the messages.
func (t *suiteT) messages() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.msgs...)
}

// isSkipped reports whether the scenario skipped itself.
func (t *suiteT) isSkipped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.skipped
}

// Helper implements TB; it does nothing.
func (t *suiteT) Helper() {}

// Name implements TB.
func (t *suiteT) Name() string { return t.name }

// Logf implements TB.
func (t *suiteT) Logf(format string, args ...any) { t.record(format, args...) }

// Errorf implements TB: it records the message and marks the scenario
// failed.
func (t *suiteT) Errorf(format string, args ...any) {
	t.record(format, args...)
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

// Fatalf implements TB: Errorf, then FailNow.
func (t *suiteT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	t.FailNow()
}

// FailNow implements TB: it marks the scenario failed and ends the calling
// goroutine, which must be the scenario's own.
func (t *suiteT) FailNow() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	runtime.Goexit()
}

// Failed implements TB.
func (t *suiteT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

// Skipf implements TB: it records the reason, marks the scenario skipped
// and ends the calling goroutine, which must be the scenario's own.
func (t *suiteT) Skipf(format string, args ...any) {
	t.record(format, args...)
	t.mu.Lock()
	t.skipped = true
	t.mu.Unlock()
	runtime.Goexit()
}

// Cleanup implements TB.
func (t *suiteT) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// Context implements TB: it is cancelled when the scenario ends, before
// its cleanups run.
func (t *suiteT) Context() context.Context { return t.ctx }
