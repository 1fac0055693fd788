package etcdstore

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
)

// BenchmarkOwnerLeaseRenewal measures the ways to renew an owner lease
// side by side, in the same run, on the same member and client, at 1, 16
// and 64 callers (docs/sessions.md, docs/performance.md):
//
//	rewrite     RenewOwnerLease: KeepAliveOnce ∥ one guarded Txn rewriting
//	            the owner key (the store-level renewal)
//	keepalive   a kept lease's Renew (KeepOwnerLease): one request on the
//	            kept lease's keep-alive stream, no write (the session's path
//	            on etcd)
//	raw-once    a bare KeepAliveOnce on a raw lease
//	raw-stream  one request and its answer on a long-lived LeaseKeepAlive
//	            stream per caller (what a keep-alive stream costs)
//	raw-once+get  a bare KeepAliveOnce ∥ a Get of a key (the price of
//	            checking the owner key on every renewal instead of watching it)
//
// For each it reports calls/s, latency, requests per call, and, from the
// member's own metrics, Raft proposals per call and watch events the
// member sent per call (one watcher on the store's whole root, as every
// auto-connect node keeps today). The variants run in turn, forward then
// backward, half of the calls each time, so that drift falls on all alike.
func BenchmarkOwnerLeaseRenewal(b *testing.B) {
	var client *clientv3.Client
	for _, callers := range benchCallers() {
		var rw *renewalWorld
		b.Run(fmt.Sprintf("callers=%d", callers), func(sb *testing.B) {
			if client == nil {
				client = benchClient(benchTB{B: sb, parent: b})
			}
			if rw == nil {
				rw = newRenewalWorld(benchTB{B: sb, parent: b}, client, callers)
			}
			rw.run(sb)
		})
	}
}

// renewalVariant is one way to renew.
type renewalVariant struct {
	name string
	side benchSide
	// requests, when set, overrides the recorder's count (a stream message
	// is not a request the recorder sees).
	requestsPerCall float64
}

// renewalWorld holds one lease per caller for every variant.
type renewalWorld struct {
	w       *benchWorld
	callers int
	metrics string
	events  atomic.Int64
	// seen is the header revision of the watcher's last response (events
	// or a progress notification).
	seen     atomic.Int64
	notify   chan struct{} // a value after a response
	variants []renewalVariant
}

