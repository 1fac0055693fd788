package autoconnect

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/recorded"
	"github.com/zlink-systems/zlink-etcd/location"
)

// waitLimit bounds every wait of the tests for another goroutine; it is a
// failsafe against hangs, never a way to let time pass.
const waitLimit = 10 * time.Second

// ms returns n milliseconds as a pointer, for Options fields.
func ms(n int64) *time.Duration {
	d := time.Duration(n) * time.Millisecond
	return &d
}

// testError is a constant error.
type testError string

// Error implements error.
func (e testError) Error() string { return string(e) }

// errStoreDown is the store error the fakes return.
const errStoreDown = testError("store down")

// ---------------------------------------------------------------- recorder

// recorder is an ordered call log shared by the fakes of one test.
type recorder struct{ calls recorded.Log[string] }

// add appends one call.
func (r *recorder) add(format string, args ...any) { r.calls.Add(fmt.Sprintf(format, args...)) }

// all returns every call so far.
func (r *recorder) all() []string { return r.calls.All() }

// only returns the calls whose name (text before the first ':') is one of
// names.
func (r *recorder) only(names ...string) []string {
	out := []string{}
	for _, c := range r.all() {
		name, _, _ := strings.Cut(c, ":")
		if slices.Contains(names, name) {
			out = append(out, c)
		}
	}
	return out
}

// transport returns the calls that change connections: connect,
// disconnect and stale.
func (r *recorder) transport() []string { return r.only("connect", "disconnect", "stale") }

// reset forgets every call.
func (r *recorder) reset() { r.calls.Take() }

// ---------------------------------------------------------------- clock

// fakeClock is a manual Clock: time moves only with Advance or Set, and
// timers fire when it passes their deadline. Every new timer is also sent on
// armed, so a test can wait for the loop to arm one.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Duration
	timers []*fakeTimer
	armed  chan *fakeTimer
}

// fakeTimer is a timer of fakeClock.
type fakeTimer struct {
	clock   *fakeClock
	at      time.Duration
	delay   time.Duration
	c       chan struct{}
	stopped bool
	fired   bool
}

// newFakeClock returns a clock at 0.
func newFakeClock() *fakeClock { return &fakeClock{armed: make(chan *fakeTimer, 1024)} }

// Now implements Clock.
func (c *fakeClock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer implements Clock.
func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	t := &fakeTimer{clock: c, at: c.now + d, delay: d, c: make(chan struct{}, 1)}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	c.armed <- t
	return t
}

// Advance moves the clock by d and fires the timers that became due.
func (c *fakeClock) Advance(d time.Duration) { c.Set(c.Now() + d) }

// AdvanceMs moves the clock by n milliseconds.
func (c *fakeClock) AdvanceMs(n int64) { c.Advance(time.Duration(n) * time.Millisecond) }

// SetMs moves the clock to n milliseconds.
func (c *fakeClock) SetMs(n int64) { c.Set(time.Duration(n) * time.Millisecond) }

// Set moves the clock to now and fires the timers that became due.
func (c *fakeClock) Set(now time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
	for _, t := range c.timers {
		if !t.stopped && !t.fired && t.at <= now {
			t.fired = true
			t.c <- struct{}{}
		}
	}
}

// C implements Timer.
func (t *fakeTimer) C() <-chan struct{} { return t.c }

// Stop implements Timer.
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	if t.stopped || t.fired {
		return false
	}
	t.stopped = true
	return true
}

// isStopped reports whether Stop cancelled the timer.
func (t *fakeTimer) isStopped() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	return t.stopped
}

// fireAnyway delivers the timer's signal even if it was stopped (a timer
// that raced with its cancellation).
func (t *fakeTimer) fireAnyway() {
	select {
	case t.c <- struct{}{}:
	default:
	}
}

