package perfdoc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Section is one generated table of docs/performance.md.
type Section struct {
	// ID names the section's markers: perf:ID.
	ID string
	// Raw is the name of its raw outputs: Raw-fsync-off.txt and
	// Raw-fsync-on.txt, or Raw.txt when fsync does not apply.
	Raw string
	// Modes are the fsync modes it is measured in: "off", "on", or "" for
	// a benchmark that does not touch etcd's disk.
	Modes []string
	// table writes the table from the section's outputs.
	table func(b *strings.Builder, outs []output)
}

// output is the raw output of one fsync mode of a section; ok is false
// when it was not measured.
type output struct {
	mode string
	file File
	ok   bool
}

// fsyncBoth are the modes of the benchmarks beside raw etcd.
var fsyncBoth = []string{"off", "on"}

// Sections returns every generated section, in the document's order.
func Sections() []Section {
	return []Section{
		{ID: "writes", Raw: "writes", Modes: fsyncBoth, table: pairTable(
			pairOp{"RenewOwnerLease", "`RenewOwnerLease`"},
			pairOp{"UpdateMeshNodeRevision", "`UpdateMeshNode` revision"},
			pairOp{"UpdatePeerRenew", "`UpdatePeer` renew"},
			pairOp{"UpdateSpotRenew", "`UpdateSpot` renew"},
			pairOp{"UpdateActorRenew", "`UpdateActor` renew"},
			pairOp{"CompareExchangeAuthorityPreserve", "`CompareExchangeAuthority` preserve"},
			pairOp{"ReserveCommit", "`Reserve` + `Commit`"},
		)},
		{ID: "keepalive", Raw: "writes", Modes: fsyncBoth, table: pairTable(
			pairOp{"RenewOwnerLeaseKeepAliveOnly", "`RenewOwnerLease` vs `KeepAliveOnce` alone"},
		)},
		{ID: "list", Raw: "list", Modes: fsyncBoth, table: pairTable(
			pairOp{"ListMeshNodes", "from the watch cache"},
			pairOp{"ListMeshNodesDirect", "cache off"},
		)},
		{ID: "remove", Raw: "remove", Modes: fsyncBoth, table: pairTable(
			pairOp{"RemoveAllByOwner", "`RemoveAllByOwner`, 10,000 rows"},
		)},
		{ID: "renewal", Raw: "renewal", Modes: fsyncBoth, table: renewalTable},
		{ID: "client", Raw: "client", Modes: []string{""}, table: clientTable},
		{ID: "reaction", Raw: "reaction", Modes: []string{"off"}, table: reactionTable},
		{ID: "tick", Raw: "tick", Modes: []string{""}, table: tickTable},
	}
}

// fileName is the raw output's name (without ".txt") of mode.
func (s Section) fileName(mode string) string {
	if mode == "" {
		return s.Raw
	}
	return s.Raw + "-fsync-" + mode
}

// outputs returns the section's outputs in raw, one per mode; measured is
// false when none exists.
func (s Section) outputs(raw Raw) (outs []output, measured bool) {
	for _, m := range s.Modes {
		f, ok := raw[s.fileName(m)]
		outs = append(outs, output{mode: m, file: f, ok: ok})
		measured = measured || ok
	}
	return outs, measured
}

// Render renders the section from raw: where and how each output was
// measured, then the table.
func (s Section) Render(raw Raw) string {
	outs, _ := s.outputs(raw)
	var b strings.Builder
	for _, o := range outs {
		b.WriteString(s.provenance(o))
	}
	b.WriteString("\n")
	s.table(&b, outs)
	return b.String()
}

// provenance is the list item that says where and how o was measured.
func (s Section) provenance(o output) string {
	label := "measured"
	if o.mode != "" {
		label = "fsync " + o.mode
	}
	if !o.ok {
		return fmt.Sprintf("* %s: not measured (no docs/perf/raw/%s.txt: run `make perf`)\n", label, s.fileName(o.mode))
	}
	c := o.file.Config
	procs := c["perf-gomaxprocs"]
	if len(o.file.Results) > 0 {
		// What the benchmarks ran with (their names' suffix), which a
		// container's CPU limit may have lowered below the header's CPUs.
		procs = strconv.Itoa(o.file.Results[0].Procs)
	}
	runs := fmt.Sprintf("`-benchtime %s -count %s`", c["perf-benchtime"], c["perf-count"])
	if n := c["perf-processes"]; n != "" {
		// scripts/perf.sh runs each count in a test process of its own.
		runs = fmt.Sprintf("`-benchtime %s`, %s runs in processes of their own", c["perf-benchtime"], n)
		if n == "1" {
			runs = fmt.Sprintf("`-benchtime %s`, 1 run in a process of its own", c["perf-benchtime"])
		}
	}
	if where := c["perf-etcd"]; where != "" && where != "-" {
		// scripts/perf.sh says where etcd ran: in a process of its own or
		// in the test process.
		runs += ", etcd " + where
	}
	line := fmt.Sprintf("* %s: %s at commit %s, %s, GOMAXPROCS %s, load average %s → %s, %s, %s s (`docs/perf/raw/%s.txt`)",
		label, c["perf-date"], c["perf-commit"], c["perf-go"], procs, c["perf-load-before"], c["perf-load-after"],
		runs, c["perf-seconds"], s.fileName(o.mode))
	if e := c["perf-exit"]; e != "" && e != "0" {
		line += fmt.Sprintf("; **the run failed (exit %s)**: missing rows were not measured", e)
	}
	return line + "\n"
}

