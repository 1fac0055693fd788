package perfdoc_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/perfdoc"
)

var (
	update = flag.Bool("update", false, "rewrite "+docPath+"'s generated sections (and testdata/rendered.md) instead of comparing")
	rawDir = flag.String("raw", "../../docs/perf/raw", "the raw outputs TestPerformanceDoc renders")
)

// docPath is the document the raw outputs are rendered into.
const docPath = "../../docs/performance.md"

// regenerate is the command that rewrites the generated sections.
const regenerate = "go test ./internal/perfdoc/ -run TestPerformanceDoc -count=1 -update"

// The current-state tables of docs/performance.md are the rendering of
// docs/perf/raw: nothing in them is typed by hand. A section whose raw
// outputs are absent (a clean checkout before `make perf`) keeps its text.
func TestPerformanceDoc(t *testing.T) {
	raw, err := perfdoc.ReadDir(*rawDir)
	require.NoError(t, err)
	doc, err := os.ReadFile(docPath)
	require.NoError(t, err)
	want, err := perfdoc.Update(string(doc), raw)
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(docPath, []byte(want), 0o644))
		return
	}
	for _, s := range perfdoc.Sections() {
		require.Equal(t, between(t, want, s.ID), between(t, string(doc), s.ID),
			"%s's section perf:%s does not show %s: run %s", docPath, s.ID, *rawDir, regenerate)
	}
	require.Equal(t, want, string(doc), "%s does not show %s: run %s", docPath, *rawDir, regenerate)
}

// between returns the text of doc between section id's markers.
func between(t *testing.T, doc, id string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, perfdoc.BeginMarker(id))
	require.True(t, ok, "no %s", perfdoc.BeginMarker(id))
	text, _, ok := strings.Cut(rest, perfdoc.EndMarker(id))
	require.True(t, ok, "no %s", perfdoc.EndMarker(id))
	return text
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		config  map[string]string
		results []perfdoc.Result
		err     error
	}{{
		name:   "config and results",
		in:     "goos: linux\nperf-load-before: 0.10, 0.20, 0.30\nBenchmarkA/callers=16-2  \t 50\t 1200 ns/op\t 3.5 p50-ms\nPASS\n",
		config: map[string]string{"goos": "linux", "perf-load-before": "0.10, 0.20, 0.30"},
		results: []perfdoc.Result{{Name: "BenchmarkA/callers=16", Procs: 2, Iterations: 50,
			Metrics: map[string]float64{"ns/op": 1200, "p50-ms": 3.5}}},
	}, {
		name:    "no procs suffix, exponent",
		in:      "BenchmarkB/raw-once 4000 1.4e+02 raw-once-p99-ms\n",
		config:  map[string]string{},
		results: []perfdoc.Result{{Name: "BenchmarkB/raw-once", Procs: 1, Iterations: 4000, Metrics: map[string]float64{"raw-once-p99-ms": 140}}},
	}, {
		name:   "other lines are skipped",
		in:     "BenchmarkC/callers=1\n    bench_test.go:12: log: x\n--- FAIL: BenchmarkC\nBenchmarking is fun\nok  \tpkg\t1.2s\n",
		config: map[string]string{},
	}, {
		name:   "the last value of a key wins",
		in:     "perf-exit: 0\nperf-exit: 1\n",
		config: map[string]string{"perf-exit": "1"},
	}, {
		name: "a value without a unit",
		in:   "BenchmarkD-2 10 5 ns/op 7\n",
		err:  perfdoc.ErrSyntax,
	}, {
		name: "a unit without a value",
		in:   "BenchmarkD-2 10 fast ns/op\n",
		err:  perfdoc.ErrSyntax,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := perfdoc.Parse(strings.NewReader(tc.in))
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.config, f.Config)
			require.Equal(t, tc.results, f.Results)
		})
	}
}

// testdata/raw is a quick run of scripts/perf.sh (PERF_COUNT=1, small
// -benchtime; see testdata/README.md).
func TestReadDir(t *testing.T) {
	raw, err := perfdoc.ReadDir("testdata/raw")
	require.NoError(t, err)
	var names []string
	for n := range raw {
		names = append(names, n)
	}
	require.ElementsMatch(t, []string{"writes-fsync-off", "writes-fsync-on", "list-fsync-off", "list-fsync-on",
		"remove-fsync-off", "remove-fsync-on", "renewal-fsync-off", "renewal-fsync-on", "client", "tick", "reaction-fsync-off"}, names)
	w := raw["writes-fsync-off"]
	require.Len(t, w.Results, 24) // 8 benchmarks at 1, 16 and 64 callers
	require.Equal(t, "d8f377d", w.Config["perf-commit"])
	require.Equal(t, "0", w.Config["perf-exit"])
	require.Equal(t, "etcdstore", strings.TrimPrefix(w.Config["pkg"], "github.com/zlink-systems/zlink-etcd/"))

	none, err := perfdoc.ReadDir("testdata/absent")
	require.NoError(t, err)
	require.Empty(t, none)
}

