package integration

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/observe/etcdstats"
)

// runConfig describes one history: its clients, its length and the faults
// injected while it runs.
type runConfig struct {
	seed    uint64
	clients int
	ops     int           // calls per client
	pace    time.Duration // time between a client's calls
	faults  []faultType
	// opTimeout bounds one call; checkTimeout the linearizability check.
	opTimeout, checkTimeout time.Duration
	// strip and pairWrites make the store broken or racy (checker tests);
	// spotsOnly restricts the workload to spot claims and reads.
	strip      guardStrip
	pairWrites bool
	spotsOnly  bool
}

// runReport is what one history showed.
type runReport struct {
	ops, unknown, notApplied, invalid int
	faults                            map[faultType]int
	faultsMissed                      int
	lostInjected                      int
	result                            porcupine.CheckResult
	violations                        []string
	lostWrites, fenced                int
	checkedKeys, scanChecks           int
	// cache sums the clients' watch-cache counters (etcdstore.CacheStats).
	cache      cacheFigures
	modelSteps int
	duration   time.Duration
	failure    string
}

// storeFrozenNow is the store clock of every history: frozen, so that the
// model and the store report the same times, and owner leases end only when
// a call (or a fault) ends them.
func storeFrozenNow() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }

// worker is one client of the workload.
type worker struct {
	id     int
	client *clientv3.Client
	kv     *faultKV
	store  *etcdstore.Store
	gen    *generator
}

// harness is everything a history's faults act on.
type harness struct {
	cfg     runConfig
	tc      *testCluster
	root    string
	layout  keys.Layout
	hist    *history
	know    *knowledge
	workers []*worker
	side    *etcdstore.Store
	raw     *clientv3.Client
	ghost   int // the client id of fault-injector calls
	cancel  atomic.Bool
	rnd     *rand.Rand
	// faultsOver is set when the injector is done; clients go on past
	// their number of calls until then (up to four times as many).
	faultsOver atomic.Bool

	mu     sync.Mutex
	report *runReport
}

// violation records an invariant violation.
func (h *harness) violation(format string, args ...any) {
	h.mu.Lock()
	h.report.violations = append(h.report.violations, fmt.Sprintf(format, args...))
	h.mu.Unlock()
}

// randomRoot is a fresh root prefix.
func randomRoot(seed uint64) string {
	var b [4]byte
	_, _ = crand.Read(b[:])
	return fmt.Sprintf("/integration/%d-%s/", seed, hex.EncodeToString(b[:]))
}

// newStore makes a store of the history's root over client.
func (h *harness) newStore(client *clientv3.Client, kv clientv3.KV, minLease int64) (*etcdstore.Store, error) {
	now := storeFrozenNow()
	return etcdstore.New(client, etcdstore.Options{Root: h.root, Clock: func() time.Time { return now },
		KV: kv, ResolveTimeout: 2 * time.Second, MinLeaseSeconds: minLease})
}

// runHistory runs one history on tc and checks it.
func runHistory(ctx context.Context, tc *testCluster, cfg runConfig) *runReport {
	started := time.Now()
	rep := &runReport{faults: map[faultType]int{}}
	root := randomRoot(cfg.seed)
	layout, err := keys.NewLayout(root)
	if err != nil {
		rep.failure = err.Error()
		return rep
	}
	h := &harness{cfg: cfg, tc: tc, root: root, layout: layout, hist: newHistory(), know: newKnowledge(),
		ghost: cfg.clients, rnd: rand.New(rand.NewPCG(cfg.seed, 11)), report: rep}
	defer h.closeAll()
	if err := h.setUp(); err != nil {
		rep.failure = err.Error()
		return rep
	}

	var wg sync.WaitGroup
	for _, w := range h.workers {
		wg.Go(func() { h.runWorker(ctx, w) })
	}
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		h.injectFaults(ctx)
		h.faultsOver.Store(true)
	}()
	wg.Wait()
	<-faultsDone
	if err := h.finalReads(ctx); err != nil {
		rep.failure = err.Error()
		return rep
	}
	for _, w := range h.workers {
		rep.lostInjected += w.kv.lostCount()
		rep.cache.add(w.store.CacheStats())
	}
	rep.cache.add(h.side.CacheStats())
	h.check(ctx)
	rep.duration = time.Since(started)
	return rep
}

// setUp makes the workers' clients and stores and the injector's.
func (h *harness) setUp() error {
	for i := range h.cfg.clients {
		c, err := h.tc.client(i % len(h.tc.bridges))
		if err != nil {
			return err
		}
		kv := newFaultKV(c.KV, h.layout.OwnerPrefix(), h.cfg.seed*100+uint64(i))
		kv.strip = h.cfg.strip
		w := &worker{id: i, client: c, kv: kv,
			gen: &generator{rnd: rand.New(rand.NewPCG(h.cfg.seed, uint64(i))), know: h.know}}
		h.workers = append(h.workers, w)
		if w.store, err = h.newStore(c, kv, 0); err != nil {
			return err
		}
	}
	if h.cfg.pairWrites {
		b := &barrier{wait: 100 * time.Millisecond}
		for _, w := range h.workers {
			w.kv.meet = b
		}
	}
	raw, err := h.tc.directClient()
	if err != nil {
		return err
	}
	h.raw = raw
	h.side, err = h.newStore(raw, nil, 0)
	return err
}

// closeAll closes every client of the history.
func (h *harness) closeAll() {
	for _, w := range h.workers {
		if w.store != nil {
			_ = w.store.Close()
		}
		_ = w.client.Close()
	}
	if h.raw != nil {
		_ = h.raw.Close()
	}
}

