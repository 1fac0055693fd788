package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Defaults of Options.
const (
	DefaultMaxAttempts    = 16
	DefaultResolveTimeout = 5 * time.Second
	// maxMissRounds bounds how often one decision may ask for keys it has
	// not seen before the engine calls it broken.
	maxMissRounds = 16
)

// Options configure an Engine. The zero value is usable.
type Options struct {
	// Limits are the server's transaction limits (decision E-8).
	Limits Limits
	// MaxAttempts bounds the commits (and verifications) one operation may
	// try before it gives up with ErrContention; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// ResolveTimeout is the least time the re-reads that resolve an
	// ambiguous commit are given, even when the caller's deadline has
	// passed (a cancelled caller's end them at once: ResolveContext); while
	// the caller's context lasts they go on, retrying transient errors. 0
	// means DefaultResolveTimeout.
	ResolveTimeout time.Duration
	// CacheSize is the number of recently observed keys the engine keeps to
	// start steady-state decisions without a read; 0 means
	// DefaultCacheSize, a negative value disables the cache.
	CacheSize int
	// MarkerKey is put (with the nonce) by every commit that would otherwise
	// only delete, so that an ambiguous delete can be resolved too. Empty:
	// delete-only commits are resolved by state alone.
	MarkerKey string
	// DeleteFence maps a key to its delete fence ("" for none). A commit
	// that deletes a key puts its fence (with the nonce); a commit that
	// issues a generation from a key's absence (View.Revision of an absent
	// key) asserts that the key's fence has not moved since the absence was
	// read. Together they close the window that the absence guard alone
	// leaves open: the key created and deleted again between the read and
	// the commit, by a writer that issued the same generation. nil: no
	// fences, and no such protection.
	DeleteFence func(key string) string
	// Logger receives debug logs of retries and resolutions; nil discards.
	Logger *slog.Logger
	// Retry sends the engine's reads (and the reads and history searches
	// that resolve a lost response) again while etcd answers transient
	// errors; the engine wraps its KV with it (Retrier.KV). nil means a
	// Retrier of its own with default options and Logger.
	Retry *Retrier
	// OnAttempt, when set, is called (synchronously, so it must be quick)
	// after every transaction an operation sends, with the operation's
	// context: commits, verifications, contention, lost answers and how
	// they were resolved. Metrics and tracing attach here.
	OnAttempt func(ctx context.Context, a Attempt)
}

// Engine runs decisions against etcd. Safe for concurrent use.
type Engine struct {
	kv clientv3.KV
	// writeKV is kv without the Retrier's wrapper, which sends a
	// transaction that writes once, as it is: Send sends those on it.
	writeKV        clientv3.KV
	watcher        clientv3.Watcher
	limits         Limits
	maxAttempts    int
	resolveTimeout time.Duration
	markerKey      string
	deleteFence    func(key string) string
	cache          *cache
	log            *slog.Logger
	retry          *Retrier
	onAttempt      func(context.Context, Attempt)
	lastRev        atomic.Int64
	protos         *opPrototypes
	// views are the Views of operations that ended, cleared for the next
	// (a View and its maps are several allocations; most operations need
	// one small View).
	views sync.Pool
}