// Every section renders the sample; testdata/rendered.md pins the result.
func TestRender(t *testing.T) {
	raw, err := perfdoc.ReadDir("testdata/raw")
	require.NoError(t, err)
	var b strings.Builder
	for _, s := range perfdoc.Sections() {
		b.WriteString("## " + s.ID + "\n\n" + s.Render(raw) + "\n")
	}
	const path = "testdata/rendered.md"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String(), "rendering changed: if deliberate, run go test ./internal/perfdoc/ -run TestRender -update and review testdata/rendered.md")
}

// markedDoc is a document with every section's markers around old text.
func markedDoc() string {
	var b strings.Builder
	for _, s := range perfdoc.Sections() {
		b.WriteString("prose\n" + perfdoc.BeginMarker(s.ID) + "\nold " + s.ID + "\n" + perfdoc.EndMarker(s.ID) + "\n")
	}
	return b.String()
}

func TestUpdate(t *testing.T) {
	raw, err := perfdoc.ReadDir("testdata/raw")
	require.NoError(t, err)
	only := perfdoc.Raw{"client": raw["client"]}
	got, err := perfdoc.Update(markedDoc(), only)
	require.NoError(t, err)
	for _, s := range perfdoc.Sections() {
		if s.ID == "client" {
			require.Contains(t, got, perfdoc.BeginMarker(s.ID)+"\n\n"+s.Render(only)+"\n"+perfdoc.EndMarker(s.ID)+"\n")
			require.NotContains(t, got, "old client")
			continue
		}
		require.Contains(t, got, perfdoc.BeginMarker(s.ID)+"\nold "+s.ID+"\n"+perfdoc.EndMarker(s.ID)+"\n", "unmeasured section %s keeps its text", s.ID)
	}
	again, err := perfdoc.Update(got, only)
	require.NoError(t, err)
	require.Equal(t, got, again, "Update is idempotent")

	_, err = perfdoc.Update(strings.Replace(markedDoc(), perfdoc.EndMarker("tick"), "", 1), only)
	require.ErrorIs(t, err, perfdoc.ErrNoMarkers)
	_, err = perfdoc.Update("no markers", perfdoc.Raw{})
	require.ErrorIs(t, err, perfdoc.ErrNoMarkers)
}

// A section with one fsync mode measured says the other was not.
func TestRenderNotMeasured(t *testing.T) {
	raw, err := perfdoc.ReadDir("testdata/raw")
	require.NoError(t, err)
	only := perfdoc.Raw{"remove-fsync-off": raw["remove-fsync-off"]}
	for _, s := range perfdoc.Sections() {
		if s.ID != "remove" {
			continue
		}
		out := s.Render(only)
		require.Contains(t, out, "* fsync on: not measured (no docs/perf/raw/remove-fsync-on.txt: run `make perf`)\n")
		require.Contains(t, out, "| `RemoveAllByOwner`, 10,000 rows | 1 | off | ")
		require.Contains(t, out, "|  |  | on | – | – / – | – | – / – | – | – | – / – |\n")
	}
}

// A run whose test binary failed says so above its table.
func TestRenderFailedRun(t *testing.T) {
	raw, err := perfdoc.ReadDir("testdata/raw")
	require.NoError(t, err)
	failed := raw["client"]
	failed.Config = map[string]string{"perf-exit": "1"}
	for _, s := range perfdoc.Sections() {
		if s.ID == "client" {
			require.Contains(t, s.Render(perfdoc.Raw{"client": failed}), "; **the run failed (exit 1)**: missing rows were not measured\n")
		}
	}
}

// A run of scripts/perf.sh whose counts were processes of their own says
// so; an older one shows its -count.
func TestRenderRuns(t *testing.T) {
	raw, err := perfdoc.ReadDir("testdata/raw")
	require.NoError(t, err)
	tests := []struct {
		name   string
		config map[string]string
		want   string
	}{
		{"one process", map[string]string{"perf-benchtime": "1s", "perf-count": "3"}, ", `-benchtime 1s -count 3`, "},
		{"processes", map[string]string{"perf-benchtime": "1s", "perf-count": "3", "perf-processes": "3"}, ", `-benchtime 1s`, 3 runs in processes of their own, "},
		{"one process of its own", map[string]string{"perf-benchtime": "100x", "perf-count": "1", "perf-processes": "1"}, ", `-benchtime 100x`, 1 run in a process of its own, "},
		{"etcd in a process of its own", map[string]string{"perf-benchtime": "1s", "perf-count": "5", "perf-processes": "5",
			"perf-etcd": "in a process of its own (etcd 3.7.3, fsync off)"},
			", `-benchtime 1s`, 5 runs in processes of their own, etcd in a process of its own (etcd 3.7.3, fsync off), "},
		{"etcd in the test process", map[string]string{"perf-benchtime": "1s", "perf-count": "5", "perf-processes": "5",
			"perf-etcd": "in the test process"}, ", `-benchtime 1s`, 5 runs in processes of their own, etcd in the test process, "},
		{"no etcd", map[string]string{"perf-benchtime": "1s", "perf-count": "5", "perf-processes": "5", "perf-etcd": "-"},
			", `-benchtime 1s`, 5 runs in processes of their own, "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := raw["client"]
			out.Config = tc.config
			for _, s := range perfdoc.Sections() {
				if s.ID == "client" {
					require.Contains(t, s.Render(perfdoc.Raw{"client": out}), tc.want)
				}
			}
		})
	}
}
