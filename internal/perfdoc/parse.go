package perfdoc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// ErrSyntax is returned for a benchmark result line that cannot be read.
var ErrSyntax = errors.New("perfdoc: malformed benchmark line")

// File is one raw output: the configuration lines ("key: value", as
// `go test` prints goos and pkg and scripts/perf.sh its perf-* header)
// and the benchmark results, in the order of the output.
type File struct {
	// Config holds every configuration line; a key given twice keeps its
	// last value.
	Config map[string]string
	// Results are the benchmark result lines.
	Results []Result
}

// Result is one benchmark result line.
type Result struct {
	// Name is the benchmark's full name without its GOMAXPROCS suffix,
	// for example "BenchmarkRenewOwnerLease/callers=16".
	Name string
	// Procs is GOMAXPROCS (the name's "-N" suffix; 1 without one).
	Procs int
	// Iterations is b.N.
	Iterations int
	// Metrics maps every unit of the line to its value ("ns/op", "ops/s").
	Metrics map[string]float64
}

// Parse reads the output of `go test -bench` (the format of
// golang.org/x/perf/benchfmt: configuration lines, result lines, and any
// other line, which it skips). A line that starts like a result (a
// benchmark name and an iteration count) but whose values and units do
// not pair up is an error wrapping ErrSyntax.
func Parse(r io.Reader) (File, error) {
	f := File{Config: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if key, value, ok := configLine(text); ok {
			f.Config[key] = value
			continue
		}
		res, ok, err := resultLine(text)
		if err != nil {
			return File{}, fmt.Errorf("line %d: %w", line, err)
		}
		if ok {
			f.Results = append(f.Results, res)
		}
	}
	if err := sc.Err(); err != nil {
		return File{}, fmt.Errorf("perfdoc: reading benchmark output: %w", err)
	}
	return f, nil
}

// configLine reports whether text is a configuration line: a key that
// starts with a lower-case letter and has no space, a colon, and a value.
func configLine(text string) (key, value string, ok bool) {
	key, value, found := strings.Cut(text, ":")
	if !found || key == "" || !unicode.IsLower(rune(key[0])) || strings.ContainsFunc(key, unicode.IsSpace) {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}

// resultLine reads a result line; ok is false for any other line.
func resultLine(text string) (Result, bool, error) {
	fields := strings.Fields(text)
	if len(fields) < 2 || !isBenchmarkName(fields[0]) {
		return Result{}, false, nil
	}
	iterations, err := strconv.Atoi(fields[1])
	if err != nil {
		// A benchmark's name on a line of its own (printed before its
		// log output), or a log line that starts with one.
		return Result{}, false, nil
	}
	pairs := fields[2:]
	if len(pairs)%2 != 0 {
		return Result{}, false, fmt.Errorf("%w: a value without a unit in %q", ErrSyntax, text)
	}
	res := Result{Iterations: iterations, Metrics: make(map[string]float64, len(pairs)/2)}
	res.Name, res.Procs = splitProcs(fields[0])
	for i := 0; i < len(pairs); i += 2 {
		v, err := strconv.ParseFloat(pairs[i], 64)
		if err != nil {
			return Result{}, false, fmt.Errorf("%w: value %q of %s in %q", ErrSyntax, pairs[i], pairs[i+1], text)
		}
		res.Metrics[pairs[i+1]] = v
	}
	return res, true, nil
}

// isBenchmarkName reports whether s is "Benchmark" followed by nothing or
// by a name that does not start with a lower-case letter.
func isBenchmarkName(s string) bool {
	rest, ok := strings.CutPrefix(s, "Benchmark")
	return ok && (rest == "" || !unicode.IsLower(rune(rest[0])))
}

// splitProcs splits the "-N" GOMAXPROCS suffix off a benchmark's name.
func splitProcs(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name, 1
	}
	procs, err := strconv.Atoi(name[i+1:])
	if err != nil || procs <= 0 {
		return name, 1
	}
	return name[:i], procs
}

// Raw is the raw outputs of a run, by file name without ".txt"
// ("writes-fsync-off", "client").
type Raw map[string]File

// ReadDir parses every *.txt file of dir. A directory that does not exist
// holds no outputs (nothing measured yet).
func ReadDir(dir string) (Raw, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, fmt.Errorf("perfdoc: listing %s: %w", dir, err)
	}
	raw := Raw{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("perfdoc: %w", err)
		}
		parsed, err := Parse(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("perfdoc: %s: %w", p, err)
		}
		raw[strings.TrimSuffix(filepath.Base(p), ".txt")] = parsed
	}
	return raw, nil
}