// waitArmed waits for the next timer the code under test arms.
func (c *fakeClock) waitArmed(t *testing.T) *fakeTimer {
	t.Helper()
	select {
	case tm := <-c.armed:
		return tm
	case <-time.After(waitLimit):
		t.Fatal("no timer was armed")
		return nil
	}
}

// requireNoArmed asserts that no timer is waiting in armed.
func (c *fakeClock) requireNoArmed(t *testing.T) {
	t.Helper()
	select {
	case tm := <-c.armed:
		t.Fatalf("unexpected timer armed with delay %v", tm.delay)
	default:
	}
}

// ---------------------------------------------------------------- executor

// fakeExec is the transport fake. Its capabilities are exposed by the
// wrapper types below, so that "absent" differs from "answers false".
type fakeExec struct {
	rec *recorder

	mu sync.Mutex
	// connectResults answers Connect calls in order; when empty, Connect
	// answers connectDefault.
	connectResults []bool
	connectDefault bool
	// connectHook, when set, runs inside Connect before it answers.
	connectHook func(ctx context.Context, t Target)
	// disconnectHook, when set, runs inside Disconnect.
	disconnectHook func(t Target)
	// closed answers IsDisconnected per probeID; absent means false.
	closed map[string]bool
	// handler is the registered OnDisconnected handler.
	handler func(string)
	// Arguments of the capability calls.
	staleArgs, expectArgs, notRequiredArgs [][]Target
}

// newFakeExec returns an executor fake whose Connect answers true.
func newFakeExec(rec *recorder) *fakeExec {
	return &fakeExec{rec: rec, connectDefault: true, closed: map[string]bool{}}
}

// probeID identifies one target value for IsDisconnected answers.
func probeID(t Target) string { return t.Key + "@" + t.OwnerID + "@" + t.Endpoint }

// setClosed programs IsDisconnected for t.
func (f *fakeExec) setClosed(t Target, closed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed[probeID(t)] = closed
}

// queueConnect appends answers for the next Connect calls.
func (f *fakeExec) queueConnect(results ...bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connectResults = append(f.connectResults, results...)
}

// setConnectDefault sets the answer once the queue is empty.
func (f *fakeExec) setConnectDefault(ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connectDefault = ok
}

// setConnectHook installs a hook that runs inside Connect.
func (f *fakeExec) setConnectHook(hook func(ctx context.Context, t Target)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connectHook = hook
}

// setDisconnectHook installs a hook that runs inside Disconnect.
func (f *fakeExec) setDisconnectHook(hook func(t Target)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disconnectHook = hook
}

// lost fires the registered OnDisconnected handler.
func (f *fakeExec) lost(endpoint string) {
	f.mu.Lock()
	h := f.handler
	f.mu.Unlock()
	if h != nil {
		h(endpoint)
	}
}

func (f *fakeExec) connect(ctx context.Context, t Target) bool {
	f.rec.add("connect:%s:%s", t.Endpoint, t.OwnerID)
	f.mu.Lock()
	hook := f.connectHook
	f.mu.Unlock()
	if hook != nil {
		hook(ctx, t)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.connectResults) > 0 {
		ok := f.connectResults[0]
		f.connectResults = f.connectResults[1:]
		return ok
	}
	return f.connectDefault
}

func (f *fakeExec) disconnect(t Target) {
	f.rec.add("disconnect:%s:%s", t.Endpoint, t.OwnerID)
	f.mu.Lock()
	hook := f.disconnectHook
	f.mu.Unlock()
	if hook != nil {
		hook(t)
	}
}

func (f *fakeExec) isDisconnected(t Target) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed[probeID(t)]
}

