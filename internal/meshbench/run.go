package meshbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/meshnode"
	"github.com/zlink-systems/zlink-etcd/session"
)

// ErrNotConverged is wrapped by the error of a run whose nodes did not all
// agree with the live set within Options.Converge.
var ErrNotConverged = errors.New("meshbench: the mesh did not converge")

// leaveTimeout bounds the leaving of every node at the end of a run.
const leaveTimeout = 30 * time.Second

// Run sets up a mesh of opts.Nodes nodes, measures the steady state, one
// node joining and leaving and a rolling restart, and leaves: every node
// leaves (its rows removed, its lease released) before Run returns. It
// fails when the mesh does not converge within opts.Converge, when a node
// cannot join, or when etcd's metrics cannot be read.
func Run(ctx context.Context, opts Options) (res Result, err error) {
	o, err := opts.resolve()
	if err != nil {
		return Result{}, err
	}
	h := &harness{o: o, counters: newClientCounters(o.Root), scrape: scraper{urls: o.MetricsURLs, client: o.HTTPClient},
		wake: make(chan struct{}, 1), live: map[location.RoutingID]int64{}, stores: map[location.RoutingID]*etcdstore.Store{}}
	defer func() {
		err = errors.Join(err, h.closeAll())
		o.HTTPClient.CloseIdleConnections()
	}()
	res = Result{Nodes: o.Nodes, At: time.Now().UTC(), EtcdInProcess: o.EtcdInProcess, EtcdMetrics: len(o.MetricsURLs) > 0}
	res.Load = append(res.Load, loadAverage())

	memBefore := goMemory()
	start := time.Now()
	o.OnProgress(fmt.Sprintf("mesh: %d nodes joining (%d at a time)", o.Nodes, o.JoinParallelism))
	for i := range o.Nodes {
		h.nodes = append(h.nodes, newSimNode(i+1))
	}
	if err := h.joinAll(ctx, h.nodes); err != nil {
		return res, err
	}
	if _, err := h.waitAgree(ctx, start, "set-up"); err != nil {
		return res, err
	}
	res.SetupSeconds = time.Since(start).Seconds()
	res.Steady.NodeMemoryBytes = float64(goMemory()-memBefore) / float64(o.Nodes)
	o.OnProgress(fmt.Sprintf("mesh: %d nodes agree after %.1fs", o.Nodes, res.SetupSeconds))

	if res.Steady, err = h.steady(ctx, res.Steady.NodeMemoryBytes); err != nil {
		return res, err
	}
	extra := newSimNode(o.Nodes + 1)
	if res.Join, err = h.change(ctx, "join", res.Steady.Rates, func(ctx context.Context) error {
		h.nodes = append(h.nodes, extra)
		return h.start(ctx, extra)
	}); err != nil {
		return res, err
	}
	if res.Leave, err = h.change(ctx, "leave", res.Steady.Rates, func(ctx context.Context) error {
		return h.stop(ctx, extra)
	}); err != nil {
		return res, err
	}
	if res.Rolling, err = h.rolling(ctx); err != nil {
		return res, err
	}
	res.Load = append(res.Load, loadAverage())
	res.LeaseLosses = h.leaseLosses.Load()
	return res, nil
}

// harness is one run.
type harness struct {
	o        Options
	counters *clientCounters
	scrape   scraper
	// wake is signalled after any recorder changed.
	wake chan struct{}

	nodes []*simNode

	// leaseLosses counts the nodes' lost leases (each followed by a
	// rejoin with the next lifecycle generation).
	leaseLosses atomic.Int64

	mu sync.Mutex
	// live maps every joined node's routing id to its lifecycle
	// generation; liveVersion counts its changes.
	live        map[location.RoutingID]int64
	liveVersion int64
	// stores are the running nodes' stores; retired sums the watch-cache
	// counters of the stores closed so far.
	stores  map[location.RoutingID]*etcdstore.Store
	retired cacheSample
}

// cacheSample sums the nodes' watch-cache counters (etcdstore.Store.CacheStats).
type cacheSample struct {
	Hits, Misses, Fallbacks int64
}

// add adds a store's counters.
func (c *cacheSample) add(s *etcdstore.Store) {
	st := s.CacheStats()
	c.Hits += st.Hits
	c.Misses += st.Misses
	c.Fallbacks += st.Fallbacks
}

// cache sums the watch-cache counters of every store the run made.
func (h *harness) cache() cacheSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	total := h.retired
	for _, s := range h.stores {
		total.add(s)
	}
	return total
}

