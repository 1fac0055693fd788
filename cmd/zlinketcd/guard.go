package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// errCommandTimeout is the cause of a request context whose
// --command-timeout ran out.
var errCommandTimeout = errors.New("the request ran out of --command-timeout")

// interrupted is the cause of a run that a signal ended.
type interrupted struct{ sig os.Signal }

// Error implements error.
func (i interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

// exitCode follows the shell's convention: 128 + the signal number (130
// for SIGINT, 143 for SIGTERM).
func (i interrupted) exitCode() int {
	if s, ok := i.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

// signalName names a signal as the shell does.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	default:
		return sig.String()
	}
}

// guard bounds every etcd request of one run by --command-timeout and ends
// the run (its context) at the first request that runs out of it, with the
// session's diagnosis of the cluster as the cause, or when a signal
// arrives. Once it has ended, requests fail at once and those in flight
// are cancelled, so that nothing waits on a cluster that cannot answer.
type guard struct {
	timeout time.Duration
	// ctx is the run's context; end ends it with a cause.
	ctx context.Context
	end context.CancelCauseFunc

	mu sync.Mutex
	// diagnose explains a request that ran out of time (nil: a generic
	// message).
	diagnose func(ctx context.Context) error
	once     sync.Once
}

// newGuard returns the guard of a run under parent.
func newGuard(parent context.Context, timeout time.Duration) *guard {
	ctx, end := context.WithCancelCause(parent)
	return &guard{timeout: timeout, ctx: ctx, end: end}
}

// trip ends the run with cause (the first cause stays).
func (g *guard) trip(cause error) { g.end(cause) }

// cause is why the run ended, or nil while it goes on.
func (g *guard) cause() error {
	if g.ctx.Err() == nil {
		return nil
	}
	return context.Cause(g.ctx)
}

// setDiagnosis installs the explanation of a request that ran out of time.
func (g *guard) setDiagnosis(f func(ctx context.Context) error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.diagnose = f
}

// timedOut ends the run after a request ran out of --command-timeout: once,
// with the diagnosis as the cause.
func (g *guard) timedOut() {
	g.once.Do(func() {
		g.mu.Lock()
		diagnose := g.diagnose
		g.mu.Unlock()
		var cause error = &clusterError{kind: errSlowCluster,
			msg: fmt.Sprintf("an etcd request took longer than --command-timeout %v", g.timeout)}
		if diagnose != nil {
			cause = diagnose(g.ctx)
		}
		g.trip(cause)
	})
}

// request returns the context of one request: ctx bounded by the timeout
// and cancelled when the run ends.
func (g *guard) request(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(g.ctx, func() { cancel(context.Cause(g.ctx)) })
	t, cancelTimer := context.WithTimeoutCause(c, g.timeout, errCommandTimeout)
	return t, func() {
		cancelTimer()
		stop()
		cancel(nil)
	}
}

// follow returns ctx, also cancelled when the run ends (for streams that
// live as long as their caller wants, such as watches).
func (g *guard) follow(ctx context.Context) context.Context {
	c, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(g.ctx, func() { cancel(context.Cause(g.ctx)) })
	context.AfterFunc(c, func() { stop() })
	return c
}

// call runs one request f under the guard.
func call[T any](g *guard, ctx context.Context, f func(ctx context.Context) (T, error)) (T, error) {
	if cause := g.cause(); cause != nil {
		var zero T
		return zero, fmt.Errorf("not sent: %w", cause)
	}
	rctx, cancel := g.request(ctx)
	defer cancel()
	v, err := f(rctx)
	if err != nil && errors.Is(context.Cause(rctx), errCommandTimeout) && ctx.Err() == nil {
		g.timedOut()
	}
	return v, err
}

// rawEtcd is a client's own keys and leases, without the guard (for the
// clean-up after the run ended).
type rawEtcd struct {
	clientv3.KV
	clientv3.Lease
}

// install puts the guard between c's users and its keys, leases and
// watches, and returns c's own.
func (g *guard) install(c *clientv3.Client) rawEtcd {
	raw := rawEtcd{KV: c.KV, Lease: c.Lease}
	c.KV = guardedKV{kv: c.KV, g: g}
	c.Lease = guardedLease{l: c.Lease, g: g}
	c.Watcher = guardedWatcher{w: c.Watcher, g: g}
	return raw
}

// guardedKV is a KV whose requests the guard bounds.
type guardedKV struct {
	kv clientv3.KV
	g  *guard
}

