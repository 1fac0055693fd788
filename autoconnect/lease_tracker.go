package autoconnect

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// LeaseTrackerOptions configure a LeaseTracker.
type LeaseTrackerOptions struct {
	// Store reads owner leases, from several goroutines at once. Required.
	// When it is also a location.OwnerLivenessReader (etcdstore, memstore),
	// the owners a tick needs are read in one call.
	Store OwnerLeaseReader
	// Options supplies PollingInterval, the age up to which a live owner's
	// lease is reused without a read.
	Options Options
	// Clock is the monotonic clock; nil means SystemClock().
	Clock Clock
}

// maxConcurrentLeaseReads bounds the owner-lease reads that one
// LiveOwnerSetVersion call, or one listing's liveness checks, run at once
// (the framework starts them all at once).
const maxConcurrentLeaseReads = 8

// LeaseTracker answers "is this owner alive?" from ReadOwnerLease, caching
// each live answer for one polling interval (or until InvalidateLiveness)
// and ageing it by local monotonic time. Missing or expired owners are read
// again on every check, so a newly claimed owner is seen at once; within
// one tick of a Reconciler or Loop (or one listing of a source) every
// answer is reused, so a tick reads each owner's lease at most once.
// Concurrent checks of the same owner share one read.
//
// The tracker keeps only the owners it still needs: once a source has
// reported what its listings referenced (RetainOwners), an owner that no
// latest listing references is forgotten, and LiveOwnerSetVersion reads
// only the referenced owners. Safe for concurrent use.
//
// When the store is a location.OwnerLivenessReader, LiveOwnerSetVersion
// and a listing's liveness checks read all the owners they need in one
// ReadOwnerLiveness call (etcdstore answers it with one request, from its
// watch cache), instead of one ReadOwnerLease per owner; single checks
// (IsOwnerLive outside a listing) still read one lease. An answer that
// carries no expiry (etcdstore: the lease is live now, and its end comes
// as a change notification) counts as live for one polling interval from
// its read (one second when the interval is 0).
type LeaseTracker struct {
	store           OwnerLeaseReader
	liveness        location.OwnerLivenessReader
	pollingInterval time.Duration
	clock           Clock

	mu        sync.Mutex
	snapshots map[string]leaseSnapshot
	flights   map[string]*leaseFlight
	// epoch counts InvalidateLiveness calls; a snapshot of an older epoch is
	// never reused.
	epoch int64
	// scopes holds, per listing scope, the owners its latest complete
	// listing referenced; refs counts in how many scopes each owner is.
	// retaining is set by the first RetainOwners call.
	scopes    map[string]map[string]struct{}
	refs      map[string]int
	retaining bool
	// followed holds the liveness of every followed owner as last used: by
	// LiveOwnerSetVersion, or by a listing (listOwners) after it. version
	// moves whenever followed changes; versioned is false before the first
	// LiveOwnerSetVersion call.
	followed  map[string]bool
	versioned bool
	version   int64

	// joinedFlight, when set (by tests), is called when a check joins
	// another check's read.
	joinedFlight func(ownerID string)
}

// leaseSnapshot is one read of an owner lease, when it was taken, and the
// tracker's epoch when the read started.
type leaseSnapshot struct {
	result    location.OwnerLeaseReadResult
	fetchedAt time.Duration
	epoch     int64
}

// leaseFlight is a read in progress; done is closed when snap or err is set.
type leaseFlight struct {
	done chan struct{}
	snap leaseSnapshot
	err  error
}

// NewLeaseTracker returns a tracker with an empty cache.
func NewLeaseTracker(opts LeaseTrackerOptions) (*LeaseTracker, error) {
	if opts.Store == nil {
		return nil, location.NewTypeError("autoconnect.lease_store", "lease tracker needs an owner lease store")
	}
	t, err := opts.Options.resolve()
	if err != nil {
		return nil, err
	}
	liveness, _ := opts.Store.(location.OwnerLivenessReader)
	return &LeaseTracker{
		store:           opts.Store,
		liveness:        liveness,
		pollingInterval: t.pollingInterval,
		clock:           cmp.Or(opts.Clock, SystemClock()),
		snapshots:       map[string]leaseSnapshot{},
		flights:         map[string]*leaseFlight{},
		scopes:          map[string]map[string]struct{}{},
		refs:            map[string]int{},
	}, nil
}