// simNode is one simulated pod: its client, store and node, and the
// recorder its node's loop drives.
type simNode struct {
	name      string
	rid       location.RoutingID
	lifecycle int64

	client *clientv3.Client
	store  *etcdstore.Store
	rec    *recorder
	node   *meshnode.Node
}

// newSimNode returns node i (1-based), not started.
func newSimNode(i int) *simNode {
	name := fmt.Sprintf("node-%05d", i)
	return &simNode{name: name, rid: location.RoutingID(name)}
}

// descriptor is the node's mesh-node descriptor: a serving server with
// room for ten actors.
func (n *simNode) descriptor(mesh string) location.MeshNodeDescriptor {
	room := location.PopulationCapacity{Limit: 10}
	return location.MeshNodeDescriptor{
		MeshName: mesh, RID: n.rid, OwnerID: n.name, LifecycleGeneration: n.lifecycle + 1,
		Endpoint: "tcp://" + n.name + ".mesh.invalid:7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity:    location.Population{Actors: room, Spots: room},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights:        map[string]int64{mesh: 100},
		SpotTypes:             []string{}, ObjectCapabilities: []location.ObjectCapability{},
		State: location.StateServing, SecurityIdentity: "meshbench",
	}
}

// poke wakes the waiter after a recorder changed.
func (h *harness) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// start starts n as a new process would: a new client and store, and a
// node that joins with the next lifecycle generation.
func (h *harness) start(ctx context.Context, n *simNode) error {
	cli, err := h.o.Dial(ctx, []grpc.DialOption{grpc.WithStatsHandler(statsHandler{h.counters})})
	if err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	log := h.o.Logger.With("node", n.name)
	store, err := etcdstore.New(cli, etcdstore.Options{Root: h.o.Root, WrapKV: h.counters.wrapKV, Logger: log})
	if err != nil {
		_ = cli.Close()
		return fmt.Errorf("%s: %w", n.name, err)
	}
	ac := autoconnect.Options{}
	if h.o.PollingInterval > 0 {
		ac.PollingInterval = &h.o.PollingInterval
	}
	rec := newRecorder(n.rid, h.poke)
	jctx, cancel := context.WithTimeout(ctx, h.o.Converge)
	defer cancel()
	node, err := meshnode.Join(jctx, meshnode.Options{
		Store: store, Executor: rec, Descriptor: n.descriptor(h.o.Mesh),
		Session: h.o.Session, AutoConnect: ac, Logger: log,
		OnEvent: func(e meshnode.Event) { h.nodeEvent(n.rid, e) },
	})
	if err != nil {
		_ = store.Close()
		_ = cli.Close()
		return fmt.Errorf("%s: %w", n.name, err)
	}
	n.client, n.store, n.rec, n.node = cli, store, rec, node
	n.lifecycle = node.Incarnation().LifecycleGeneration
	h.mu.Lock()
	h.stores[n.rid] = store
	h.mu.Unlock()
	h.setLive(n.rid, n.lifecycle)
	return nil
}

// setLive records that node rid runs with lifecycle generation lc.
func (h *harness) setLive(rid location.RoutingID, lc int64) {
	h.mu.Lock()
	h.live[rid] = lc
	h.liveVersion++
	h.mu.Unlock()
	h.poke()
}

// nodeEvent follows a node's lease losses and rejoins: a node that lost
// its lease (a renewal not confirmed before its trust deadline, on a
// loaded machine) rejoins with the next lifecycle generation, which the
// live set then holds.
func (h *harness) nodeEvent(rid location.RoutingID, e meshnode.Event) {
	switch e.Kind {
	case meshnode.EventLeaseLost:
		h.leaseLosses.Add(1)
		h.o.Logger.Warn("meshbench: a node lost its lease", "node", string(rid), "error", e.Err)
	case meshnode.EventJoined:
		if e.Incarnation.Number < 2 {
			return // the first join: start records it
		}
		h.mu.Lock()
		_, running := h.live[rid]
		h.mu.Unlock()
		if running {
			h.setLive(rid, e.Incarnation.LifecycleGeneration)
		}
	}
}

// stop makes n leave (its rows removed, its lease released) and closes
// its client; it stops counting as live first.
func (h *harness) stop(ctx context.Context, n *simNode) error {
	if n.node == nil {
		return nil
	}
	h.mu.Lock()
	delete(h.live, n.rid)
	h.liveVersion++
	delete(h.stores, n.rid)
	h.retired.add(n.store)
	h.mu.Unlock()
	n.lifecycle = n.node.Incarnation().LifecycleGeneration // after any rejoin
	lctx, cancel := context.WithTimeout(ctx, leaveTimeout)
	defer cancel()
	err := n.node.Leave(lctx)
	_ = n.store.Close()
	_ = n.client.Close()
	n.node, n.store, n.client = nil, nil, nil
	if err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	return nil
}