// Put implements clientv3.KV.
func (k guardedKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	return call(k.g, ctx, func(ctx context.Context) (*clientv3.PutResponse, error) { return k.kv.Put(ctx, key, val, opts...) })
}

// Get implements clientv3.KV.
func (k guardedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return call(k.g, ctx, func(ctx context.Context) (*clientv3.GetResponse, error) { return k.kv.Get(ctx, key, opts...) })
}

// GetStream implements clientv3.KV; the stream ends with the run.
func (k guardedKV) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	return k.kv.GetStream(k.g.follow(ctx), key, opts...)
}

// Delete implements clientv3.KV.
func (k guardedKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	return call(k.g, ctx, func(ctx context.Context) (*clientv3.DeleteResponse, error) { return k.kv.Delete(ctx, key, opts...) })
}

// Compact implements clientv3.KV.
func (k guardedKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	return call(k.g, ctx, func(ctx context.Context) (*clientv3.CompactResponse, error) { return k.kv.Compact(ctx, rev, opts...) })
}

// Do implements clientv3.KV.
func (k guardedKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	return call(k.g, ctx, func(ctx context.Context) (clientv3.OpResponse, error) { return k.kv.Do(ctx, op) })
}

// Txn implements clientv3.KV: the transaction's request is bounded when it
// is committed.
func (k guardedKV) Txn(ctx context.Context) clientv3.Txn {
	return &guardedTxn{kv: k.kv, g: k.g, ctx: ctx}
}

// guardedTxn collects a transaction and sends it under the guard.
type guardedTxn struct {
	kv          clientv3.KV
	g           *guard
	ctx         context.Context
	cmps        []clientv3.Cmp
	thens, elss []clientv3.Op
}

// If implements clientv3.Txn.
func (t *guardedTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

// Then implements clientv3.Txn.
func (t *guardedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.thens = append(t.thens, ops...)
	return t
}

// Else implements clientv3.Txn.
func (t *guardedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.elss = append(t.elss, ops...)
	return t
}

// Commit implements clientv3.Txn.
func (t *guardedTxn) Commit() (*clientv3.TxnResponse, error) {
	return call(t.g, t.ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return t.kv.Txn(ctx).If(t.cmps...).Then(t.thens...).Else(t.elss...).Commit()
	})
}

// guardedLease is a Lease whose requests the guard bounds; KeepAlive's
// stream ends with the run.
type guardedLease struct {
	l clientv3.Lease
	g *guard
}

// Grant implements clientv3.Lease.
func (l guardedLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	return call(l.g, ctx, func(ctx context.Context) (*clientv3.LeaseGrantResponse, error) { return l.l.Grant(ctx, ttl) })
}

// Revoke implements clientv3.Lease.
func (l guardedLease) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	return call(l.g, ctx, func(ctx context.Context) (*clientv3.LeaseRevokeResponse, error) { return l.l.Revoke(ctx, id) })
}

// TimeToLive implements clientv3.Lease.
func (l guardedLease) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	return call(l.g, ctx, func(ctx context.Context) (*clientv3.LeaseTimeToLiveResponse, error) {
		return l.l.TimeToLive(ctx, id, opts...)
	})
}

// Leases implements clientv3.Lease.
func (l guardedLease) Leases(ctx context.Context) (*clientv3.LeaseLeasesResponse, error) {
	return call(l.g, ctx, func(ctx context.Context) (*clientv3.LeaseLeasesResponse, error) { return l.l.Leases(ctx) })
}

// KeepAlive implements clientv3.Lease.
func (l guardedLease) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	return l.l.KeepAlive(l.g.follow(ctx), id)
}

// KeepAliveOnce implements clientv3.Lease.
func (l guardedLease) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	return call(l.g, ctx, func(ctx context.Context) (*clientv3.LeaseKeepAliveResponse, error) { return l.l.KeepAliveOnce(ctx, id) })
}

// Close implements clientv3.Lease.
func (l guardedLease) Close() error { return l.l.Close() }

// guardedWatcher is a Watcher whose watches end with the run.
type guardedWatcher struct {
	w clientv3.Watcher
	g *guard
}

// Watch implements clientv3.Watcher.
func (w guardedWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	return w.w.Watch(w.g.follow(ctx), key, opts...)
}

// RequestProgress implements clientv3.Watcher.
func (w guardedWatcher) RequestProgress(ctx context.Context) error {
	_, err := call(w.g, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, w.w.RequestProgress(ctx) })
	return err
}

// Close implements clientv3.Watcher.
func (w guardedWatcher) Close() error { return w.w.Close() }