// IsOwnerLive reports whether ownerID holds a lease with time left. The lease
// generation is not compared. A read error is returned as is and nothing is
// cached.
func (lt *LeaseTracker) IsOwnerLive(ctx context.Context, ownerID string) (bool, error) {
	snap, err := lt.snapshot(ctx, ownerID)
	if err != nil {
		return false, err
	}
	return lt.remaining(snap) > 0, nil
}

// RemainingLease returns how long ownerID's lease has left (0 when it has
// none).
func (lt *LeaseTracker) RemainingLease(ctx context.Context, ownerID string) (time.Duration, error) {
	snap, err := lt.snapshot(ctx, ownerID)
	if err != nil {
		return 0, err
	}
	return max(0, lt.remaining(snap)), nil
}

// RemainingOwnerTokenLease is RemainingLease for one incarnation: 0 unless
// the stored lease generation equals the token's.
func (lt *LeaseTracker) RemainingOwnerTokenLease(ctx context.Context, token location.OwnerToken) (time.Duration, error) {
	snap, err := lt.snapshot(ctx, token.OwnerID)
	if err != nil {
		return 0, err
	}
	if snap.result.Kind != location.KindFound || snap.result.Token.LeaseGeneration != token.LeaseGeneration {
		return 0, nil
	}
	return max(0, lt.remaining(snap)), nil
}

// LiveOwnerSetVersion refreshes every owner the tracker follows and returns
// a counter that moves whenever the liveness of a followed owner changed,
// or an owner started or stopped being followed (dead ones included), since
// it was last used: by the previous call, or by a source's listing after
// it. The owners followed are those the latest listing of each scope
// referenced (RetainOwners), live or not, so that an owner whose listed row
// outlived its lease is seen when it claims a lease again; before any
// listing, every owner the tracker has seen. The first call returns 1.
//
// A listing that follows a call records the answers it used, so that a
// Loop can remember the version its reconciliation acted on: an owner a
// listing saw live for the first time and that died before the next call
// moves the version (the framework compares only the sets of live owners
// the calls read, and misses it).
func (lt *LeaseTracker) LiveOwnerSetVersion(ctx context.Context) (int64, error) {
	lt.mu.Lock()
	var owners []string
	if lt.retaining {
		owners = slices.Collect(maps.Keys(lt.refs))
	} else {
		owners = slices.Collect(maps.Keys(lt.snapshots))
	}
	lt.mu.Unlock()
	snaps, err := lt.readAll(ctx, owners)
	if err != nil {
		return 0, err
	}
	next := make(map[string]bool, len(owners))
	for i, o := range owners {
		next[o] = lt.remaining(snaps[i]) > 0
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if !lt.versioned || !maps.Equal(next, lt.followed) {
		lt.versioned = true
		lt.version++
	}
	lt.followed = next
	return lt.version, nil
}

// RetainOwners implements OwnerRetainer: ownerIDs are the owners the latest
// complete listing of scope referenced. From the first call on, the tracker
// keeps the cached answers of referenced owners only (an owner referenced
// by no scope is forgotten now; one checked outside any listing, at the
// next call), and LiveOwnerSetVersion reads only the referenced owners. A
// listing that references nobody drops its scope. The sources of this
// package call it with the answers they used (listOwners).
func (lt *LeaseTracker) RetainOwners(scope string, ownerIDs []string) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.retain(scope, ownerIDs)
	if lt.unfollow() {
		lt.version++
	}
}

