// Package promtest reads metrics back from a Prometheus registry in tests.
package promtest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TB is the part of testing.TB the package uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Value returns the value of the series of metric name whose labels
// include labels (name, value pairs): a counter's or a gauge's value, a
// histogram's sample count. Several matching series are summed; no
// matching series is 0.
func Value(t TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	var sum float64
	for _, m := range Series(t, g, name, labels...) {
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// Has reports whether metric name has a series whose labels include labels.
func Has(t TB, g prometheus.Gatherer, name string, labels ...string) bool {
	t.Helper()
	return len(Series(t, g, name, labels...)) > 0
}

// Series returns the series of metric name whose labels include labels.
func Series(t TB, g prometheus.Gatherer, name string, labels ...string) []*dto.Metric {
	t.Helper()
	if len(labels)%2 != 0 {
		t.Fatalf("promtest: labels must be name, value pairs: %q", labels)
	}
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("promtest: gather: %v", err)
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				out = append(out, m)
			}
		}
	}
	return out
}

// Labels returns the label sets of metric name's series as "k=v,k=v"
// strings, sorted: for asserting exactly which series exist.
func Labels(t TB, g prometheus.Gatherer, name string) []string {
	t.Helper()
	var out []string
	for _, m := range Series(t, g, name) {
		var parts []string
		for _, l := range m.GetLabel() {
			parts = append(parts, fmt.Sprintf("%s=%s", l.GetName(), l.GetValue()))
		}
		out = append(out, strings.Join(parts, ","))
	}
	sort.Strings(out)
	return out
}

func matches(m *dto.Metric, labels []string) bool {
	for i := 0; i < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