func newRenewalWorld(tb fixtureTB, client *clientv3.Client, callers int) *renewalWorld {
	ctx := tb.Context()
	w := newBenchWorld(tb, client)
	rw := &renewalWorld{w: w, callers: callers, metrics: client.Endpoints()[0] + "/metrics", notify: make(chan struct{}, 1)}

	// One watcher of the store's whole root, as every node's change watch.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	tb.Cleanup(cancel)
	wch := client.Watch(wctx, w.s.layout.Root(), clientv3.WithPrefix())
	go func() {
		for resp := range wch {
			rw.events.Add(int64(len(resp.Events)))
			rw.seen.Store(resp.Header.Revision)
			select {
			case rw.notify <- struct{}{}:
			default:
			}
		}
	}()

	// The kept leases live in a second store on the same root that renews
	// on keep-alive streams, as in production (the world's store has a
	// recording Lease, which makes kept leases use KeepAliveOnce).
	ks, err := New(client, Options{Root: w.s.layout.Root(), MinLeaseSeconds: benchLeaseSeconds, KV: w.rec})
	must(tb, err)

	rewrite := make([]location.OwnerToken, callers)
	kept := make([]location.KeptOwnerLease, callers)
	rawLeases := make([]clientv3.LeaseID, callers)
	streams := make([]pb.Lease_LeaseKeepAliveClient, callers)
	getKeys := make([]string, callers)
	for c := range callers {
		tok, err := claimFor(ctx, w.s, fmt.Sprintf("rewrite-%02d", c))
		must(tb, err)
		rewrite[c] = tok
		tok, err = claimFor(ctx, ks, fmt.Sprintf("keep-%02d", c))
		must(tb, err)
		res, k, err := ks.KeepOwnerLease(ctx, tok, time.Minute)
		must(tb, err)
		must(tb, renewed(res, nil))
		tb.Cleanup(k.Close)
		kept[c] = k
		g, err := w.rawLease.Grant(ctx, benchLeaseSeconds)
		must(tb, err)
		rawLeases[c] = g.ID
		s, err := pb.NewLeaseClient(client.ActiveConnection()).LeaseKeepAlive(wctx)
		must(tb, err)
		streams[c] = s
		getKeys[c] = w.rawRoot + fmt.Sprintf("owner/raw-%02d", c)
		_, err = client.Put(ctx, getKeys[c], "v", clientv3.WithLease(g.ID))
		must(tb, err)
	}
	rawOnce := func(ctx context.Context, c int) error {
		ka, err := w.rawLease.KeepAliveOnce(ctx, rawLeases[c])
		if err == nil && ka.TTL <= 0 {
			err = fmt.Errorf("lease %x expired", rawLeases[c])
		}
		return err
	}
	rawKV := w.raw
	rw.variants = []renewalVariant{
		{name: "rewrite", side: benchSide{rec: w.rec, call: func(ctx context.Context, c int) error {
			return renewed(w.s.RenewOwnerLease(ctx, rewrite[c], time.Minute))
		}}},
		{name: "keepalive", requestsPerCall: 1, side: benchSide{rec: w.rec, call: func(ctx context.Context, c int) error {
			return renewed(kept[c].Renew(ctx))
		}}},
		{name: "raw-once", side: benchSide{rec: w.raw, call: rawOnce}},
		{name: "raw-stream", requestsPerCall: 1, side: benchSide{rec: w.raw, call: func(_ context.Context, c int) error {
			if err := streams[c].Send(&pb.LeaseKeepAliveRequest{ID: int64(rawLeases[c])}); err != nil {
				return err
			}
			resp, err := streams[c].Recv()
			if err == nil && resp.TTL <= 0 {
				err = fmt.Errorf("lease %x expired", rawLeases[c])
			}
			return err
		}}},
		{name: "raw-once+get", side: benchSide{rec: w.raw, call: func(ctx context.Context, c int) error {
			errc := make(chan error, 1)
			go func() {
				_, err := rawKV.Get(ctx, getKeys[c])
				errc <- err
			}()
			err := rawOnce(ctx, c)
			if gerr := <-errc; err == nil {
				err = gerr
			}
			return err
		}}},
	}
	// The set-up's own writes (claims, kept leases) must not count as the
	// first phase's events, however late the watcher receives them.
	rw.catchUp(tb, wctx)
	return rw
}

// catchUp waits (at most ten seconds) until the watcher has received
// everything up to the current revision, asking the member for progress
// notifications.
func (rw *renewalWorld) catchUp(tb fixtureTB, wctx context.Context) {
	tb.Helper()
	resp, err := rw.w.client.Get(wctx, "catch-up-probe")
	must(tb, err)
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for rw.seen.Load() < resp.Header.Revision {
		must(tb, rw.w.client.RequestProgress(wctx))
		retry := time.NewTimer(100 * time.Millisecond)
		select {
		case <-rw.notify:
		case <-retry.C:
		case <-deadline.C:
			tb.Fatalf("renewal world: the watcher is still at revision %d of %d", rw.seen.Load(), resp.Header.Revision)
		}
		retry.Stop()
	}
}

// renewed checks that a renewal answered renewed.
func renewed(res location.OwnerLeaseRenewResult, err error) error {
	if err == nil && res.Kind != location.KindRenewed {
		err = fmt.Errorf("renew answered %v", res.Kind)
	}
	return err
}

func must(tb fixtureTB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%v", err)
	}
}

// renewalResult is what one variant measured.
type renewalResult struct {
	sideResult
	proposals, events, sent float64
}