// New returns an engine over kv (wrapped with the Options' Retrier, so that
// its reads ride out elections). watcher (may be nil) is used to search the
// history when resolving ambiguous commits.
func New(kv clientv3.KV, watcher clientv3.Watcher, opts Options) *Engine {
	retry := opts.Retry
	if retry == nil {
		retry = NewRetrier(RetryOptions{Logger: opts.Logger})
	}
	e := &Engine{
		kv:             retry.KV(kv),
		writeKV:        unwrapRetrying(kv),
		retry:          retry,
		watcher:        watcher,
		limits:         opts.Limits,
		maxAttempts:    opts.MaxAttempts,
		resolveTimeout: opts.ResolveTimeout,
		markerKey:      opts.MarkerKey,
		deleteFence:    opts.DeleteFence,
		cache:          newCache(opts.CacheSize),
		log:            opts.Logger,
		onAttempt:      opts.OnAttempt,
		protos:         newOpPrototypes(),
	}
	if e.maxAttempts <= 0 {
		e.maxAttempts = DefaultMaxAttempts
	}
	if e.resolveTimeout <= 0 {
		e.resolveTimeout = DefaultResolveTimeout
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.deleteFence == nil {
		e.deleteFence = func(string) string { return "" }
	}
	return e
}

// Limits returns the engine's transaction limits.
func (e *Engine) Limits() Limits { return e.limits }

// KV returns the engine's KV client (its reads retried by the engine's
// Retrier).
func (e *Engine) KV() clientv3.KV { return e.kv }

// Retrier returns the engine's Retrier.
func (e *Engine) Retrier() *Retrier { return e.retry }

// ResolveTimeout returns the least time the engine gives the re-reads that
// settle a lost response (Options.ResolveTimeout).
func (e *Engine) ResolveTimeout() time.Duration { return e.resolveTimeout }

// NoteRevision records a header revision seen by a caller's own request.
func (e *Engine) NoteRevision(rev int64) {
	for {
		cur := e.lastRev.Load()
		if rev <= cur || e.lastRev.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// LastRevision returns the highest header revision the engine has seen.
func (e *Engine) LastRevision() int64 { return e.lastRev.Load() }

// Remember offers an observation to the cache (for example a key the caller
// read or wrote itself).
func (e *Engine) Remember(o Observation) {
	e.NoteRevision(o.Revision)
	e.cache.store(o)
}

// Forget drops key from the cache.
func (e *Engine) Forget(key string) { e.cache.forget(key) }

// Cached returns the cached observation of key.
func (e *Engine) Cached(key string) (Observation, bool) { return e.cache.get(key) }

// CacheLen returns the number of cached keys.
func (e *Engine) CacheLen() int { return e.cache.len() }

// maxParallelReads bounds the requests one ReadKeys sends at a time.
const maxParallelReads = 8

// ReadKeys reads keys at one revision: rev, or the latest when rev is 0.
// One key is one Get; several are one Txn of Gets (at most MaxTxnOps per
// request). More keys take several requests, pinned to one revision (the
// first response's when rev is 0) and sent in parallel, a few at a time.
func (e *Engine) ReadKeys(ctx context.Context, keys []string, rev int64) (Observations, error) {
	out := Observations{Revision: rev, Keys: make(map[string]Observation, len(keys))}
	keys = dedupe(keys)
	maxOps := e.limits.maxOps()
	var chunks [][]string
	for start := 0; start < len(keys); start += maxOps {
		chunks = append(chunks, keys[start:min(start+maxOps, len(keys))])
	}
	if out.Revision == 0 && len(chunks) > 1 {
		// The first response pins the revision of the others.
		obs, err := e.readChunk(ctx, chunks[0], &out.Revision)
		if err != nil {
			return Observations{}, err
		}
		for _, o := range obs {
			out.Keys[o.Key] = o
		}
		chunks = chunks[1:]
	}
	results := make([][]Observation, len(chunks))
	errs := make([]error, len(chunks))
	if len(chunks) == 1 {
		results[0], errs[0] = e.readChunk(ctx, chunks[0], &out.Revision)
	} else {
		var wg sync.WaitGroup
		slots := make(chan struct{}, maxParallelReads)
		for i, chunk := range chunks {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				pinned := out.Revision
				results[i], errs[i] = e.readChunk(ctx, chunk, &pinned)
			})
		}
		wg.Wait()
	}
	for i := range chunks {
		if errs[i] != nil {
			return Observations{}, errs[i]
		}
		for _, o := range results[i] {
			out.Keys[o.Key] = o
		}
	}
	for _, o := range out.Keys {
		e.cache.store(o)
	}
	return out, nil
}

// readChunk reads up to MaxTxnOps keys in one request, at *rev when it is
// positive, else at the latest revision, which it then stores in *rev.
func (e *Engine) readChunk(ctx context.Context, chunk []string, rev *int64) ([]Observation, error) {
	var opts []clientv3.OpOption
	if *rev > 0 {
		opts = append(opts, clientv3.WithRev(*rev))
	}
	if len(chunk) == 1 {
		resp, err := e.kv.Get(ctx, chunk[0], opts...)
		if err != nil {
			return nil, err
		}
		e.NoteRevision(resp.Header.Revision)
		if *rev == 0 {
			*rev = resp.Header.Revision
		}
		return []Observation{observe(chunk[0], firstKV(resp.Kvs), *rev)}, nil
	}
	ops := make([]clientv3.Op, len(chunk))
	for i, k := range chunk {
		ops[i] = clientv3.OpGet(k, opts...)
	}
	resp, err := e.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, err
	}
	e.NoteRevision(resp.Header.Revision)
	if *rev == 0 {
		*rev = resp.Header.Revision
	}
	out := make([]Observation, len(chunk))
	for i, k := range chunk {
		rr := resp.Responses[i].GetResponseRange()
		out[i] = observe(k, firstKV(rr.GetKvs()), *rev)
	}
	return out, nil
}

