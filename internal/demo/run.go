package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/meshnode"
)

// teardownTimeout bounds the cleanup of nodes left running by a failed or
// interrupted run.
const teardownTimeout = 10 * time.Second

// Store is what the demo needs of a store; *etcdstore.Store implements it.
type Store interface {
	location.Store
	location.MeshNodeChangeStamper
	location.ChangeWatcher
	// ExpireOwnerLease ends an owner's lease at once (the crash).
	ExpireOwnerLease(ctx context.Context, ownerID string) error
	// CollectGarbage removes the rows of owners whose lease is gone.
	CollectGarbage(ctx context.Context, opts etcdstore.GCOptions) (etcdstore.GCReport, error)
}

// StageResult is how one stage ended.
type StageResult struct {
	Name string
	// Outcome is "ok", "FAILED" or "skipped".
	Outcome string
	Took    time.Duration
	// Detail says what the stage reached (or why it failed).
	Detail string
}

// Summary is the result of a run.
type Summary struct {
	Stages []StageResult
	Took   time.Duration
}

// OK reports whether every stage reached its state.
func (s *Summary) OK() bool {
	for _, st := range s.Stages {
		if st.Outcome != outcomeOK {
			return false
		}
	}
	return len(s.Stages) > 0
}

// Stage outcomes.
const (
	outcomeOK      = "ok"
	outcomeFailed  = "FAILED"
	outcomeSkipped = "skipped"
)

// stage is one step of the demo.
type stage struct {
	name  string
	title string
	run   func(ctx context.Context) (string, error)
}

// runner is one demo run.
type runner struct {
	// ctx is the run's context; each stage runs in a child bounded by the
	// stage timeout.
	ctx     context.Context
	store   Store
	opts    Options
	out     *printer
	nodes   []*node
	actors  []*actor
	changed chan struct{}
	// byEndpoint names the node of each (normalised) endpoint.
	byEndpoint map[string]string
	// victim is the node that crashes; adopter takes over its actors.
	victim, adopter *node
	relocations     int
}

// Run runs the demo on store and returns its summary; the error names the
// first stage that did not reach its state. Every node it started is gone
// when it returns.
func Run(ctx context.Context, store Store, opts Options) (*Summary, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, store: store, opts: o, out: newPrinter(o.Out), changed: make(chan struct{}, 1), byEndpoint: map[string]string{}}
	for i := range o.Nodes {
		n := newNode(i + 1)
		r.nodes = append(r.nodes, n)
		r.byEndpoint[n.endpoint] = n.name
	}
	r.victim = r.nodes[o.Nodes/2]
	r.adopter = r.nodes[(o.Nodes/2+1)%o.Nodes]
	defer r.teardown(ctx)

	stages := []stage{
		{"join", fmt.Sprintf("%d nodes claim owner leases, publish descriptors and peer rows, and connect", o.Nodes), r.join},
		{"actors", fmt.Sprintf("%d actors are created through the authority API", o.Actors), r.createActors},
		{"relocate", "one actor moves to another node: capacity reservation, then compare-exchange to the new owner", r.relocate},
		{"crash", r.victim.name + " crashes: its loop stops without cleanup and its owner lease is revoked", r.crash},
		{"adopt", r.adopter.name + " adopts the crashed node's actors (relocation from a dead source)", r.adopt},
		{"gc", "the garbage collector removes the rows of the dead owner", r.collect},
		{"rejoin", r.victim.name + " restarts with a new lease and lifecycle generation", r.rejoin},
		{"shutdown", "every node leaves cleanly", r.shutdown},
	}
	if o.Keep {
		stages[len(stages)-1] = stage{"leave", "every node stops where it is: its rows stay and its lease runs out after the TTL", r.leave}
	}
	sum := &Summary{}
	began := time.Now()
	var failure error
	for i, st := range stages {
		if failure != nil {
			sum.Stages = append(sum.Stages, StageResult{Name: st.name, Outcome: outcomeSkipped})
			continue
		}
		r.out.linef("\n== %d/%d %s: %s", i+1, len(stages), st.name, st.title)
		t0 := time.Now()
		sctx, cancel := context.WithTimeout(ctx, o.StageTimeout)
		detail, err := st.run(sctx)
		cancel()
		res := StageResult{Name: st.name, Outcome: outcomeOK, Took: time.Since(t0), Detail: detail}
		if err != nil {
			res.Outcome, res.Detail = outcomeFailed, err.Error()
			failure = fmt.Errorf("stage %s: %w", st.name, err)
			r.out.linef("  FAILED: %v", err)
		}
		sum.Stages = append(sum.Stages, res)
	}
	sum.Took = time.Since(began)
	// The nodes a failed run left running stop before the summary, so that
	// no event of theirs is printed after it.
	r.teardown(ctx)
	r.writeSummary(sum)
	return sum, failure
}

