package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
)

// closeTimeout bounds the release of a run's leases.
const closeTimeout = 10 * time.Second

// Report is the result of a benchmark.
type Report struct {
	Clients, Conns, Total, MeshSize int
	Rate                            float64
	Results                         []Result
}

// Run sets up the workers under prefix (a scratch prefix the caller
// removes afterwards), then runs each operation through the store and as
// raw etcd requests. conns are the connections the clients share
// round-robin (at least one; Options.Conns is how many of them are used).
func Run(ctx context.Context, conns []*clientv3.Client, prefix string, storeOpts etcdstore.Options, opts Options) (*Report, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if len(conns) < o.Conns {
		return nil, fmt.Errorf("bench: %d connections given, %d needed", len(conns), o.Conns)
	}
	w := &world{opts: o, clients: conns[:o.Conns], rawPrefix: prefix + "raw/"}
	for _, c := range w.clients {
		so := storeOpts
		so.Root = prefix + "store/"
		s, err := etcdstore.New(c, so)
		if err != nil {
			return nil, err
		}
		w.stores = append(w.stores, s)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		w.close(cctx)
	}()
	fmt.Fprintf(o.Out, "bench: setting up %d clients (owner lease, descriptor, actor, authority record each) and a mesh of %d descriptors…\n", o.Clients, o.MeshSize)
	began := time.Now()
	if err := w.setup(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "bench: set up in %s\n", time.Since(began).Round(time.Millisecond))
	rep := &Report{Clients: o.Clients, Conns: o.Conns, Total: o.Total, MeshSize: o.MeshSize, Rate: o.Rate}
	ops := operations()
	for _, name := range o.Ops {
		op := ops[name]
		for _, sys := range []struct {
			name string
			call call
		}{{SystemStore, op.store}, {SystemRaw, op.raw}} {
			res, err := w.measure(ctx, name, sys.name, sys.call)
			if err != nil {
				return rep, err
			}
			rep.Results = append(rep.Results, res)
			fmt.Fprintf(o.Out, "bench: %-14s %-9s %d requests in %s (%.0f req/s, %d errors)\n", name, sys.name, res.Requests,
				res.Elapsed.Round(time.Millisecond), res.Throughput(), res.Errors)
		}
	}
	return rep, nil
}

// measure runs total requests of one call with every worker and collects
// the latencies.
func (w *world) measure(ctx context.Context, op, system string, c call) (Result, error) {
	res := Result{Op: op, System: system}
	stage := fmt.Sprintf("%s (%s)", op, system)
	var next atomic.Int64
	lim := newLimiter(w.opts.Rate)
	var mu sync.Mutex
	var wg sync.WaitGroup
	began := time.Now()
	for _, wk := range w.workers {
		wg.Go(func() {
			var lat []time.Duration
			errs, first := 0, ""
			for n := next.Add(1); n <= int64(w.opts.Total); n = next.Add(1) {
				w.opts.OnProgress(Progress{Stage: stage, Done: int(n - 1), Total: w.opts.Total})
				if err := lim.wait(ctx); err != nil {
					break
				}
				t0 := time.Now()
				err := c(ctx, w, wk)
				d := time.Since(t0)
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				lat = append(lat, d)
			}
			mu.Lock()
			defer mu.Unlock()
			res.Latencies = append(res.Latencies, lat...)
			res.Errors += errs
			if res.FirstError == "" {
				res.FirstError = first
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(began)
	res.Requests = len(res.Latencies) + res.Errors
	res.sortLatencies()
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("bench: %s (%s): %w", op, system, err)
	}
	return res, nil
}

// limiter spaces requests to a rate shared by every worker.
type limiter struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

// newLimiter returns a limiter for rate requests per second (0: none).
func newLimiter(rate float64) *limiter {
	if rate <= 0 {
		return &limiter{}
	}
	return &limiter{interval: time.Duration(float64(time.Second) / rate)}
}

// wait blocks until the caller's turn.
func (l *limiter) wait(ctx context.Context) error {
	if l.interval == 0 {
		return ctx.Err()
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	at := l.next
	l.next = l.next.Add(l.interval)
	l.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// OK reports whether no request failed.
func (r *Report) OK() bool {
	for _, res := range r.Results {
		if res.Errors > 0 {
			return false
		}
	}
	return true
}

// WriteTable writes the results: each operation's store row, then its raw
// row, then the store's cost relative to raw etcd.
func (r *Report) WriteTable(w io.Writer) error {
	rate := "unlimited"
	if r.Rate > 0 {
		rate = fmt.Sprintf("%.0f req/s", r.Rate)
	}
	if _, err := fmt.Fprintf(w, "\n%d clients over %d connection(s), %d requests per operation and system, rate %s, mesh of %d descriptors\n\n",
		r.Clients, r.Conns, r.Total, rate, r.MeshSize); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-14s  %-9s\tREQUESTS\tERRORS\tREQ/S\tAVG\tSTDDEV\tP50\tP90\tP99\tP99.9\tMAX\t\n", "OPERATION", "SYSTEM")
	raw := map[string]Result{}
	for _, res := range r.Results {
		if res.System == SystemRaw {
			raw[res.Op] = res
		}
	}
	for i, res := range r.Results {
		name := res.Op
		if i > 0 && r.Results[i-1].Op == res.Op {
			name = ""
		}
		fmt.Fprintf(tw, "%-14s  %-9s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, res.System, res.Requests, res.Errors, res.Throughput(),
			ms(res.Mean()), ms(res.Stddev()), ms(res.Percentile(50)), ms(res.Percentile(90)), ms(res.Percentile(99)),
			ms(res.Percentile(99.9)), ms(res.Max()))
		if base, ok := raw[res.Op]; ok && res.System == SystemRaw {
			var store *Result
			for j := range r.Results {
				if r.Results[j].Op == res.Op && r.Results[j].System == SystemStore {
					store = &r.Results[j]
				}
			}
			if store != nil {
				fmt.Fprintf(tw, "%-14s  %-9s\t\t\t%s\t%s\t\t%s\t%s\t%s\t\t\t\n", "", "zlink/raw", ratio(store.Throughput(), base.Throughput()),
					ratio(float64(store.Mean()), float64(base.Mean())), ratio(float64(store.Percentile(50)), float64(base.Percentile(50))),
					ratio(float64(store.Percentile(90)), float64(base.Percentile(90))), ratio(float64(store.Percentile(99)), float64(base.Percentile(99))))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range r.Results {
		if res.Errors > 0 {
			fmt.Fprintf(w, "%s (%s): %d errors, the first: %s\n", res.Op, res.System, res.Errors, strings.TrimSpace(res.FirstError))
		}
	}
	return nil
}

// ms renders a latency in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// ratio renders a/b as "×1.23", or "-" when b is 0.
func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("×%.2f", a/b)
}