// Outcome describes how an operation ended.
type Outcome struct {
	// Written reports that the commit was applied; Revision is then its
	// revision (the ModRevision of every key it wrote).
	Written  bool
	Revision int64
	// Attempts counts the transactions sent (commits and verifications).
	Attempts int
}

// Decision is one store decision: it reads through the View and returns its
// result and what to write. It may run several times and must have no other
// effect.
type Decision[R any] func(v *View) (R, Commit, error)

// Prefetch names the keys a decision will probably read (others are fetched
// on demand, one round trip per run of the decision that meets them).
type Prefetch struct {
	// Keys are read together first, unless the cache holds every one of
	// them.
	Keys []string
	// Absent are keys expected not to exist, such as keys named after a
	// fresh random id. When the Keys come from the cache, an Absent key the
	// cache does not know is assumed absent without a read: the commit
	// guards its absence, and should it exist after all, the failed guard's
	// Else branch brings it and the decision runs again. When the Keys are
	// read, the Absent keys are read with them.
	Absent []string
}

// Run runs a decision to completion: prefetch names the keys the decision
// will probably read (others are fetched on demand). It returns the result
// of the run whose commit was applied, or of the run that wrote nothing.
// Errors of the decision are returned as they are; etcd errors are wrapped
// (location.ErrUnavailable when nothing was applied, ErrOutcomeUnknown when
// that cannot be known), ErrContention after MaxAttempts.
func Run[R any](ctx context.Context, e *Engine, op string, prefetch []string, decide Decision[R]) (R, Outcome, error) {
	return RunWith(ctx, e, op, Prefetch{Keys: prefetch}, decide)
}

// RunWith is Run with keys expected to be absent (Prefetch.Absent).
func RunWith[R any](ctx context.Context, e *Engine, op string, prefetch Prefetch, decide Decision[R]) (R, Outcome, error) {
	var zero R
	out := Outcome{}
	v, err := e.startView(ctx, prefetch)
	if err != nil {
		return zero, out, Unavailable(op, err)
	}
	// Nothing keeps the operation's last View (its Guarded and Decision
	// calls are over when RunWith returns), so the next one may use it.
	defer func() { e.recycle(v) }()
	var pending []pendingAttempt[R]
	for {
		if out.Attempts >= e.maxAttempts {
			return zero, out, notApplied(op, pending, contentionError(op, out.Attempts))
		}
		res, c, err := decideFully(ctx, e, op, v, decide)
		if err != nil {
			return zero, out, err
		}
		if c.Empty() {
			if v.consistent {
				return res, out, nil
			}
			out.Attempts++
			ok, fresh, err := e.verify(ctx, v)
			if err != nil {
				e.report(ctx, Attempt{Op: op, Number: out.Attempts, Verify: true, Result: AttemptFailed, Err: err})
				return zero, out, notApplied(op, pending, Unavailable(op, err))
			}
			if ok {
				e.report(ctx, Attempt{Op: op, Number: out.Attempts, Verify: true, Result: AttemptVerified})
				return res, out, nil
			}
			r, rev, found := pendingApplied(pending, fresh)
			e.report(ctx, Attempt{Op: op, Number: out.Attempts, Verify: true, Result: AttemptGuardFailed, EarlierApplied: found})
			if found {
				return r, Outcome{Written: true, Revision: rev, Attempts: out.Attempts}, nil
			}
			v = fresh
			continue
		}
		g, err := e.build(op, v, &c)
		if err != nil {
			return zero, out, err
		}
		out.Attempts++
		g.Earlier = pendingNonces(pending)
		g.SentAfter = e.sentAfter(v)
		sent, err := e.Send(ctx, op, g)
		e.report(ctx, sent.attempt(op, out.Attempts, v.nonce, err))
		if sent.Lost && !sent.Applied {
			pending = append(pending, pendingAttempt[R]{nonce: v.nonce, res: res})
		}
		switch {
		case err != nil && errors.Is(err, ErrOutcomeUnknown):
			return zero, out, err
		case err != nil:
			return zero, out, notApplied(op, pending, err)
		case sent.Applied && sent.Nonce == v.nonce:
			e.applied(v, &c, sent.Revision)
			return res, Outcome{Written: true, Revision: sent.Revision, Attempts: out.Attempts}, nil
		case sent.Applied:
			return pendingResult(pending, sent.Nonce), Outcome{Written: true, Revision: sent.Revision, Attempts: out.Attempts}, nil
		case sent.Lost && ctx.Err() != nil:
			return zero, out, fmt.Errorf("%s: not applied: %w", op, ctx.Err())
		case sent.Lost:
			e.log.Debug("txn: ambiguous commit was not applied; retrying", "op", op)
		default:
			e.log.Debug("txn: guard failed; deciding again", "op", op, "attempt", out.Attempts, "revision", sent.Now.Revision)
		}
		v = e.viewOf(v.order, sent.Now)
	}
}