func (f *fakeExec) onDisconnected(h func(string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

func (f *fakeExec) stale(c []Target) {
	f.rec.add("stale:%d", len(c))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.staleArgs = append(f.staleArgs, c)
}

func (f *fakeExec) expect(c []Target) {
	f.rec.add("expect:%d", len(c))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expectArgs = append(f.expectArgs, c)
}

func (f *fakeExec) notRequired(c []Target) {
	f.rec.add("notRequired:%d", len(c))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notRequiredArgs = append(f.notRequiredArgs, c)
}

// plainExec has only the required methods.
type plainExec struct{ f *fakeExec }

func (e plainExec) Connect(ctx context.Context, t Target) bool { return e.f.connect(ctx, t) }
func (e plainExec) Disconnect(t Target)                        { e.f.disconnect(t) }

// noProbeExec has every capability except DisconnectProber.
type noProbeExec struct{ plainExec }

func (e noProbeExec) OnDisconnected(h func(string))   { e.f.onDisconnected(h) }
func (e noProbeExec) DisconnectStalePeers(c []Target) { e.f.stale(c) }
func (e noProbeExec) ReplaceNotRequired(c []Target)   { e.f.notRequired(c) }
func (e noProbeExec) ExpectPeers(c []Target)          { e.f.expect(c) }

// fullExec has every capability.
type fullExec struct{ noProbeExec }

func (e fullExec) IsDisconnected(t Target) bool { return e.f.isDisconnected(t) }

// wrapFull, wrapNoProbe and wrapPlain expose a fake with every capability,
// with all but the prober, or with none.
func wrapFull(f *fakeExec) Executor    { return fullExec{noProbeExec{plainExec{f}}} }
func wrapNoProbe(f *fakeExec) Executor { return noProbeExec{plainExec{f}} }
func wrapPlain(f *fakeExec) Executor   { return plainExec{f} }

// ---------------------------------------------------------------- source

// fakeSource is the peer resolver fake: it answers every listing with the
// standing rows or error, and counts calls.
type fakeSource struct {
	mu    sync.Mutex
	rows  []location.PeerLocation
	err   error
	calls int
	// hook, when set, runs at the start of every listing.
	hook func(ctx context.Context)
}

// set makes every later listing answer rows.
func (s *fakeSource) set(rows ...location.PeerLocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows, s.err = rows, nil
}

// fail makes every later listing fail with err.
func (s *fakeSource) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// count returns how many listings ran.
func (s *fakeSource) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// ListLivePeers implements PeerSource.
func (s *fakeSource) ListLivePeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	s.mu.Lock()
	hook := s.hook
	s.calls++
	s.mu.Unlock()
	if hook != nil {
		hook(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	out := make([]location.PeerLocation, len(s.rows))
	for i, r := range s.rows {
		out[i] = clonePeer(r)
	}
	return out, nil
}

// ---------------------------------------------------------------- publisher

// writeAnswer is one programmed answer of the publisher.
type writeAnswer struct {
	res location.WriteResult
	err error
}

// stored, conflict, stale and failed build publisher answers.
func stored(gen int64) writeAnswer {
	return writeAnswer{res: location.WriteResult{Status: location.Stored, Generation: gen}}
}
func conflict() writeAnswer {
	return writeAnswer{res: location.WriteResult{Status: location.RejectedConflict}}
}
func staleAnswer() writeAnswer {
	return writeAnswer{res: location.WriteResult{Status: location.IgnoredStale}}
}
func failed(err error) writeAnswer { return writeAnswer{err: err} }

// fakePublisher records writes and removes and answers them from queues
// (default: Stored with generation 5).
type fakePublisher struct {
	rec *recorder

	mu      sync.Mutex
	writes  []writeAnswer
	removes []writeAnswer
	// written and removed hold the arguments.
	written    []location.PeerLocation
	intents    []location.WriteIntent
	removedKey []location.PeerKey
	removedTok []location.OwnerToken
	// removeHook, when set, runs inside RemovePeer before it answers.
	removeHook func()
	// reads answers ListPeers calls in order (default: no rows); readFilters
	// holds their filters.
	reads       []readAnswer
	readFilters []location.PeerFilter
}

// readAnswer is one programmed ListPeers answer of the publisher.
type readAnswer struct {
	rows []location.PeerLocation
	err  error
}

// queueRead appends answers for the next ListPeers calls.
func (p *fakePublisher) queueRead(a ...readAnswer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads = append(p.reads, a...)
}

// ListPeers implements PeerLister: the read-back of the local row.
func (p *fakePublisher) ListPeers(_ context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	p.rec.add("read:%s", f.NodeRID)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readFilters = append(p.readFilters, f)
	var a readAnswer
	if len(p.reads) > 0 {
		a, p.reads = p.reads[0], p.reads[1:]
	}
	return a.rows, a.err
}

// queueWrite appends answers for the next UpdatePeer calls.
func (p *fakePublisher) queueWrite(a ...writeAnswer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes = append(p.writes, a...)
}

// queueRemove appends answers for the next RemovePeer calls.
func (p *fakePublisher) queueRemove(a ...writeAnswer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.removes = append(p.removes, a...)
}

// UpdatePeer implements PeerWriter.
func (p *fakePublisher) UpdatePeer(_ context.Context, row location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	p.rec.add("write:%s:%d", intent, row.Generation)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.written = append(p.written, clonePeer(row))
	p.intents = append(p.intents, intent)
	a := stored(5)
	if len(p.writes) > 0 {
		a, p.writes = p.writes[0], p.writes[1:]
	}
	return a.res, a.err
}

// RemovePeer implements PeerWriter.
func (p *fakePublisher) RemovePeer(_ context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	p.rec.add("remove:%s:%d", *k.Endpoint, owner.LeaseGeneration)
	p.mu.Lock()
	hook := p.removeHook
	p.removedKey = append(p.removedKey, k)
	p.removedTok = append(p.removedTok, owner)
	a := stored(owner.LeaseGeneration)
	if len(p.removes) > 0 {
		a, p.removes = p.removes[0], p.removes[1:]
	}
	p.mu.Unlock()
	if hook != nil {
		hook()
	}
	return a.res, a.err
}

// ---------------------------------------------------------------- sink

// fakeSink records events.
type fakeSink struct{ recorded.Log[DesiredSetChange] }

// DesiredSetChanged implements EventSink.
func (s *fakeSink) DesiredSetChanged(c DesiredSetChange) { s.Add(c) }

// ---------------------------------------------------------------- rows

// testMesh is the mesh of every scenario.
const testMesh = "play"

// rid returns a routing id pointer, nil for "".
func rid(s string) *location.RoutingID {
	if s == "" {
		return nil
	}
	r := location.RoutingID(s)
	return &r
}

// rowOpt modifies a test row.
type rowOpt func(*location.PeerLocation)

// gen sets the row generation.
func gen(g int64) rowOpt { return func(p *location.PeerLocation) { p.Generation = g } }

// drain marks the row draining.
func drain() rowOpt { return func(p *location.PeerLocation) { p.Draining = true } }

// md sets metadata pairs.
func md(kv ...string) rowOpt {
	return func(p *location.PeerLocation) {
		if p.Metadata == nil {
			p.Metadata = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Metadata[kv[i]] = kv[i+1]
		}
	}
}

// mesh sets the mesh name.
func mesh(name string) rowOpt { return func(p *location.PeerLocation) { p.MeshName = name } }

// row builds a peer row of generation 1 in testMesh.
func row(owner string, t location.AutoConnectType, role location.PeerRole, ridText, endpoint string, opts ...rowOpt) location.PeerLocation {
	p := location.PeerLocation{
		AutoConnectType: t,
		MeshName:        testMesh,
		NodeRID:         rid(ridText),
		Role:            role,
		Endpoint:        endpoint,
		OwnerID:         owner,
		Generation:      1,
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// router builds a RouteMesh Router row.
func router(owner, ridText, endpoint string, opts ...rowOpt) location.PeerLocation {
	return row(owner, location.AutoConnectRouteMesh, location.PeerRoleRouter, ridText, endpoint, opts...)
}

// local builds a Local in testMesh.
func local(t location.AutoConnectType, role location.PeerRole, ridText, endpoint string) Local {
	return Local{AutoConnectType: t, MeshName: testMesh, Role: role, NodeRID: rid(ridText), Endpoint: endpoint}
}

// localA is the default local: RouteMesh Router node-a at tcp://a.
func localA() Local {
	return local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "node-a", "tcp://a")
}

// localRowA is the local peer row of localA, owned by "oa".
func localRowA() *location.PeerLocation {
	r := router("oa", "node-a", "tcp://a")
	return &r
}

// endpoints lists the targets' endpoints.
func endpoints(ts []Target) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Endpoint)
	}
	return out
}

// keysOf lists the targets' keys.
func keysOf(ts []Target) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Key)
	}
	return out
}

