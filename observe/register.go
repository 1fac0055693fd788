package observe

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// DurationBuckets returns the default buckets of the latency histograms,
// in seconds: 0.5 ms (a memstore operation, an etcd keep-alive) to 10 s (an
// operation that rode out a leader election).
func DurationBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
}

// DurationBucketsOr returns buckets, or DurationBuckets() when buckets is
// nil: what every Options.Buckets field of this module means.
func DurationBucketsOr(buckets []float64) []float64 {
	if buckets == nil {
		return DurationBuckets()
	}
	return buckets
}

// Register registers every collector on reg, or none: when one fails
// (a metric of the same name is registered already), the ones registered
// before it are unregistered and the error names the cause. A nil reg
// registers nothing.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return fmt.Errorf("observe: register metrics: %w (a second set of the same metrics on one registry needs a distinguishing label: prometheus.WrapRegistererWith)", err)
			}
			return fmt.Errorf("observe: register metrics: %w", err)
		}
	}
	return nil
}

// newCounter, newGauge, newHistogram and newCounterVec define one metric
// each from its name, help and (histogram) buckets or (vector) labels.
func newCounter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func newGauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func newHistogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
}

func newCounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}