// pendingAttempt is a commit whose outcome was ambiguous and resolved as
// "not applied" at the time; should its nonce turn up later (a late apply),
// its result is the operation's answer.
type pendingAttempt[R any] struct {
	nonce string
	res   R
}

// notApplied returns err, the error of an operation that applied nothing
// (it wraps location.ErrUnavailable), unless an earlier attempt's response
// was lost: that attempt was resolved as "not applied" at the time, but it
// may still be in flight and apply later (its guards still hold if nothing
// else wrote), so the outcome is unknown and the error wraps
// ErrOutcomeUnknown instead (and not location.ErrUnavailable).
func notApplied[R any](op string, pending []pendingAttempt[R], err error) error {
	if len(pending) == 0 {
		return err
	}
	return fmt.Errorf("%s: %w: an earlier attempt whose answer was lost may still apply (%v)", op, ErrOutcomeUnknown, err)
}

// pendingApplied looks for the nonce of an earlier ambiguous attempt in the
// view's observations.
func pendingApplied[R any](pending []pendingAttempt[R], v *View) (R, int64, bool) {
	for _, p := range pending {
		for _, o := range v.obs {
			if o.HasNonce(p.nonce) {
				return p.res, o.ModRevision, true
			}
		}
	}
	var zero R
	return zero, 0, false
}

// pendingNonces returns the nonces of the earlier ambiguous attempts.
func pendingNonces[R any](pending []pendingAttempt[R]) []string {
	out := make([]string, len(pending))
	for i, p := range pending {
		out[i] = p.nonce
	}
	return out
}

// pendingResult returns the result of the earlier attempt whose nonce
// turned up.
func pendingResult[R any](pending []pendingAttempt[R], nonce string) R {
	for _, p := range pending {
		if p.nonce == nonce {
			return p.res
		}
	}
	var zero R
	return zero
}

// maxRecycledView is the size beyond which a View is not kept for reuse.
const maxRecycledView = 64

// newView returns an empty View, a recycled one when there is one.
func (e *Engine) newView() *View {
	if v, ok := e.views.Get().(*View); ok {
		return v
	}
	return newView()
}

// recycle clears v for a later operation (a small v; nil is ignored). The
// caller must not use v again.
func (e *Engine) recycle(v *View) {
	if v == nil || len(v.obs) > maxRecycledView {
		return
	}
	v.reset()
	e.views.Put(v)
}

// startView builds the first view: from the cache when it holds every
// prefetch key (Absent keys it does not hold are assumed absent), else from
// one read of all of them.
func (e *Engine) startView(ctx context.Context, prefetch Prefetch) (*View, error) {
	v := e.newView()
	if len(prefetch.Keys) == 0 && len(prefetch.Absent) == 0 {
		return v, nil
	}
	if e.cache.view(v, prefetch.Keys, prefetch.Absent) {
		return v, nil
	}
	obs, err := e.ReadKeys(ctx, append(prefetch.Keys[:len(prefetch.Keys):len(prefetch.Keys)], prefetch.Absent...), 0)
	if err != nil {
		return nil, err
	}
	for _, o := range obs.Keys {
		v.add(o)
	}
	v.consistent, v.rev = true, obs.Revision
	return v, nil
}