// joinAll starts nodes, at most JoinParallelism at once.
func (h *harness) joinAll(ctx context.Context, nodes []*simNode) error {
	sem := make(chan struct{}, h.o.JoinParallelism)
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	var joined atomic.Int64
	step := int64(max(1, len(nodes)/10))
	for i, n := range nodes {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return errors.Join(append(errs, ctx.Err())...)
		}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = h.start(ctx, n)
			if done := joined.Add(1); done%step == 0 {
				h.o.OnProgress(fmt.Sprintf("mesh: %d/%d nodes joined (%d leases lost so far)", done, len(nodes), h.leaseLosses.Load()))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closeAll makes every running node leave, a few at a time.
func (h *harness) closeAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	defer cancel()
	sem := make(chan struct{}, max(h.o.JoinParallelism, 8))
	errs := make([]error, len(h.nodes))
	var wg sync.WaitGroup
	for i, n := range h.nodes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = h.stop(ctx, n)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// running returns the nodes that run now.
func (h *harness) running() []*simNode {
	var out []*simNode
	for _, n := range h.nodes {
		if n.node != nil {
			out = append(out, n)
		}
	}
	return out
}

// waitAgree waits until every running node agrees with the live set, and
// returns, per node, the time from since until its view last changed.
func (h *harness) waitAgree(ctx context.Context, since time.Time, what string) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, h.o.Converge)
	defer cancel()
	live, version := h.liveSet()
	nodes := h.running()
	pending := nodes
	report := time.NewTicker(10 * time.Second)
	defer report.Stop()
	for {
		if l, v := h.liveSet(); v != version {
			// A node rejoined with a new lifecycle generation: every
			// node has to agree with the new live set.
			live, version, pending = l, v, nodes
		}
		var still []*simNode
		for _, n := range pending {
			if ok, _ := n.rec.agrees(live); !ok {
				still = append(still, n)
			}
		}
		pending = still
		if len(pending) == 0 {
			// Every node agreed at some point: check them all at once.
			times := make([]time.Duration, 0, len(nodes))
			for _, n := range nodes {
				ok, at := n.rec.agrees(live)
				if !ok {
					pending = append(pending, n)
					continue
				}
				times = append(times, max(0, at.Sub(since)))
			}
			if len(pending) == 0 {
				return times, nil
			}
		}
		select {
		case <-h.wake:
		case <-report.C:
			h.o.OnProgress(fmt.Sprintf("mesh: %s: %d of %d nodes do not agree yet (%d leases lost so far)",
				what, len(pending), len(nodes), h.leaseLosses.Load()))
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %s: after %v, %d of %d nodes disagree with the live set of %d nodes (first: %s)",
				ErrNotConverged, what, time.Since(since).Round(time.Millisecond), len(pending), len(nodes), len(live), h.describe(pending[0], live))
		}
	}
}

// liveSet returns a copy of the live set and its version.
func (h *harness) liveSet() (map[location.RoutingID]int64, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	live := make(map[location.RoutingID]int64, len(h.live))
	for k, v := range h.live {
		live[k] = v
	}
	return live, h.liveVersion
}

// describe says how n's view differs from live.
func (h *harness) describe(n *simNode, live map[location.RoutingID]int64) string {
	n.rec.mu.Lock()
	defer n.rec.mu.Unlock()
	dialed := 0
	for rid := range live {
		if dials(n.rid, rid) {
			dialed++
		}
	}
	return fmt.Sprintf("%s has %d candidates (want %d) and %d connections (want %d)",
		n.name, len(n.rec.candidates), len(live)-1, len(n.rec.connected), dialed)
}

// sample is a reading of every counter at one time.
type sample struct {
	at     time.Time
	etcd   etcdSample
	client clientSample
	cpu    time.Duration
	cache  cacheSample
}

// sample reads etcd's metrics, the clients' counters and the process's
// CPU.
func (h *harness) sample(ctx context.Context) (sample, error) {
	e, err := h.scrape.scrape(ctx)
	if err != nil {
		return sample{}, err
	}
	cpu, _ := processCPU()
	return sample{at: time.Now(), etcd: e, client: h.counters.sample(), cpu: cpu, cache: h.cache()}, nil
}

