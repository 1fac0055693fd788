package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// history records every call of a run: its client, its start and end
// (nanoseconds since the run started, from the monotonic clock), and its
// result.
type history struct {
	start time.Time

	mu      sync.Mutex
	records []*record
}

// record is one recorded call.
type record struct {
	id         int
	client     int
	c          call
	start, end int64
	res        any
	err        error
	// fenced is the owner key whose lease a fault ended between this
	// call's decision and its commit ("" if none), and fencedCommitted
	// whether that commit succeeded anyway.
	fenced          string
	fencedCommitted bool
	// silent is set when the client's KV saw no write of the call that
	// may have been applied (no success, no ambiguous loss): a failed call
	// whose effects all go through that KV then changed nothing.
	silent bool
}

// newHistory starts an empty history now.
func newHistory() *history { return &history{start: time.Now()} }

// now is the time since the run started.
func (h *history) now() int64 { return int64(time.Since(h.start)) }

// do runs one call of client on its store and records it.
func (h *history) do(ctx context.Context, client int, c call, run func(context.Context) (any, error)) *record {
	r := &record{client: client, c: c, start: h.now()}
	r.res, r.err = run(ctx)
	r.end = h.now()
	h.add(r)
	return r
}

// add appends a record (ghost events of the fault injector too).
func (h *history) add(r *record) {
	h.mu.Lock()
	r.id = len(h.records)
	h.records = append(h.records, r)
	h.mu.Unlock()
}

// snapshot returns the records so far.
func (h *history) snapshot() []*record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*record(nil), h.records...)
}

// class is how a record enters the linearizability check.
type class int

const (
	// classOK: answered.
	classOK class = iota
	// classUnknown: may or may not have been applied.
	classUnknown
	// classNotApplied: the store said it was not applied
	// (location.ErrUnavailable), or a read failed: left out.
	classNotApplied
	// classInvalid: the store refused the input (a workload bug).
	classInvalid
)

// classify says how a record's error counts.
func (r *record) classify() class {
	switch {
	case r.err == nil:
		return classOK
	case errors.Is(r.err, location.ErrInvalidArgument):
		return classInvalid
	case !r.c.kind.writes():
		return classNotApplied
	case r.silent && r.c.kind.kvOnly():
		return classNotApplied
	case errors.Is(r.err, txn.ErrOutcomeUnknown):
		return classUnknown
	case errors.Is(r.err, location.ErrUnavailable):
		// The store's contract: nothing was applied. Checked, not trusted:
		// a write applied anyway makes the history illegal.
		return classNotApplied
	}
	return classUnknown
}

// operations converts the records into porcupine's operations.
func operations(records []*record) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(records))
	for _, r := range records {
		in := opInput{id: r.id, client: r.client, c: r.c}
		switch r.classify() {
		case classOK:
			ops = append(ops, porcupine.Operation{ClientId: r.client, Input: in, Call: r.start,
				Output: opOutput{kind: outcomeOK, res: r.res}, Return: r.end})
		case classUnknown:
			ops = append(ops, porcupine.Operation{ClientId: r.client, Input: in, Call: r.start,
				Output: opOutput{kind: outcomeUnknown, err: r.err}, Return: math.MaxInt64})
		}
	}
	return ops
}

// describeRecords renders the records for a failure report.
func describeRecords(records []*record, max int) string {
	var b strings.Builder
	for i, r := range records {
		if i == max {
			fmt.Fprintf(&b, "… %d more\n", len(records)-max)
			break
		}
		out := fmt.Sprintf("%+v", r.res)
		if r.err != nil {
			out = "error: " + r.err.Error()
		}
		fmt.Fprintf(&b, "#%d c%d [%.3fms, %.3fms] %v -> %s\n", r.id, r.client,
			float64(r.start)/1e6, float64(r.end)/1e6, r.c, out)
	}
	return b.String()
}