// runWorker issues the client's calls, paced.
func (h *harness) runWorker(ctx context.Context, w *worker) {
	tick := time.NewTicker(h.cfg.pace)
	defer tick.Stop()
	for i := 0; i < 4*h.cfg.ops && (i < h.cfg.ops || !h.faultsOver.Load()); i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c := w.gen.next()
		if h.cfg.spotsOnly {
			c = w.gen.nextSpotRace(w.id)
		}
		timeout := h.cfg.opTimeout
		if h.cancel.Load() && w.gen.rnd.IntN(2) == 0 {
			timeout = time.Duration(2000+w.gen.rnd.IntN(30000)) * time.Microsecond
		}
		w.kv.beginCall()
		r := h.hist.do(ctx, w.id, c, func(ctx context.Context) (any, error) {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return c.run(cctx, w.store, leaseHooks{expire: w.store.ExpireOwnerLease})
		})
		r.fenced, r.fencedCommitted = w.kv.takeFired()
		r.silent = !w.kv.mayHaveApplied()
		if r.err == nil {
			h.know.learn(c, r.res)
		}
	}
}

// finalReads reads everything once the workload and the faults are over,
// recorded as calls of one more client (so the checker sees them too),
// retrying until the healed cluster answers.
func (h *harness) finalReads(ctx context.Context) error {
	var calls []call
	for _, o := range append(workloadOwners(), ttlOwner) {
		calls = append(calls, call{kind: opReadLease, owner: o})
	}
	for _, s := range workloadSpots() {
		calls = append(calls, call{kind: opResolveSpot, spotKey: location.SpotKey{MeshName: spotMesh, SpotID: s}})
	}
	for _, o := range workloadObjects() {
		calls = append(calls, call{kind: opReadAuthority, authKey: location.AuthorityKey(authKeyOf(objectKey(o)))})
	}
	calls = append(calls, call{kind: opListMeshNodes, mesh: workloadMesh}, call{kind: opListSpots, mesh: spotMesh},
		call{kind: opListAuthority}, call{kind: opListPeers, mesh: workloadMesh}, call{kind: opReadLiveness, owners: workloadOwners()})
	final := h.cfg.clients + 1
	for _, c := range calls {
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := h.hist.do(ctx, final, c, func(ctx context.Context) (any, error) {
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				return c.run(cctx, h.side, leaseHooks{})
			})
			if r.err == nil {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("final read %v: %w", c, r.err)
			}
		}
	}
	return nil
}

// finalRecords returns the last answered record of each final read, by
// the call's text.
func (h *harness) finalRecords() map[string]*record {
	out := map[string]*record{}
	for _, r := range h.hist.snapshot() {
		if r.client == h.cfg.clients+1 && r.err == nil {
			out[r.c.String()] = r
		}
	}
	return out
}

// check runs the linearizability check and the invariants.
func (h *harness) check(ctx context.Context) {
	records := h.hist.snapshot()
	rep := h.report
	for _, r := range records {
		switch r.classify() {
		case classOK:
			rep.ops++
		case classUnknown:
			rep.ops++
			rep.unknown++
		case classNotApplied:
			rep.notApplied++
		case classInvalid:
			rep.invalid++
			h.violation("the store refused a workload call as invalid: %v: %v", r.c, r.err)
		}
	}
	stats := &modelStats{}
	model := newModel(modelConfig{now: storeFrozenNow()}, stats)
	ops := operations(records)
	res, info := porcupine.CheckOperationsVerbose(model, ops, h.cfg.checkTimeout)
	rep.result = res
	rep.modelSteps = stats.steps
	switch res {
	case porcupine.Illegal:
		h.violation("linearizability: not linearizable\n%s", diagnose(model, stats, ops, info, records))
	case porcupine.Unknown:
		h.violation("linearizability: undecided after %v (%d steps)", h.cfg.checkTimeout, stats.steps)
	}
	h.checkLostWrites(records)
	h.checkFenced(records)
	h.checkLedgers(ctx, records)
	h.checkOwnerIndex(ctx)
}

// sortedByStart orders records by start time.
func sortedByStart(records []*record) []*record {
	out := append([]*record(nil), records...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// String summarises a report in one line.
func (r *runReport) String() string {
	var fs []string
	for f, n := range r.faults {
		fs = append(fs, fmt.Sprintf("%s×%d", f, n))
	}
	sort.Strings(fs)
	return fmt.Sprintf("%d ops (%d unknown, %d not applied), faults [%s], %d lost responses injected, check %s (%d steps), %d violations, %s",
		r.ops, r.unknown, r.notApplied, strings.Join(fs, " "), r.lostInjected, r.result, r.modelSteps,
		len(r.violations), r.duration.Round(time.Millisecond))
}

// cacheFigures are what the stores' watch caches did in a history: reads
// answered from memory, sent to etcd at once, or after a wait in vain, and
// ranges read again after a compaction.
type cacheFigures struct{ hits, misses, fallbacks, relists int64 }

// add adds one store's counters.
func (c *cacheFigures) add(st etcdstats.Cache) {
	c.hits += st.Hits
	c.misses += st.Misses - st.Fallbacks
	c.fallbacks += st.Fallbacks
	c.relists += st.Relists
}

// isScanExpired reports a location list's expired continuation.
func isScanExpired(err error) bool { return errors.Is(err, location.ErrScanExpired) }