// notify wakes a wait after a connection changed.
func (r *runner) notify() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// running returns the running nodes in order.
func (r *runner) running() []*node {
	var out []*node
	for _, n := range r.nodes {
		if n.state == nodeRunning {
			out = append(out, n)
		}
	}
	return out
}

// waitFor calls check until it reports done or the stage's time is up
// (ctx is the stage's context). It re-checks after every connection change
// and at a quarter of the polling interval otherwise (lease and row states
// have no push). An error of check ends the wait unless it is transient
// (see retry): the state is read again.
func (r *runner) waitFor(ctx context.Context, what string, check func(ctx context.Context) (bool, string, error)) error {
	tick := time.NewTicker(max(r.opts.PollingInterval/4, 5*time.Millisecond))
	defer tick.Stop()
	for {
		done, detail, err := check(ctx)
		switch {
		case err == nil && done:
			return nil
		case err != nil && permanent(err):
			return err
		case err != nil:
			detail = err.Error()
		}
		select {
		case <-ctx.Done():
			return r.timeUp(ctx, what, detail)
		case <-r.changed:
		case <-tick.C:
		}
	}
}

// timeUp is the error of a stage whose context ended: the run's own end,
// or the stage timeout.
func (r *runner) timeUp(ctx context.Context, what, detail string) error {
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: not reached within %v: %s (%w)", what, r.opts.StageTimeout, detail, context.Cause(ctx))
}

// checkFailed is a result the demo did not expect and that no retry can
// change: the stage fails at once.
type checkFailed struct{ error }

// failCheck returns a checkFailed error.
func failCheck(format string, args ...any) error { return checkFailed{fmt.Errorf(format, args...)} }

// permanent reports an error no retry can fix: a failed check or bad input.
func permanent(err error) bool {
	var cf checkFailed
	return errors.As(err, &cf) || errors.Is(err, location.ErrInvalidArgument)
}

// retry runs op until it succeeds, fails for good (permanent), or the
// stage's time is up: a store call that failed (an election, a lost
// answer whose outcome is unknown) or an answer that a retry may change is
// tried again after a short jittered wait. Every op the demo retries reads
// what an earlier attempt may have done before writing.
func (r *runner) retry(ctx context.Context, what string, op func(ctx context.Context) error) error {
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil || permanent(err) {
			return err
		}
		if ctx.Err() != nil {
			return r.timeUp(ctx, what, fmt.Sprintf("%v (after %d attempts)", err, attempt))
		}
		d := wait/2 + rand.N(wait/2+1)
		wait = min(2*wait, time.Second)
		r.out.eventf("%s failed (%v); retrying in %v", what, err, d.Round(time.Millisecond))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return r.timeUp(ctx, what, fmt.Sprintf("%v (after %d attempts)", err, attempt))
		case <-t.C:
		}
	}
}