// rates returns the rates between two samples.
func rates(a, b sample) Rates {
	secs := b.at.Sub(a.at).Seconds()
	if secs <= 0 {
		return Rates{}
	}
	e, c := b.etcd.sub(a.etcd), b.client.sub(a.client)
	return Rates{
		Proposals: e.Proposals / secs, Events: e.Events / secs, WatchMsgs: e.WatchMsgs / secs, EtcdSentB: e.SentBytes / secs,
		EtcdRange: e.Range / secs, EtcdTxn: e.Txn / secs, KeepAlives: e.KeepAlives / secs,
		WatchBytes: float64(c.WatchBytes) / secs, Reads: float64(c.Reads) / secs, Rows: float64(c.Rows) / secs,
		Writes: float64(c.Writes) / secs, CacheHits: float64(b.cache.Hits-a.cache.Hits) / secs,
		CacheMisses: float64(b.cache.Misses-a.cache.Misses) / secs, CacheFallbacks: float64(b.cache.Fallbacks-a.cache.Fallbacks) / secs,
	}
}

// counts returns the totals between two samples.
func counts(a, b sample) Counts {
	e, c := b.etcd.sub(a.etcd), b.client.sub(a.client)
	return Counts{Proposals: e.Proposals, Events: e.Events, WatchBytes: float64(c.WatchBytes), Reads: float64(c.Reads),
		Rows: float64(c.Rows), Writes: float64(c.Writes), EtcdRange: e.Range, EtcdTxn: e.Txn, RowsByRange: c.RowsByRange,
		CacheHits: float64(b.cache.Hits - a.cache.Hits), CacheMisses: float64(b.cache.Misses - a.cache.Misses),
		CacheFallbacks: float64(b.cache.Fallbacks - a.cache.Fallbacks)}
}

