package integration

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/txn"
)

// faultKV wraps one client's KV (etcdstore's Options.KV) and injects faults
// into write transactions: responses lost after the server applied the
// write, requests lost before it, a hook run between a decision and its
// commit, and (for the broken-store checks) guards removed from the If.
type faultKV struct {
	clientv3.KV
	ownerPrefix string

	mu sync.Mutex
	// lose is the probability that a write transaction's response is lost
	// after it was applied; drop that its request is lost before.
	lose, drop float64
	rnd        *rand.Rand
	// preCommit, when set, runs once before the next write transaction that
	// asserts a live owner key (CreateRevision > 0); it gets the owner key.
	preCommit func(ownerKey string)
	// fired is the owner key preCommit ran for, and committed whether that
	// transaction then succeeded; the worker collects them after its call.
	fired     string
	committed bool
	// strip removes If comparisons (the broken stores).
	strip guardStrip
	// lost counts injected lost responses and requests.
	lost int
	// meet, when set, pairs up write transactions before they are sent.
	meet *barrier
	// mayApply counts the write transactions of the current call that may
	// have been applied: answered with success, or lost in an ambiguous way.
	mayApply int
}

// beginCall starts counting the writes of one call.
func (f *faultKV) beginCall() {
	f.mu.Lock()
	f.mayApply = 0
	f.mu.Unlock()
}

// mayHaveApplied reports whether a write of the current call may have
// been applied. A call that never had a write transaction applied, nor lost
// one's answer, changed nothing through this KV.
func (f *faultKV) mayHaveApplied() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mayApply > 0
}

// guardStrip says which guards a broken store drops.
type guardStrip int

const (
	stripNothing guardStrip = iota
	// stripRowGuards drops every comparison except on owner keys: writes no
	// longer notice that a row changed after they read it.
	stripRowGuards
	// stripOwnerGuards drops the comparisons asserting that an owner key
	// exists (CreateRevision = its generation): writes no longer notice that
	// the owner lease ended after they decided.
	stripOwnerGuards
)

// newFaultKV wraps kv; ownerPrefix tells owner keys apart, seed drives the
// losses.
func newFaultKV(kv clientv3.KV, ownerPrefix string, seed uint64) *faultKV {
	return &faultKV{KV: kv, ownerPrefix: ownerPrefix, rnd: rand.New(rand.NewPCG(seed, 7))}
}

// setLoss sets the probabilities of lost responses and requests.
func (f *faultKV) setLoss(lose, drop float64) {
	f.mu.Lock()
	f.lose, f.drop = lose, drop
	f.mu.Unlock()
}

// arm installs a pre-commit hook (nil disarms).
func (f *faultKV) arm(hook func(ownerKey string)) {
	f.mu.Lock()
	f.preCommit = hook
	f.mu.Unlock()
}

// takeFired returns and clears the owner key the hook ran for ("" if none)
// and whether that transaction succeeded.
func (f *faultKV) takeFired() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, c := f.fired, f.committed
	f.fired, f.committed = "", false
	return k, c
}

// lostCount returns the number of injected losses.
func (f *faultKV) lostCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
}

// Txn implements clientv3.KV: the transaction is sent on Commit.
func (f *faultKV) Txn(ctx context.Context) clientv3.Txn {
	return &faultTxn{f: f, ctx: ctx}
}

// faultTxn records the transaction and sends it on Commit.
type faultTxn struct {
	f          *faultKV
	ctx        context.Context
	cmps       []clientv3.Cmp
	then, els  []clientv3.Op
	writes     bool
	ownerGuard string
}

// If records the comparisons.
func (t *faultTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

// Then records the success branch.
func (t *faultTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	for _, op := range ops {
		t.writes = t.writes || op.IsPut() || op.IsDelete()
	}
	t.then = append(t.then, ops...)
	return t
}

// Else records the failure branch.
func (t *faultTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.els = append(t.els, ops...)
	return t
}

// isOwnerKey reports whether a comparison is on an owner key.
func (t *faultTxn) isOwnerKey(c clientv3.Cmp) bool {
	return bytes.HasPrefix(c.KeyBytes(), []byte(t.f.ownerPrefix))
}

// isLiveOwnerGuard reports whether a comparison asserts that an owner key
// exists with a given generation (its CreateRevision).
func (t *faultTxn) isLiveOwnerGuard(c clientv3.Cmp) bool {
	pc := c.GetCompare()
	return t.isOwnerKey(c) && pc.Target == pb.Compare_CREATE && pc.Result == pb.Compare_EQUAL && pc.GetCreateRevision() > 0
}

// Commit runs the armed hook, injects the loss drawn for the transaction
// and sends it (with the broken store's guards removed).
func (t *faultTxn) Commit() (*clientv3.TxnResponse, error) {
	f := t.f
	cmps := t.cmps
	for _, c := range cmps {
		if t.isLiveOwnerGuard(c) && t.ownerGuard == "" {
			t.ownerGuard = string(c.KeyBytes())
		}
	}
	f.mu.Lock()
	strip := f.strip
	var hook func(string)
	if t.writes && t.ownerGuard != "" && f.preCommit != nil {
		hook, f.preCommit = f.preCommit, nil
	}
	lose, drop := false, false
	if t.writes && hook == nil {
		r := f.rnd.Float64()
		lose = r < f.lose
		drop = !lose && r < f.lose+f.drop
		if lose || drop {
			f.lost++
		}
	}
	meet := f.meet
	f.mu.Unlock()

	if meet != nil && t.writes {
		meet.meet()
	}
	if strip != stripNothing {
		kept := make([]clientv3.Cmp, 0, len(cmps))
		for _, c := range cmps {
			switch {
			case strip == stripRowGuards && !t.isOwnerKey(c):
			case strip == stripOwnerGuards && t.isLiveOwnerGuard(c):
			default:
				kept = append(kept, c)
			}
		}
		cmps = kept
	}
	if hook != nil {
		hook(t.ownerGuard)
	}
	if drop {
		return nil, status.Error(codes.Unavailable, "injected: request lost")
	}
	resp, err := t.f.KV.Txn(t.ctx).If(cmps...).Then(t.then...).Else(t.els...).Commit()
	f.mu.Lock()
	if t.writes && ((err == nil && resp.Succeeded) || (err != nil && txn.IsAmbiguous(err))) {
		f.mayApply++
	}
	if hook != nil {
		f.fired, f.committed = t.ownerGuard, err == nil && resp.Succeeded
	}
	f.mu.Unlock()
	if lose && err == nil {
		return nil, status.Error(codes.Unavailable, "injected: response lost after the write was applied")
	}
	return resp, err
}

// barrier holds write transactions until a second one is pending (or a
// short while passed), so that two clients' decisions race for the same
// rows: the guards must make one of them decide again.
type barrier struct {
	mu      sync.Mutex
	waiting chan struct{}
	wait    time.Duration
}

// meet blocks until another caller meets it or the wait passes.
func (b *barrier) meet() {
	b.mu.Lock()
	if b.waiting != nil {
		close(b.waiting)
		b.waiting = nil
		b.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	b.waiting = ch
	b.mu.Unlock()
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		b.mu.Lock()
		if b.waiting == ch {
			b.waiting = nil
		}
		b.mu.Unlock()
	}
}