// listOwners is a source's liveness check of one complete listing of scope:
// it reports which of owners hold a live lease (IsOwnerLive), reading the
// distinct owners that need a read concurrently, retains owners for scope
// (RetainOwners) and, once LiveOwnerSetVersion has been called, records the
// answers as the followed owners' liveness; the version that leaves is
// noted in ctx's tickReads for the Loop.
func (lt *LeaseTracker) listOwners(ctx context.Context, scope string, owners []string) (map[string]bool, error) {
	distinct := slices.Compact(slices.Sorted(slices.Values(owners)))
	snaps, err := lt.readAll(ctx, distinct)
	if err != nil {
		return nil, err
	}
	live := make(map[string]bool, len(distinct))
	for i, o := range distinct {
		live[o] = lt.remaining(snaps[i]) > 0
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.retain(scope, owners)
	if !lt.versioned {
		return live, nil
	}
	changed := lt.unfollow()
	for o, l := range live {
		if was, ok := lt.followed[o]; !ok || was != l {
			lt.followed[o] = l
			changed = true
		}
	}
	if changed {
		lt.version++
	}
	tickReadsOf(ctx).noteVersion(lt, lt.version)
	return live, nil
}

// retain replaces the owners of scope, counts the scopes of each owner and
// forgets the cached answers of owners in none. Called with mu held.
func (lt *LeaseTracker) retain(scope string, ownerIDs []string) {
	next := make(map[string]struct{}, len(ownerIDs))
	for _, o := range ownerIDs {
		next[o] = struct{}{}
	}
	lt.retaining = true
	prev := lt.scopes[scope]
	for o := range prev {
		if _, ok := next[o]; !ok {
			if lt.refs[o]--; lt.refs[o] <= 0 {
				delete(lt.refs, o)
			}
		}
	}
	for o := range next {
		if _, ok := prev[o]; !ok {
			lt.refs[o]++
		}
	}
	if len(next) == 0 {
		delete(lt.scopes, scope)
	} else {
		lt.scopes[scope] = next
	}
	for o := range lt.snapshots {
		if lt.refs[o] == 0 {
			delete(lt.snapshots, o)
		}
	}
}

// unfollow drops the owners no scope references from followed and reports
// whether there were any. Called with mu held, after retain.
func (lt *LeaseTracker) unfollow() bool {
	dropped := false
	for o := range lt.followed {
		if lt.refs[o] == 0 {
			delete(lt.followed, o)
			dropped = true
		}
	}
	return dropped
}

// readAll returns the snapshots of owners (distinct): in one
// ReadOwnerLiveness call when the store has it (readAllAtOnce), otherwise
// one snapshot each, running at most maxConcurrentLeaseReads at once. After
// the first error no further owner is started, and that error is returned.
func (lt *LeaseTracker) readAll(ctx context.Context, owners []string) ([]leaseSnapshot, error) {
	if lt.liveness != nil {
		return lt.readAllAtOnce(ctx, owners)
	}
	snaps := make([]leaseSnapshot, len(owners))
	var (
		next     atomic.Int64
		failed   atomic.Bool
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	work := func() {
		for !failed.Load() {
			i := int(next.Add(1)) - 1
			if i >= len(owners) {
				return
			}
			snap, err := lt.snapshot(ctx, owners[i])
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				failed.Store(true)
				return
			}
			snaps[i] = snap
		}
	}
	for range min(len(owners), maxConcurrentLeaseReads) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return snaps, firstErr
}

// readAllAtOnce returns the snapshots of owners (distinct) as snapshot
// would, reading the owners that need a read in one ReadOwnerLiveness
// call (and joining reads already in flight).
func (lt *LeaseTracker) readAllAtOnce(ctx context.Context, owners []string) ([]leaseSnapshot, error) {
	tick := tickReadsOf(ctx)
	snaps := make([]leaseSnapshot, len(owners))
	flights := make([]*leaseFlight, len(owners))
	joined := make([]bool, len(owners))
	var read []string
	var reading []int
	lt.mu.Lock()
	epoch := lt.epoch
	for i, o := range owners {
		if snap, ok := lt.reusable(tick, o); ok {
			snaps[i] = snap
			continue
		}
		if f, ok := lt.flights[o]; ok {
			flights[i], joined[i] = f, true
			continue
		}
		f := &leaseFlight{done: make(chan struct{})}
		lt.flights[o], flights[i] = f, f
		read, reading = append(read, o), append(reading, i)
	}
	lt.mu.Unlock()

	if len(read) > 0 {
		res, err := lt.liveness.ReadOwnerLiveness(ctx, read)
		if err == nil && len(res) != len(read) {
			err = fmt.Errorf("store answered %d owners for %d", len(res), len(read))
		}
		lt.mu.Lock()
		for k, i := range reading {
			var r location.OwnerLeaseReadResult
			if err == nil && res[k].Live {
				r = location.OwnerLeaseReadResult{Kind: location.KindFound, Token: res[k].Token,
					LeaseExpiresAt: res[k].LeaseExpiresAt, StoreNow: res[k].StoreNow}
			} else if err == nil {
				r = location.OwnerLeaseReadResult{Kind: location.KindMissing}
			}
			lt.land(owners[i], flights[i], epoch, r, err)
		}
		lt.mu.Unlock()
	}
	var firstErr error
	for i, f := range flights {
		if f == nil {
			continue
		}
		snap, err := lt.await(ctx, tick, owners[i], f, joined[i])
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		snaps[i] = snap
	}
	return snaps, firstErr
}

// InvalidateLiveness makes the next check of every owner read the store
// again, however young its cached answer (also within a tick); a read
// already in flight is not reused by later checks. A Loop calls it on every
// change notification, so that the tick it triggers sees a lease that has
// just ended (the owners the tracker needs are kept for
// LiveOwnerSetVersion).
func (lt *LeaseTracker) InvalidateLiveness() {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.epoch++
	clear(lt.flights)
}

// remaining returns the lease time left in snap: the TTL the store reported
// at the read, less the local time since the read; not positive when the
// owner had no lease. An answer without an expiry (ReadOwnerLiveness) is
// trusted for one polling interval from its read (one second when the
// interval is 0).
func (lt *LeaseTracker) remaining(snap leaseSnapshot) time.Duration {
	if snap.result.Kind != location.KindFound {
		return 0
	}
	ttl := snap.result.LeaseExpiresAt.Sub(snap.result.StoreNow)
	if snap.result.LeaseExpiresAt.IsZero() {
		ttl = cmp.Or(lt.pollingInterval, time.Second)
	}
	return ttl - (lt.clock.Now() - snap.fetchedAt)
}

// reusable returns ownerID's cached lease when it is younger than the
// polling interval and still live, or the answer a read of the same tick
// got. Called with mu held.
func (lt *LeaseTracker) reusable(tick *tickReads, ownerID string) (leaseSnapshot, bool) {
	if cur, ok := lt.snapshots[ownerID]; ok && cur.epoch == lt.epoch && lt.clock.Now()-cur.fetchedAt < lt.pollingInterval && lt.remaining(cur) > 0 {
		return cur, true
	}
	if snap, ok := tick.get(lt, ownerID); ok && snap.epoch == lt.epoch {
		return snap, true
	}
	return leaseSnapshot{}, false
}

// snapshot returns ownerID's reusable lease (reusable), and reads it
// otherwise (joining a read already in flight).
func (lt *LeaseTracker) snapshot(ctx context.Context, ownerID string) (leaseSnapshot, error) {
	tick := tickReadsOf(ctx)
	lt.mu.Lock()
	if snap, ok := lt.reusable(tick, ownerID); ok {
		lt.mu.Unlock()
		return snap, nil
	}
	if f, ok := lt.flights[ownerID]; ok {
		lt.mu.Unlock()
		return lt.await(ctx, tick, ownerID, f, true)
	}
	f := &leaseFlight{done: make(chan struct{})}
	lt.flights[ownerID] = f
	epoch := lt.epoch
	lt.mu.Unlock()

	res, err := lt.store.ReadOwnerLease(ctx, ownerID)

	lt.mu.Lock()
	lt.land(ownerID, f, epoch, res, err)
	lt.mu.Unlock()
	return lt.await(ctx, tick, ownerID, f, false)
}

// land ends the read f of ownerID, started at epoch, with its answer:
// the flight is done, and a successful answer is cached. Called with mu
// held.
func (lt *LeaseTracker) land(ownerID string, f *leaseFlight, epoch int64, res location.OwnerLeaseReadResult, err error) {
	if lt.flights[ownerID] == f {
		delete(lt.flights, ownerID)
	}
	if err != nil {
		f.err = fmt.Errorf("autoconnect: read owner lease %q: %w", ownerID, err)
	} else {
		f.snap = leaseSnapshot{result: res, fetchedAt: lt.clock.Now(), epoch: epoch}
		if cur, ok := lt.snapshots[ownerID]; !ok || cur.epoch <= epoch {
			lt.snapshots[ownerID] = f.snap
		}
	}
	close(f.done)
}

// await returns the answer of the read f of ownerID, waiting for it when
// the check joined another's read (joined: joinedFlight is told), and
// records it for the tick.
func (lt *LeaseTracker) await(ctx context.Context, tick *tickReads, ownerID string, f *leaseFlight, joined bool) (leaseSnapshot, error) {
	if joined {
		if hook := lt.joinedFlight; hook != nil {
			hook(ownerID)
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return leaseSnapshot{}, fmt.Errorf("autoconnect: read owner lease %q: %w", ownerID, ctx.Err())
		}
	}
	if f.err != nil {
		return leaseSnapshot{}, f.err
	}
	tick.put(lt, ownerID, f.snap)
	return f.snap, nil
}
