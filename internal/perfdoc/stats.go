package perfdoc

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// runs returns the results of the benchmark name, one per run (-count).
func (f File) runs(name string) []Result {
	var out []Result
	for _, r := range f.Results {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// subNames returns the names below prefix+"/" that the results have, in
// the order of their first result (the order the benchmark runs them).
func (f File) subNames(prefix string) []string {
	var out []string
	for _, r := range f.Results {
		if sub, ok := strings.CutPrefix(r.Name, prefix+"/"); ok && !slices.Contains(out, sub) {
			out = append(out, sub)
		}
	}
	return out
}

// spread is the median of a metric over runs and its lowest and highest
// value.
type spread struct {
	median, low, high float64
	runs              int
}

// spreadOf summarizes values; ok is false when there are none.
func spreadOf(values []float64) (s spread, ok bool) {
	if len(values) == 0 {
		return spread{}, false
	}
	v := slices.Clone(values)
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return spread{median: med, low: v[0], high: v[n-1], runs: n}, true
}

// metric summarizes the metric unit over runs (runs without it are left
// out).
func metric(runs []Result, unit string) (spread, bool) {
	var values []float64
	for _, r := range runs {
		if v, ok := r.Metrics[unit]; ok {
			values = append(values, v)
		}
	}
	return spreadOf(values)
}

// notMeasured is the cell of a figure that has no value.
const notMeasured = "–"

// median formats the median of unit over runs as a figure.
func median(runs []Result, unit string) string {
	s, ok := metric(runs, unit)
	if !ok {
		return notMeasured
	}
	return figure(s.median)
}

// medianFixed2 formats the median of unit over runs with two decimals
// (a ratio).
func medianFixed2(runs []Result, unit string) string {
	s, ok := metric(runs, unit)
	if !ok {
		return notMeasured
	}
	return fixed2(s.median)
}

// ratioCell formats a ratio's median with two decimals and, over more
// than one run, its range.
func ratioCell(s spread, ok bool) string {
	if !ok {
		return notMeasured
	}
	if s.runs == 1 {
		return fixed2(s.median) + " (1 run)"
	}
	return fixed2(s.median) + " (" + fixed2(s.low) + "–" + fixed2(s.high) + ")"
}

// fixed2 formats v with two decimals.
func fixed2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// figure formats v with three significant digits below 1,000 and as a
// whole number with thousands separators from 1,000 up.
func figure(v float64) string {
	if math.Abs(v) < 999.5 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	digits := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteString("−")
	}
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}
