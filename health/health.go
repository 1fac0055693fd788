package health

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a check whose Timeout is 0. Kubernetes' default
// probe timeout is one second: set the probe's timeoutSeconds to at least
// 2, so that a check that times out is reported with its reason rather
// than as a probe timeout.
const DefaultTimeout = time.Second

// PingCheck is the name of the built-in check that always passes: the
// process serves HTTP. It counts for liveness and readiness.
const PingCheck = "ping"

// Probe is one of the two probes.
type Probe string

// Probes.
const (
	Liveness  Probe = "livez"
	Readiness Probe = "readyz"
)

// Check is one health check.
type Check struct {
	// Name names the check in reports and in its path (/readyz/<name>):
	// letters, digits, '-', '_' and '.'; unique within a Handler.
	Name string
	// Run returns nil when healthy, else why not, in words an operator can
	// act on. It must return soon after ctx ends.
	Run func(ctx context.Context) error
	// Timeout bounds Run (its context ends then); 0 means DefaultTimeout.
	// A check still running a quarter of the timeout later fails as not
	// answering.
	Timeout time.Duration
	// Liveness makes the check count for /livez too. Set it only for a
	// condition that restarting the process fixes (see the package
	// documentation); every check counts for /readyz.
	Liveness bool
}

// Result is one check's outcome.
type Result struct {
	Name string
	// Err is nil when the check passed.
	Err error
	// Took is how long it ran.
	Took time.Duration
}

// Report is the outcome of one probe: every check it ran, in the order
// they were given (ping first).
type Report struct {
	Probe   Probe
	Results []Result
}

// Healthy reports whether every check passed.
func (r Report) Healthy() bool {
	for _, res := range r.Results {
		if res.Err != nil {
			return false
		}
	}
	return true
}

// Handler runs the checks and answers the probes. Safe for concurrent use.
type Handler struct {
	checks []Check
}

// NewHandler returns a Handler of the checks (the built-in ping check
// first). A check without a name or Run, with a name that is not a path
// segment, or with a name given twice (ping included) is an error.
func NewHandler(checks ...Check) (*Handler, error) {
	all := append([]Check{{Name: PingCheck, Liveness: true, Run: func(context.Context) error { return nil }}}, checks...)
	seen := map[string]bool{}
	for i, c := range all {
		switch {
		case !validName(c.Name):
			return nil, fmt.Errorf("health: check %d: name %q must be letters, digits, '-', '_' or '.'", i, c.Name)
		case seen[c.Name]:
			return nil, fmt.Errorf("health: check %q is given twice", c.Name)
		case c.Run == nil:
			return nil, fmt.Errorf("health: check %q has no Run function", c.Name)
		case c.Timeout < 0:
			return nil, fmt.Errorf("health: check %q: timeout %v is negative", c.Name, c.Timeout)
		}
		seen[c.Name] = true
	}
	return &Handler{checks: all}, nil
}

// Run runs the checks of probe (all at once, each within its timeout) but
// those named in exclude, and reports them; only is a single check to run
// ("" for all of the probe's; it must count for the probe). An unknown
// name in only is an error.
func (h *Handler) Run(ctx context.Context, probe Probe, only string, exclude ...string) (Report, error) {
	var run []Check
	for _, c := range h.checks {
		if probe == Liveness && !c.Liveness || slices.Contains(exclude, c.Name) || only != "" && c.Name != only {
			continue
		}
		run = append(run, c)
	}
	if only != "" && len(run) == 0 {
		return Report{}, fmt.Errorf("health: no %s check named %q", probe, only)
	}
	rep := Report{Probe: probe, Results: make([]Result, len(run))}
	var wg sync.WaitGroup
	for i, c := range run {
		wg.Go(func() { rep.Results[i] = runCheck(ctx, c) })
	}
	wg.Wait()
	return rep, nil
}

// runCheck runs one check within its timeout; a panic is its error. The
// check's context ends at the timeout; a check that honours it answers
// with its own reason, and one still running a quarter of the timeout
// later is reported as not answering (its goroutine ends when it returns).
func runCheck(ctx context.Context, c Check) Result {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("the check panicked: %v", p)
			}
		}()
		done <- c.Run(cctx)
	}()
	wait, stop := context.WithTimeout(ctx, timeout+timeout/4)
	defer stop()
	var err error
	select {
	case err = <-done:
	case <-wait.Done():
		err = fmt.Errorf("no answer within %v: %w", timeout, context.Cause(cctx))
	}
	return Result{Name: c.Name, Err: err, Took: time.Since(start)}
}

// Install registers the handler on mux at /livez, /readyz and the paths of
// single checks below them.
func (h *Handler) Install(mux *http.ServeMux) {
	for _, p := range []string{"/livez", "/livez/", "/readyz", "/readyz/"} {
		mux.Handle(p, h)
	}
}

// ServeHTTP answers GET and HEAD on a path ending in /livez or /readyz (all
// the probe's checks) or /livez/<name>, /readyz/<name> (one check): 200
// and "ok" when every check passed, else 503 and one line per check,
// "[+]<name> ok" or "[-]<name> failed: <reason>", then "<probe> check
// failed". ?verbose lists every check also on success; ?exclude=<name>
// (repeatable) leaves checks out.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	probe, only, ok := parsePath(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	rep, err := h.Run(r.Context(), probe, only, q["exclude"]...)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	healthy := rep.Healthy()
	_, verbose := q["verbose"]
	if !healthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if healthy && !verbose {
		_, _ = fmt.Fprint(w, "ok")
		return
	}
	_, _ = fmt.Fprint(w, rep.Text())
}

// Text renders the report as ServeHTTP does with ?verbose.
func (r Report) Text() string {
	var b strings.Builder
	for _, res := range r.Results {
		if res.Err == nil {
			fmt.Fprintf(&b, "[+]%s ok\n", res.Name)
		} else {
			fmt.Fprintf(&b, "[-]%s failed: %v\n", res.Name, res.Err)
		}
	}
	if r.Healthy() {
		fmt.Fprintf(&b, "%s check passed\n", r.Probe)
	} else {
		fmt.Fprintf(&b, "%s check failed\n", r.Probe)
	}
	return b.String()
}

// parsePath finds the probe and the single check in a path.
func parsePath(path string) (Probe, string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	n := len(segs)
	switch {
	case n >= 1 && isProbe(segs[n-1]):
		return Probe(segs[n-1]), "", true
	case n >= 2 && isProbe(segs[n-2]) && segs[n-1] != "":
		return Probe(segs[n-2]), segs[n-1], true
	}
	return "", "", false
}

// validName reports whether a check name is a non-empty path segment of
// letters, digits, '-', '_' and '.'.
func validName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func isProbe(s string) bool { return s == string(Liveness) || s == string(Readiness) }