// decideFully runs the decision until it asks for no key the view lacks.
// The decision's errors count only when its view was complete and read at
// one revision.
func decideFully[R any](ctx context.Context, e *Engine, op string, v *View, decide Decision[R]) (R, Commit, error) {
	var zero R
	for range maxMissRounds {
		v.begin(NewNonce())
		res, c, err := decide(v)
		if err != nil {
			// A decision that met absent-looking keys may have failed because
			// of them: decide again with them read. Only an error of a run
			// with a complete view is the decision's answer.
			if len(v.misses) == 0 && v.consistent {
				return zero, Commit{}, err
			}
			if len(v.misses) == 0 {
				// Observations of different revisions (the cache) may form a
				// state that never existed: decide again on one read.
				fresh, ferr := e.reread(ctx, v)
				if ferr != nil {
					return zero, Commit{}, Unavailable(op, ferr)
				}
				*v = *fresh
				continue
			}
			if ferr := e.fetchMisses(ctx, v); ferr != nil {
				return zero, Commit{}, Unavailable(op, ferr)
			}
			continue
		}
		for _, w := range c.Writes {
			if _, ok := v.obs[w.Key]; ok {
				v.guard(w.Key, GuardMod)
			} else {
				v.miss(w.Key)
			}
		}
		if len(v.misses) == 0 {
			return res, c, nil
		}
		if err := e.fetchMisses(ctx, v); err != nil {
			return zero, Commit{}, Unavailable(op, err)
		}
	}
	return zero, Commit{}, fmt.Errorf("%s: %w: the decision kept asking for keys it had not read", op, location.ErrInternal)
}

// fetchMisses reads the view's misses: at the view's revision when it is
// consistent (so it stays consistent), else at the latest revision. A
// compacted revision makes the view read everything again.
func (e *Engine) fetchMisses(ctx context.Context, v *View) error {
	empty := len(v.obs) == 0
	rev := int64(0)
	if v.consistent {
		rev = v.rev
	}
	obs, err := e.ReadKeys(ctx, v.misses, rev)
	if err != nil && rev > 0 && IsCompacted(err) {
		keys := append(mapKeys(v.obs), v.misses...)
		obs, err = e.ReadKeys(ctx, keys, 0)
		if err == nil {
			*v = *newView()
			v.consistent = true
		}
	}
	if err != nil {
		return err
	}
	for _, o := range obs.Keys {
		v.add(o)
	}
	if empty {
		v.consistent, v.rev = true, obs.Revision
	}
	return nil
}

// reread returns a view of every key v holds, read again at one revision.
func (e *Engine) reread(ctx context.Context, v *View) (*View, error) {
	obs, err := e.ReadKeys(ctx, mapKeys(v.obs), 0)
	if err != nil {
		return nil, err
	}
	fresh := newView()
	for _, o := range obs.Keys {
		fresh.add(o)
	}
	fresh.consistent, fresh.rev = true, obs.Revision
	return fresh, nil
}

// verify checks with one transaction that the guards of a decision that
// writes nothing still hold; when they do not, it returns a fresh view of
// the guarded keys.
func (e *Engine) verify(ctx context.Context, v *View) (bool, *View, error) {
	room := newOpRoom(e.protos, keysLength(v.order), len(v.order))
	cmps, gets, _ := appendGuardOps(&room, v, make([]clientv3.Cmp, 0, len(v.order)), make([]clientv3.Op, 0, len(v.order)), nil)
	resp, err := e.kv.Txn(ctx).If(cmps...).Else(gets...).Commit()
	if err != nil {
		return false, nil, err
	}
	e.NoteRevision(resp.Header.Revision)
	if resp.Succeeded {
		e.confirm(v, nil, resp.Header.Revision)
		return true, nil, nil
	}
	return false, e.viewFromElse(v, resp), nil
}

// appendGuardOps appends to cmps the compares of the view's guards, to
// gets the Gets that read the same keys, and to absent the guarded keys
// the view holds absent, their keys' bytes in room.
func appendGuardOps(room *opRoom, v *View, cmps []clientv3.Cmp, gets []clientv3.Op, absent []string) ([]clientv3.Cmp, []clientv3.Op, []string) {
	for _, k := range v.order {
		o := v.obs[k]
		key := room.bytes(k)
		switch {
		case !o.Present:
			cmps = append(cmps, room.compare(pb.Compare_CREATE, pb.Compare_EQUAL, key, 0))
			absent = append(absent, k)
		case v.guards[k] == GuardCreate:
			cmps = append(cmps, room.compare(pb.Compare_CREATE, pb.Compare_EQUAL, key, o.CreateRevision))
		default:
			cmps = append(cmps, room.compare(pb.Compare_MOD, pb.Compare_EQUAL, key, o.ModRevision))
		}
		gets = append(gets, room.get(key))
	}
	return cmps, gets, absent
}