// modeLabel is the fsync column's cell of o.
func modeLabel(o output) string {
	if o.mode == "" {
		return "n/a"
	}
	return o.mode
}

// subNamesOf returns the names below "Benchmark"+bench that any output
// has, in the order they run.
func subNamesOf(outs []output, bench string) []string {
	var subs []string
	for _, o := range outs {
		for _, sub := range o.file.subNames("Benchmark" + bench) {
			if !slices.Contains(subs, sub) {
				subs = append(subs, sub)
			}
		}
	}
	return subs
}

// row writes one table row.
func row(b *strings.Builder, cells ...string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// header writes a table's header row and its separator.
func header(b *strings.Builder, cells ...string) {
	row(b, cells...)
	b.WriteString(strings.Repeat("|---", len(cells)) + "|\n")
}

// pairOp is one benchmark beside its raw twin, and its label.
type pairOp struct{ bench, label string }

// pairTable renders benchmarks beside raw etcd (the harness's compare:
// ops/s, p50-ms, p99-ms, rpc/op, raw-*, ratio, cpu-ratio): one row per
// operation, number of callers and fsync mode.
func pairTable(ops ...pairOp) func(*strings.Builder, []output) {
	return func(b *strings.Builder, outs []output) {
		header(b, "Operation", "callers", "fsync", "store ops/s", "p50 / p99 ms", "raw ops/s", "raw p50 / p99 ms",
			"ratio (range)", "CPU ratio", "requests store / raw")
		for _, op := range ops {
			label := op.label
			for _, sub := range subNamesOf(outs, op.bench) {
				callers := strings.TrimPrefix(sub, "callers=")
				for _, o := range outs {
					runs := o.file.runs("Benchmark" + op.bench + "/" + sub)
					row(b, label, callers, modeLabel(o),
						median(runs, "ops/s"), median(runs, "p50-ms")+" / "+median(runs, "p99-ms"),
						median(runs, "raw-ops/s"), median(runs, "raw-p50-ms")+" / "+median(runs, "raw-p99-ms"),
						ratioCell(metric(runs, "ratio")), medianFixed2(runs, "cpu-ratio"),
						median(runs, "rpc/op")+" / "+median(runs, "raw-rpc/op"))
					label, callers = "", ""
				}
			}
		}
	}
}

// renewalVariants are BenchmarkOwnerLeaseRenewal's variants (the prefix
// of their metrics) and their labels; the first is the one the others are
// compared with.
var renewalVariants = []pairOp{
	{"rewrite", "`RenewOwnerLease` (rewrite)"},
	{"keepalive", "kept `Renew` (keep-alive)"},
	{"raw-once", "raw `KeepAliveOnce`"},
	{"raw-stream", "raw keep-alive stream"},
	{"raw-once+get", "raw `KeepAliveOnce` ∥ `Get`"},
}

// renewalTable renders BenchmarkOwnerLeaseRenewal: one row per variant,
// number of callers and fsync mode; "÷ rewrite" is the variant's calls per
// second over the rewrite's in the same run.
func renewalTable(b *strings.Builder, outs []output) {
	header(b, "Renewal", "callers", "fsync", "ops/s", "p50 / p99 ms", "requests", "Raft proposals", "watch events",
		"ops/s ÷ rewrite (range)")
	base := renewalVariants[0].bench
	subs := subNamesOf(outs, "OwnerLeaseRenewal")
	for _, v := range renewalVariants {
		label := v.label
		for _, sub := range subs {
			callers := strings.TrimPrefix(sub, "callers=")
			for _, o := range outs {
				runs := o.file.runs("BenchmarkOwnerLeaseRenewal/" + sub)
				var speedups []float64
				for _, r := range runs {
					if vs, ok := r.Metrics[v.bench+"-ops/s"]; ok && r.Metrics[base+"-ops/s"] > 0 {
						speedups = append(speedups, vs/r.Metrics[base+"-ops/s"])
					}
				}
				p := v.bench + "-"
				row(b, label, callers, modeLabel(o), median(runs, p+"ops/s"), median(runs, p+"p50-ms")+" / "+median(runs, p+"p99-ms"),
					median(runs, p+"rpc/op"), median(runs, p+"proposals/op"), median(runs, p+"watch-events/op"),
					ratioCell(spreadOf(speedups)))
				label, callers = "", ""
			}
		}
	}
}

// clientTable renders BenchmarkClientCPU (one caller) and
// BenchmarkClientCPUConcurrent (64): per operation and number of callers,
// the store's and the raw twin's allocations, bytes and CPU per call
// (medians).
func clientTable(b *strings.Builder, outs []output) {
	header(b, "Operation", "callers", "store allocs/op", "raw allocs/op", "store B/op", "raw B/op", "store CPU µs/call", "raw CPU µs/call")
	benches := []struct{ name, callers string }{{"BenchmarkClientCPU", "1"}, {"BenchmarkClientCPUConcurrent", "64"}}
	for _, o := range outs {
		var ops []string
		for _, bench := range benches {
			for _, sub := range o.file.subNames(bench.name) {
				if op, side, ok := strings.Cut(sub, "/"); ok && side == "store" && !slices.Contains(ops, op) {
					ops = append(ops, op)
				}
			}
		}
		for _, op := range ops {
			label := op
			for _, bench := range benches {
				store := o.file.runs(bench.name + "/" + op + "/store")
				raw := o.file.runs(bench.name + "/" + op + "/raw")
				if len(store) == 0 && len(raw) == 0 {
					continue
				}
				row(b, label, bench.callers, median(store, "allocs/op"), median(raw, "allocs/op"), median(store, "B/op"), median(raw, "B/op"),
					micros(store), micros(raw))
				label = ""
			}
		}
	}
}

// micros formats the median of cpu-ns/op in microseconds.
func micros(runs []Result) string {
	s, ok := metric(runs, "cpu-ns/op")
	if !ok {
		return notMeasured
	}
	return figure(s.median / 1000)
}

// reactionTable renders BenchmarkReaction: per mesh size and mode, the
// reaction's percentiles (medians over the runs).
func reactionTable(b *strings.Builder, outs []output) {
	header(b, "peers", "mode", "fsync", "join p50 / p99 ms", "revoke p50 / p99 ms", "write p50 ms", "runs")
	for _, o := range outs {
		for _, sub := range o.file.subNames("BenchmarkReaction") {
			peers, mode, _ := strings.Cut(strings.TrimPrefix(sub, "peers="), "/")
			runs := o.file.runs("BenchmarkReaction/" + sub)
			row(b, peers, mode, modeLabel(o), median(runs, "join-p50-ms")+" / "+median(runs, "join-p99-ms"),
				median(runs, "revoke-p50-ms")+" / "+median(runs, "revoke-p99-ms"), median(runs, "write-p50-ms"),
				fmt.Sprint(len(runs)))
		}
	}
}

// tickReads are BenchmarkTickCost's two ways of reading owners.
var tickReads = []string{"per_owner", "batched"}

// tickTable renders BenchmarkTickCost: per change and N, what a tick asks
// of the store, reading owners one at a time and batched (medians).
func tickTable(b *strings.Builder, outs []output) {
	header(b, "change", "N", "per owner: calls", "lease reads", "rows", "rows next tick",
		"batched: calls", "owners read", "rows", "rows next tick")
	for _, o := range outs {
		var cases []string
		for _, sub := range o.file.subNames("BenchmarkTickCost") {
			if _, c, ok := strings.Cut(sub, "/"); ok && !slices.Contains(cases, c) {
				cases = append(cases, c)
			}
		}
		for _, c := range cases {
			change, n, _ := strings.Cut(c, "/N=")
			if v, err := strconv.ParseFloat(n, 64); err == nil {
				n = figure(v)
			}
			cells := []string{strings.ReplaceAll(change, "_", " "), n}
			for _, reads := range tickReads {
				runs := o.file.runs("BenchmarkTickCost/" + reads + "/" + c)
				cells = append(cells, median(runs, "calls/tick"), median(runs, "lease_reads/tick"),
					median(runs, "rows_listed/tick"), median(runs, "rows_listed/next_tick"))
			}
			row(b, cells...)
		}
	}
}
