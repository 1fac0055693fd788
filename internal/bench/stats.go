package bench

import (
	"math"
	"slices"
	"time"
)

// Result is one run: one operation through one system.
type Result struct {
	Op       string
	System   string
	Requests int
	Errors   int
	// FirstError is the first failure's message, if any.
	FirstError string
	Elapsed    time.Duration
	// Latencies are the successful requests' latencies, sorted.
	Latencies []time.Duration
}

// Systems.
const (
	SystemStore = "zlink"
	SystemRaw   = "raw etcd"
)

// Throughput is the successful requests per second.
func (r Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Latencies)) / r.Elapsed.Seconds()
}

// Percentile returns the p-th percentile latency (0 < p ≤ 100), nearest
// rank; 0 without successful requests.
func (r Result) Percentile(p float64) time.Duration {
	n := len(r.Latencies)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return r.Latencies[min(max(rank, 1), n)-1]
}

// Mean is the average latency.
func (r Result) Mean() time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range r.Latencies {
		sum += l
	}
	return sum / time.Duration(len(r.Latencies))
}

// Stddev is the latencies' standard deviation.
func (r Result) Stddev() time.Duration {
	n := len(r.Latencies)
	if n < 2 {
		return 0
	}
	mean := float64(r.Mean())
	var sq float64
	for _, l := range r.Latencies {
		d := float64(l) - mean
		sq += d * d
	}
	return time.Duration(math.Sqrt(sq / float64(n)))
}

// Max is the slowest successful request.
func (r Result) Max() time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[len(r.Latencies)-1]
}

// sortLatencies sorts the latencies in place.
func (r *Result) sortLatencies() { slices.Sort(r.Latencies) }