// keysLength is the number of bytes of keys.
func keysLength(keys []string) int {
	n := 0
	for _, k := range keys {
		n += len(k)
	}
	return n
}

// getsOf returns one Get per key.
func (e *Engine) getsOf(keys []string) []clientv3.Op {
	room := newOpRoom(e.protos, keysLength(keys), 0)
	gets := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		gets[i] = room.get(room.bytes(k))
	}
	return gets
}

// viewFromElse builds the view of the guarded keys from the Else branch of
// a failed verification (consistent at its revision).
func (e *Engine) viewFromElse(v *View, resp *clientv3.TxnResponse) *View {
	e.NoteRevision(resp.Header.Revision)
	return e.viewOf(v.order, e.elseObservations(v.order, resp))
}

// elseObservations returns what the Else branch of a failed transaction
// read (one Get per key, in order), and offers it to the cache.
func (e *Engine) elseObservations(keys []string, resp *clientv3.TxnResponse) Observations {
	now := Observations{Revision: resp.Header.Revision, Keys: make(map[string]Observation, len(keys))}
	for i, k := range keys {
		if i >= len(resp.Responses) {
			break
		}
		o := observe(k, firstKV(resp.Responses[i].GetResponseRange().GetKvs()), resp.Header.Revision)
		now.Keys[k] = o
		e.cache.store(o)
	}
	return now
}

// viewOf returns a consistent view of keys as read at one revision.
func (e *Engine) viewOf(keys []string, now Observations) *View {
	fresh := e.newView()
	fresh.consistent, fresh.rev = true, now.Revision
	for _, k := range keys {
		if o, ok := now.Keys[k]; ok {
			fresh.add(o)
		}
	}
	return fresh
}

// sentAfter returns a revision below the revision any commit sent now can
// get: the highest revision seen before sending (every such revision was
// committed before the new commit was sent).
func (e *Engine) sentAfter(v *View) int64 {
	// v.rev is at least the Revision of every observation (View.add).
	return max(v.rev, e.LastRevision())
}

// applied updates the cache after a commit was applied at rev.
func (e *Engine) applied(v *View, c *Commit, rev int64) {
	e.NoteRevision(rev)
	written := newKeySet(len(c.Writes))
	for _, w := range c.Writes {
		written.add(w.Key)
		prev := v.obs[w.Key]
		if w.Delete {
			e.cache.forget(w.Key)
			continue
		}
		o := Observation{Key: w.Key, Present: true, Value: w.Value, ModRevision: rev, CreateRevision: rev, Version: 1, Revision: rev}
		if prev.Present {
			o.CreateRevision, o.Version, o.Lease = prev.CreateRevision, prev.Version+1, prev.Lease
		}
		d := w.Derived
		if at, ok := d.(DerivedAt); ok {
			d = at.DeriveAt(rev)
		}
		e.cache.store(withDerived(o, d))
	}
	e.confirm(v, &written, rev)
}

// confirm records in the cache that the guarded observations of v still held
// at rev (keys in skip excepted; skip may be nil). Only a ModRevision guard
// proves the whole state; a CreateRevision guard proves only the
// incarnation, so those observations keep their revision.
func (e *Engine) confirm(v *View, skip *keySet, rev int64) {
	for _, k := range v.order {
		if v.guards[k] != GuardMod || skip != nil && skip.has(k) {
			continue
		}
		o := v.obs[k]
		o.Revision = rev
		e.cache.store(o)
	}
}

func firstKV[T any](kvs []*T) *T {
	if len(kvs) == 0 {
		return nil
	}
	return kvs[0]
}

// dedupe returns keys without their repeats, in their order: keys itself
// when no key repeats (the usual commit touches each stamp once).
func dedupe(keys []string) []string {
	if len(keys) <= smallKeySet {
		repeats := false
		for i, k := range keys {
			if slices.Contains(keys[:i], k) {
				repeats = true
				break
			}
		}
		if !repeats {
			return keys
		}
		out := make([]string, 0, len(keys))
		for _, k := range keys {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	seen := make(map[string]bool, len(keys))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
