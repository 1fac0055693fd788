package demo

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
)

// recorder is the demo's transport: it dials nothing and records which
// targets the reconciler connected, keyed by target key.
type recorder struct {
	notify func()

	mu     sync.Mutex
	active map[string]autoconnect.Target
}

// newRecorder returns an empty recorder that calls notify after each
// change.
func newRecorder(notify func()) *recorder {
	return &recorder{notify: notify, active: map[string]autoconnect.Target{}}
}

// Connect implements autoconnect.Executor: the connection always succeeds.
func (r *recorder) Connect(_ context.Context, t autoconnect.Target) bool {
	r.mu.Lock()
	r.active[t.Key] = t
	r.mu.Unlock()
	r.notify()
	return true
}

// Disconnect implements autoconnect.Executor.
func (r *recorder) Disconnect(t autoconnect.Target) {
	r.mu.Lock()
	delete(r.active, t.Key)
	r.mu.Unlock()
	r.notify()
}

// keys returns the connected target keys, sorted.
func (r *recorder) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.active))
}

// targets returns the connected targets, sorted by key.
func (r *recorder) targets() []autoconnect.Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]autoconnect.Target, 0, len(r.active))
	for _, t := range r.active {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b autoconnect.Target) int { return cmp.Compare(a.Key, b.Key) })
	return out
}