// excess returns c minus what the steady rates r give over secs.
func excess(c Counts, r Rates, secs float64) Counts {
	return Counts{
		Proposals: c.Proposals - r.Proposals*secs, Events: c.Events - r.Events*secs, WatchBytes: c.WatchBytes - r.WatchBytes*secs,
		Reads: c.Reads - r.Reads*secs, Rows: c.Rows - r.Rows*secs, Writes: c.Writes - r.Writes*secs,
		EtcdRange: c.EtcdRange - r.EtcdRange*secs, EtcdTxn: c.EtcdTxn - r.EtcdTxn*secs,
		CacheHits: c.CacheHits - r.CacheHits*secs, CacheMisses: c.CacheMisses - r.CacheMisses*secs,
		CacheFallbacks: c.CacheFallbacks - r.CacheFallbacks*secs,
	}
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// warmup is how long the mesh runs after the set-up before the steady
// state is measured: every session renews once (on etcd the first renewal
// of a kept lease marks its key, a write), and the loops poll once more.
func (h *harness) warmup() time.Duration {
	renew := h.o.Session.RenewInterval
	if renew == 0 {
		renew = session.DefaultRenewInterval
	}
	return renew + h.settle()
}

// steady measures the steady state for Options.Steady, after the warm-up.
func (h *harness) steady(ctx context.Context, memPerNode float64) (Steady, error) {
	h.o.OnProgress(fmt.Sprintf("mesh: warm-up for %v, then steady state for %v", h.warmup(), h.o.Steady))
	if err := pause(ctx, h.warmup()); err != nil {
		return Steady{}, err
	}
	a, err := h.sample(ctx)
	if err != nil {
		return Steady{}, err
	}
	if err := pause(ctx, h.o.Steady); err != nil {
		return Steady{}, err
	}
	b, err := h.sample(ctx)
	if err != nil {
		return Steady{}, err
	}
	secs := b.at.Sub(a.at).Seconds()
	nodes := float64(len(h.running()))
	st := Steady{Seconds: secs, Rates: rates(a, b), NodeMemoryBytes: memPerNode, EtcdRSSBytes: b.etcd.RSS,
		Watchers: b.etcd.Watchers, WatchStreams: b.etcd.WatchStreams}
	st.NodeCPUMillicores = (b.cpu - a.cpu).Seconds() * 1000 / secs / nodes
	if !h.o.EtcdInProcess {
		st.EtcdCPUMillicores = (b.etcd.CPU - a.etcd.CPU) * 1000 / secs
	}
	return st, nil
}

// settle is how long after convergence a change's window stays open, so
// that the reads and events that trail it are counted.
func (h *harness) settle() time.Duration {
	poll := h.o.PollingInterval
	if poll == 0 {
		poll = autoconnect.DefaultPollingInterval
	}
	return 2 * poll
}

// change measures one change (do): its counts above the steady rates and
// the time every node took to agree.
func (h *harness) change(ctx context.Context, what string, steady Rates, do func(context.Context) error) (Change, error) {
	h.o.OnProgress(fmt.Sprintf("mesh: one node: %s", what))
	a, err := h.sample(ctx)
	if err != nil {
		return Change{}, err
	}
	start := time.Now()
	if err := do(ctx); err != nil {
		return Change{}, fmt.Errorf("%s: %w", what, err)
	}
	times, err := h.waitAgree(ctx, start, what)
	if err != nil {
		return Change{}, err
	}
	if err := pause(ctx, h.settle()); err != nil {
		return Change{}, err
	}
	b, err := h.sample(ctx)
	if err != nil {
		return Change{}, err
	}
	secs := b.at.Sub(a.at).Seconds()
	raw := counts(a, b)
	return Change{WindowSeconds: secs, Raw: raw, Excess: excess(raw, steady, secs), Converge: percentiles(times)}, nil
}

// rolling restarts a tenth of the nodes one after the other, sampling
// etcd every second.
func (h *harness) rolling(ctx context.Context) (Rolling, error) {
	k := h.o.restarts()
	h.o.OnProgress(fmt.Sprintf("mesh: rolling restart of %d nodes", k))
	first, err := h.sample(ctx)
	if err != nil {
		return Rolling{}, err
	}
	sctx, stopSampling := context.WithCancel(ctx)
	samples := make(chan []sample, 1)
	go func() { samples <- h.sampleEverySecond(sctx, first) }()
	collect := func() []sample {
		stopSampling()
		return <-samples
	}

	var lastStart time.Time
	for i := range k {
		n := h.nodes[i*h.o.Nodes/k]
		if err := h.stop(ctx, n); err != nil {
			collect()
			return Rolling{}, fmt.Errorf("rolling restart: %w", err)
		}
		lastStart = time.Now()
		if err := h.start(ctx, n); err != nil {
			collect()
			return Rolling{}, fmt.Errorf("rolling restart: %w", err)
		}
		if (i+1)%max(1, k/10) == 0 || i+1 == k {
			h.o.OnProgress(fmt.Sprintf("mesh: rolling restart: %d/%d", i+1, k))
		}
	}
	times, err := h.waitAgree(ctx, lastStart, "rolling restart")
	all := collect()
	if err != nil {
		return Rolling{}, err
	}
	last, err := h.sample(ctx)
	if err != nil {
		return Rolling{}, err
	}
	r := Rolling{Restarted: k, Seconds: last.at.Sub(first.at).Seconds(), Converge: percentiles(times), Mean: rates(first, last)}
	all = append(all, last)
	for i := 1; i < len(all); i++ {
		w := rates(all[i-1], all[i])
		r.Peak.Proposals = max(r.Peak.Proposals, w.Proposals)
		r.Peak.Events = max(r.Peak.Events, w.Events)
		r.Peak.WatchMsgs = max(r.Peak.WatchMsgs, w.WatchMsgs)
		r.Peak.EtcdSentB = max(r.Peak.EtcdSentB, w.EtcdSentB)
		r.Peak.EtcdRange = max(r.Peak.EtcdRange, w.EtcdRange)
		r.Peak.EtcdTxn = max(r.Peak.EtcdTxn, w.EtcdTxn)
		r.Peak.KeepAlives = max(r.Peak.KeepAlives, w.KeepAlives)
		r.Peak.WatchBytes = max(r.Peak.WatchBytes, w.WatchBytes)
		r.Peak.Reads = max(r.Peak.Reads, w.Reads)
		r.Peak.Rows = max(r.Peak.Rows, w.Rows)
		r.Peak.Writes = max(r.Peak.Writes, w.Writes)
	}
	return r, nil
}

// sampleEverySecond samples once a second until ctx ends; the samples
// start with first. A failed scrape is skipped (the next window is
// longer).
func (h *harness) sampleEverySecond(ctx context.Context, first sample) []sample {
	out := []sample{first}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
			s, err := h.sample(ctx)
			if err == nil {
				out = append(out, s)
			}
		}
	}
}

// goMemory is the memory the Go runtime holds from the system (less what
// it returned), after a collection.
func goMemory() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.Sys - m.HeapReleased)
}

// loadAverage is the machine's load average as uptime prints it, or ""
// where /proc/loadavg does not exist.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