// ---------------------------------------------------------------- harness

// harnessConfig configures a reconciler harness.
type harnessConfig struct {
	local       *Local
	localRow    *location.PeerLocation
	wrap        func(*fakeExec) Executor
	opts        Options
	publishOnly bool
	noSink      bool
}

// harness is a reconciler wired to fakes.
type harness struct {
	t     *testing.T
	rec   *recorder
	clock *fakeClock
	exec  *fakeExec
	src   *fakeSource
	pub   *fakePublisher
	sink  *fakeSink
	r     *Reconciler
}

// newHarness builds a reconciler over fakes (default: localA, no local row,
// every executor capability, default options).
func newHarness(t *testing.T, cfg harnessConfig) *harness {
	t.Helper()
	h := &harness{t: t, rec: &recorder{}, clock: newFakeClock(), src: &fakeSource{}, sink: &fakeSink{}}
	h.exec = newFakeExec(h.rec)
	h.pub = &fakePublisher{rec: h.rec}
	l := localA()
	if cfg.local != nil {
		l = *cfg.local
	}
	wrap := cfg.wrap
	if wrap == nil {
		wrap = wrapFull
	}
	opts := ReconcilerOptions{
		Local:       l,
		LocalRow:    cfg.localRow,
		Publisher:   h.pub,
		Source:      h.src,
		Executor:    wrap(h.exec),
		PublishOnly: cfg.publishOnly,
		Options:     cfg.opts,
		Clock:       h.clock,
		Logger:      discardLogger(),
	}
	if !cfg.noSink {
		opts.Events = h.sink
	}
	r, err := NewReconciler(opts)
	require.NoError(t, err)
	h.r = r
	return h
}