func (rw *renewalWorld) run(b *testing.B) {
	ctx := context.Background()
	b.StopTimer()
	perCaller := (b.N + rw.callers - 1) / rw.callers
	halves := [2]int{perCaller / 2, perCaller - perCaller/2}
	results := make([]renewalResult, len(rw.variants))
	phase := func(i, n int) {
		v := rw.variants[i]
		before := rw.counters(b)
		events := rw.events.Load()
		timed := v.name == "keepalive" // the benchmark's own ns/op
		if timed {
			b.StartTimer()
		}
		res, err := runPhase(ctx, v.side, rw.callers, n)
		if timed {
			b.StopTimer()
		}
		if err != nil {
			b.Fatalf("%s: %v", v.name, err)
		}
		// The watcher's events of the phase arrive within moments.
		rw.settle(events, res.calls, v.name)
		after := rw.counters(b)
		if v.requestsPerCall > 0 {
			res.requests = int(v.requestsPerCall * float64(res.calls))
		}
		results[i].add(res)
		results[i].proposals += after.proposals - before.proposals
		results[i].sent += after.events - before.events
		results[i].events += float64(rw.events.Load() - events)
		if err := rw.w.compact(ctx); err != nil {
			b.Fatalf("compact: %v", err)
		}
	}
	for i := range rw.variants {
		phase(i, halves[0])
	}
	for i := len(rw.variants) - 1; i >= 0; i-- {
		phase(i, halves[1])
	}
	keep, rewrite := results[rw.index("keepalive")], results[rw.index("rewrite")]
	b.ReportMetric(float64(keep.wall.Nanoseconds())/float64(keep.calls), "ns/op")
	for i, v := range rw.variants {
		r := results[i]
		calls := float64(r.calls)
		b.ReportMetric(r.callsPerSecond(), v.name+"-ops/s")
		b.ReportMetric(r.percentileMs(0.50), v.name+"-p50-ms")
		b.ReportMetric(r.percentileMs(0.99), v.name+"-p99-ms")
		b.ReportMetric(float64(r.requests)/calls, v.name+"-rpc/op")
		b.ReportMetric(r.proposals/calls, v.name+"-proposals/op")
		b.ReportMetric(r.events/calls, v.name+"-watch-events/op")
		b.ReportMetric(r.sent/calls, v.name+"-events-sent/op")
	}
	b.ReportMetric(rewrite.wall.Seconds()/keep.wall.Seconds(), "keepalive-speedup")
}

// index returns the position of the named variant.
func (rw *renewalWorld) index(name string) int {
	for i, v := range rw.variants {
		if v.name == name {
			return i
		}
	}
	panic("no renewal variant " + name)
}

// settle waits (at most a few seconds) until the watcher has seen the
// events a phase of rewrites made, so that they count in their own phase.
func (rw *renewalWorld) settle(from int64, calls int, name string) {
	if name != "rewrite" {
		return
	}
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for rw.events.Load()-from < int64(calls) {
		select {
		case <-rw.notify:
		case <-deadline.C:
			return
		}
	}
}

// memberCounters are the member's counters the benchmark reads.
type memberCounters struct{ proposals, events float64 }

// counters reads the member's Raft proposals committed and watch events
// sent, from its metrics endpoint (the process's registry: the shared and
// private members of one test binary add up, but only one is busy).
func (rw *renewalWorld) counters(b *testing.B) memberCounters {
	resp, err := http.Get(rw.metrics)
	if err != nil {
		b.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	var c memberCounters
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "etcd_server_proposals_committed_total":
			c.proposals += v
		case "etcd_debugging_mvcc_events_total":
			c.events += v
		}
	}
	return c
}

// TestOwnerLeaseRenewalVariants runs each renewal of the benchmark a few
// times (make test keeps it working) and checks what the benchmark
// measures: a kept renewal is one request and sends no watch event, a
// rewrite sends one to a watcher of the store's root.
func TestOwnerLeaseRenewalVariants(t *testing.T) {
	rw := newRenewalWorld(t, etcdtest.Connect(t), 2)
	for _, v := range rw.variants {
		events := rw.events.Load()
		res, err := runPhase(t.Context(), v.side, rw.callers, 3)
		require.NoError(t, err, v.name)
		switch v.name {
		case "rewrite":
			rw.settle(events, res.calls, v.name)
			require.Equal(t, int64(res.calls), rw.events.Load()-events, "a rewrite is one watch event")
			require.Equal(t, 2*res.calls, res.requests, "KeepAliveOnce ∥ Txn")
		case "keepalive":
			require.Zero(t, res.requests, "no KV or Lease request: one message on the kept lease's stream")
		}
	}
	// Every variant ran; a last rewrite flushes the watch, so that the
	// kept renewals are known to have sent nothing.
	events := rw.events.Load()
	keep := rw.variants[rw.index("keepalive")]
	_, err := runPhase(t.Context(), keep.side, rw.callers, 5)
	require.NoError(t, err)
	rewrite := rw.variants[rw.index("rewrite")]
	res, err := runPhase(t.Context(), rewrite.side, 1, 1)
	require.NoError(t, err)
	rw.settle(events, res.calls, "rewrite")
	require.Equal(t, int64(1), rw.events.Load()-events, "the kept renewals sent no watch event")
}