// expected returns the target keys n should be connected to: every other
// running node that n dials.
func (r *runner) expected(n *node) []string {
	var want []string
	for _, o := range r.running() {
		if o != n && n.dials(o) {
			want = append(want, o.targetKey())
		}
	}
	slices.Sort(want)
	return want
}

// meshMismatch describes the first running node that is not joined with
// its peer row published, or whose connections differ from the expected
// ones, or returns "".
func (r *runner) meshMismatch() string {
	for _, n := range r.running() {
		if st := n.mn.State(); st.Phase != meshnode.PhaseJoined || !st.PeerRowPublished {
			return fmt.Sprintf("%s is %s (peer row published: %v)", n.name, st.Phase, st.PeerRowPublished)
		}
	}
	for _, n := range r.running() {
		got, want := n.exec.keys(), r.expected(n)
		if !slices.Equal(got, want) {
			return fmt.Sprintf("%s is connected to [%s], expected [%s]", n.name, r.keyNames(got), r.keyNames(want))
		}
	}
	return ""
}

// keyNames renders target keys as node names with their lifecycle.
func (r *runner) keyNames(targetKeys []string) string {
	var names []string
	for _, k := range targetKeys {
		name := k
		for _, n := range r.nodes {
			prefix := location.PeerRoleRouter.String() + "|" + n.rid.Hex() + "|"
			if gen, ok := strings.CutPrefix(k, prefix); ok {
				name = n.name + "#" + gen
			}
		}
		names = append(names, name)
	}
	return strings.Join(names, " ")
}

// links counts the mesh's connections (each dialed once).
func (r *runner) links() int {
	total := 0
	for _, n := range r.running() {
		total += len(n.exec.keys())
	}
	return total
}

// expectedLinks is the number of links of a full mesh of the running
// nodes.
func (r *runner) expectedLinks() int {
	k := len(r.running())
	return k * (k - 1) / 2
}

// waitMesh waits until every running node is connected exactly to the
// nodes it should dial.
func (r *runner) waitMesh(ctx context.Context) error {
	return r.waitFor(ctx, "mesh convergence", func(context.Context) (bool, string, error) {
		m := r.meshMismatch()
		return m == "", m, nil
	})
}

// converge waits for the mesh, reports it ("what: k of n links up") and
// prints the node table.
func (r *runner) converge(ctx context.Context, what string) error {
	if err := r.waitMesh(ctx); err != nil {
		return err
	}
	r.out.eventf("%s: %d of %d links up", what, r.links(), r.expectedLinks())
	return r.nodeTable(ctx)
}

// reportChange prints what one tick of n's reconciler changed.
func (r *runner) reportChange(n *node, c autoconnect.DesiredSetChange) {
	if len(c.ConnectedEndpoints) > 0 {
		r.out.eventf("%s connected to %s", n.name, r.endpointNames(c.ConnectedEndpoints))
	}
	if len(c.DisconnectedEndpoints) > 0 {
		r.out.eventf("%s disconnected from %s", n.name, r.endpointNames(c.DisconnectedEndpoints))
	}
}

// endpointNames renders endpoints as node names.
func (r *runner) endpointNames(eps []string) string {
	var names []string
	for _, ep := range eps {
		if name, ok := r.byEndpoint[ep]; ok {
			names = append(names, name)
		} else {
			names = append(names, ep)
		}
	}
	return strings.Join(names, ", ")
}

// teardown stops whatever a failed or interrupted run left running. After
// a failed stage each node leaves (its rows removed, its lease released),
// within a bounded time; an interrupted run (ctx ended) writes nothing
// more: its nodes stop as after a crash, their leases run out.
func (r *runner) teardown(ctx context.Context) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	graceful := ctx.Err() == nil
	for _, n := range r.nodes {
		_ = n.stop(tctx, graceful, nodeStopped)
	}
}

// errState is the error of a store answer the demo did not expect (a
// retry may change it: the demo reads the state again first).
func errState(what string, got any) error {
	return fmt.Errorf("%s answered %v", what, got)
}