// tick runs one reconciler tick and requires no error.
func (h *harness) tick() {
	h.t.Helper()
	require.NoError(h.t, h.r.Tick(context.Background()))
}

// settle sets the source to rows and ticks once, then empties the sink and
// the recorder: what a test checks next is what its own change did.
func (h *harness) settle(rows ...location.PeerLocation) {
	h.t.Helper()
	h.src.set(rows...)
	h.tick()
	h.sink.Take()
	h.rec.reset()
}

// pendingKeys returns the keys of the pending disconnects.
func (h *harness) pendingKeys() []string {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	return keysOf(h.r.pending.list())
}

// failedEndpoints returns the failed endpoints, sorted.
func (h *harness) failedEndpoints() []string {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	out := []string{}
	for ep := range h.r.failed {
		out = append(out, ep)
	}
	slices.Sort(out)
	return out
}

// activeEndpoints returns the endpoints of the active targets in order.
func (h *harness) activeEndpoints() []string { return endpoints(h.r.ActiveTargets()) }

// discardLogger returns a logger that drops everything.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// connectedOf returns the connected lists of the given events.
func connectedOf(events []DesiredSetChange) [][]string {
	out := [][]string{}
	for _, e := range events {
		out = append(out, e.ConnectedEndpoints)
	}
	return out
}
