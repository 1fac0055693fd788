package meshbench

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/location"
)

// recorder is a node's executor: it dials nothing and records what the
// auto-connect loop decided — the targets it connected (Connect and
// Disconnect) and the candidates of its last reconciliation
// (autoconnect.PeerExpecter) — and when that last changed.
type recorder struct {
	self   location.RoutingID
	notify func()

	mu         sync.Mutex
	connected  map[string]peer
	candidates map[location.RoutingID]int64
	changedAt  time.Time
}

// peer is a target as the recorder keeps it.
type peer struct {
	rid       location.RoutingID
	lifecycle int64
}

var (
	_ autoconnect.Executor     = (*recorder)(nil)
	_ autoconnect.PeerExpecter = (*recorder)(nil)
)

// newRecorder returns the empty recorder of node self; notify is called
// after every change.
func newRecorder(self location.RoutingID, notify func()) *recorder {
	return &recorder{self: self, notify: notify, connected: map[string]peer{}, candidates: map[location.RoutingID]int64{}}
}

// Connect implements autoconnect.Executor: the connection always succeeds.
func (r *recorder) Connect(_ context.Context, t autoconnect.Target) bool {
	p := peer{lifecycle: t.LifecycleGeneration}
	if t.NodeRID != nil {
		p.rid = *t.NodeRID
	}
	r.mu.Lock()
	old, had := r.connected[t.Key]
	r.connected[t.Key] = p
	if !had || old != p {
		r.changedAt = time.Now()
	}
	r.mu.Unlock()
	r.notify()
	return true
}

// Disconnect implements autoconnect.Executor.
func (r *recorder) Disconnect(t autoconnect.Target) {
	r.mu.Lock()
	_, had := r.connected[t.Key]
	delete(r.connected, t.Key)
	if had {
		r.changedAt = time.Now()
	}
	r.mu.Unlock()
	if had {
		r.notify()
	}
}

// ExpectPeers implements autoconnect.PeerExpecter: it records the
// reconciliation's candidates.
func (r *recorder) ExpectPeers(candidates []autoconnect.Target) {
	next := make(map[location.RoutingID]int64, len(candidates))
	for _, t := range candidates {
		if t.NodeRID != nil {
			next[*t.NodeRID] = t.LifecycleGeneration
		}
	}
	r.mu.Lock()
	changed := !maps.Equal(next, r.candidates)
	if changed {
		r.candidates, r.changedAt = next, time.Now()
	}
	r.mu.Unlock()
	if changed {
		r.notify()
	}
}

// agrees reports whether the recorder agrees with live (every live node's
// routing id and lifecycle generation, the recorder's own included): its
// candidates are exactly the other live nodes, and it is connected to
// exactly those it dials. at is when its view last changed.
func (r *recorder) agrees(live map[location.RoutingID]int64) (ok bool, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.candidates) != len(live)-1 {
		return false, r.changedAt
	}
	for rid, lc := range r.candidates {
		if want, ok := live[rid]; !ok || want != lc || rid == r.self {
			return false, r.changedAt
		}
	}
	dialed := 0
	for rid := range live {
		if dials(r.self, rid) {
			dialed++
		}
	}
	if len(r.connected) != dialed {
		return false, r.changedAt
	}
	for _, p := range r.connected {
		if want, ok := live[p.rid]; !ok || want != p.lifecycle || !dials(r.self, p.rid) {
			return false, r.changedAt
		}
	}
	return true, r.changedAt
}

// dials reports whether node a dials node b: the lower routing id dials
// (autoconnect.IsInitiator, byte order).
func dials(a, b location.RoutingID) bool { return a < b }
