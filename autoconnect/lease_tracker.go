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
	stamper         location.OwnerLivenessStamper
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
	// stamp is the store's stamp of the answers followed holds
	// (LiveOwnerSetVersion; 0: none), of the owners stampOwners, and
	// stampChanges the count of changes when they were read: changes
	// counts the changes of followed, or of the set of followed owners, by
	// anything else (listings, RetainOwners), after which the stamp no
	// longer vouches for followed.
	stamp        int64
	stampOwners  []string
	changes      int64
	stampChanges int64

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

// leaseFlight is a read in progress; done is closed when snap or err is set
// (the owners of one ReadOwnerLiveness call share it).
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
	var stamper location.OwnerLivenessStamper
	if liveness != nil {
		stamper, _ = opts.Store.(location.OwnerLivenessStamper)
	}
	return &LeaseTracker{
		store:           opts.Store,
		liveness:        liveness,
		stamper:         stamper,
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
//
// When the store is also a location.OwnerLivenessStamper (etcdstore) and
// the owners followed are known (RetainOwners), a call reads every
// followed owner in one ReadOwnerLivenessSince, reusing no cached answer,
// and keeps the stamp of the answers: while the next call's stamp is the
// same (etcdstore: no owner key was created or deleted) and nothing else
// changed the followed owners or their recorded liveness, it reads no
// owner and the version stays. A steady mesh then costs a call one small
// request, whatever the number of owners.
func (lt *LeaseTracker) LiveOwnerSetVersion(ctx context.Context) (int64, error) {
	lt.mu.Lock()
	stamped := lt.stamper != nil && lt.retaining
	since, changes, epoch := int64(0), lt.changes, lt.epoch
	var owners []string
	switch {
	case stamped && lt.stamp != 0 && lt.stampChanges == changes:
		since, owners = lt.stamp, lt.stampOwners
	case lt.retaining:
		owners = slices.Collect(maps.Keys(lt.refs))
	default:
		owners = slices.Collect(maps.Keys(lt.snapshots))
	}
	lt.mu.Unlock()
	var snaps []leaseSnapshot
	var stamp int64
	if stamped {
		res, err := lt.stamper.ReadOwnerLivenessSince(ctx, owners, since)
		if err != nil {
			return 0, fmt.Errorf("autoconnect: read owner liveness: %w", err)
		}
		if !res.Changed {
			lt.mu.Lock()
			defer lt.mu.Unlock()
			tickReadsOf(ctx).noteStamp(lt, since)
			return lt.version, nil
		}
		if len(res.Live) != len(owners) {
			return 0, fmt.Errorf("autoconnect: read owner liveness: store answered %d owners for %d", len(res.Live), len(owners))
		}
		stamp, snaps = res.Stamp, lt.landLiveness(ctx, owners, epoch, res.Live)
	} else {
		var err error
		if snaps, err = lt.readAll(ctx, owners); err != nil {
			return 0, err
		}
	}
	now := lt.clock.Now()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.stamp, lt.stampChanges, lt.stampOwners = stamp, changes, owners
	if stamp != 0 {
		tickReadsOf(ctx).noteStamp(lt, stamp)
	}
	same := lt.versioned && len(lt.followed) == len(owners)
	for i, o := range owners {
		if !same {
			break
		}
		was, ok := lt.followed[o]
		same = ok && was == (lt.remainingAt(snaps[i], now) > 0)
	}
	if same {
		return lt.version, nil
	}
	next := make(map[string]bool, len(owners))
	for i, o := range owners {
		next[o] = lt.remainingAt(snaps[i], now) > 0
	}
	lt.versioned = true
	lt.version++
	lt.followed = next
	return lt.version, nil
}

// landLiveness caches the liveness of owners that one read started at
// epoch answered (live, in the same order), for the tick too, and returns
// their snapshots.
func (lt *LeaseTracker) landLiveness(ctx context.Context, owners []string, epoch int64, live []location.OwnerLiveness) []leaseSnapshot {
	reads := tickReadsOf(ctx).of(lt, len(owners))
	snaps := make([]leaseSnapshot, len(owners))
	lt.mu.Lock()
	defer lt.mu.Unlock()
	now := lt.clock.Now()
	for i, o := range owners {
		snap := leaseSnapshot{result: livenessResult(live[i]), fetchedAt: now, epoch: epoch}
		snaps[i] = snap
		if cur, ok := lt.snapshots[o]; !ok || cur.epoch <= snap.epoch {
			lt.snapshots[o] = snap
		}
		if reads != nil && epoch == lt.epoch {
			reads[o] = snap
		}
	}
	return snaps
}

// livenessResult is the ReadOwnerLease answer that a liveness answer
// stands for.
func livenessResult(l location.OwnerLiveness) location.OwnerLeaseReadResult {
	if !l.Live {
		return location.OwnerLeaseReadResult{Kind: location.KindMissing}
	}
	return location.OwnerLeaseReadResult{Kind: location.KindFound, Token: l.Token, LeaseExpiresAt: l.LeaseExpiresAt, StoreNow: l.StoreNow}
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
	lt.retain(scope, slices.Compact(slices.Sorted(slices.Values(ownerIDs))))
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
	tick := tickReadsOf(ctx)
	live := make(map[string]bool, len(distinct))
	read := distinct
	lt.mu.Lock()
	if stamp, ok := tick.stampOf(lt); ok && stamp == lt.stamp && lt.stampChanges == lt.changes {
		// The tick's LiveOwnerSetVersion vouched for every followed
		// owner's liveness: read only the others.
		read = nil
		for _, o := range distinct {
			if l, ok := lt.followed[o]; ok {
				live[o] = l
			} else {
				read = append(read, o)
			}
		}
	}
	lt.mu.Unlock()
	snaps, err := lt.readAll(ctx, read)
	if err != nil {
		return nil, err
	}
	now := lt.clock.Now()
	for i, o := range read {
		live[o] = lt.remainingAt(snaps[i], now) > 0
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.retain(scope, distinct)
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
		lt.changes++
	}
	tickReadsOf(ctx).noteVersion(lt, lt.version)
	return live, nil
}

// retain replaces the owners of scope with distinct (no duplicates),
// counts the scopes of each owner and forgets the cached answers of owners
// in none. Called with mu held.
func (lt *LeaseTracker) retain(scope string, distinct []string) {
	lt.retaining = true
	prev := lt.scopes[scope]
	if len(prev) != len(distinct) || !allIn(prev, distinct) {
		next := make(map[string]struct{}, len(distinct))
		for _, o := range distinct {
			next[o] = struct{}{}
		}
		for o := range prev {
			if _, ok := next[o]; !ok {
				if lt.refs[o]--; lt.refs[o] <= 0 {
					delete(lt.refs, o)
					lt.changes++
				}
			}
		}
		for o := range next {
			if _, ok := prev[o]; !ok {
				if lt.refs[o]++; lt.refs[o] == 1 {
					lt.changes++
				}
			}
		}
		if len(next) == 0 {
			delete(lt.scopes, scope)
		} else {
			lt.scopes[scope] = next
		}
	}
	for o := range lt.snapshots {
		if lt.refs[o] == 0 {
			delete(lt.snapshots, o)
		}
	}
}

// allIn reports whether every one of owners is in set.
func allIn(set map[string]struct{}, owners []string) bool {
	for _, o := range owners {
		if _, ok := set[o]; !ok {
			return false
		}
	}
	return true
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

// joinedFlight is a read in flight that the owner at index of a
// readAllAtOnce call joined.
type joinedFlight struct {
	index  int
	flight *leaseFlight
}

// readAllAtOnce returns the snapshots of owners (distinct) as snapshot
// would, reading the owners that need a read in one ReadOwnerLiveness
// call (and joining reads already in flight). The owners it reads share
// one flight's completion.
func (lt *LeaseTracker) readAllAtOnce(ctx context.Context, owners []string) ([]leaseSnapshot, error) {
	reads := tickReadsOf(ctx).of(lt, len(owners))
	snaps := make([]leaseSnapshot, len(owners))
	var joined []joinedFlight
	var read []string
	var reading []int
	lt.mu.Lock()
	epoch, now := lt.epoch, lt.clock.Now()
	for i, o := range owners {
		if snap, ok := lt.reusable(reads, o, now); ok {
			snaps[i] = snap
			continue
		}
		if f, ok := lt.flights[o]; ok {
			joined = append(joined, joinedFlight{i, f})
			continue
		}
		read, reading = append(read, o), append(reading, i)
	}
	var flights []leaseFlight
	if len(read) > 0 {
		done := make(chan struct{})
		flights = make([]leaseFlight, len(read))
		for k, o := range read {
			flights[k].done = done
			lt.flights[o] = &flights[k]
		}
	}
	lt.mu.Unlock()

	var firstErr error
	if len(read) > 0 {
		res, err := lt.liveness.ReadOwnerLiveness(ctx, read)
		if err == nil && len(res) != len(read) {
			err = fmt.Errorf("store answered %d owners for %d", len(res), len(read))
		}
		lt.mu.Lock()
		landed := lt.clock.Now()
		for k, i := range reading {
			var r location.OwnerLeaseReadResult
			if err == nil {
				r = livenessResult(res[k])
			}
			f := &flights[k]
			lt.land(owners[i], f, epoch, landed, r, err)
			if f.err != nil {
				firstErr = cmp.Or(firstErr, f.err)
				continue
			}
			snaps[i] = f.snap
			if reads != nil {
				reads[owners[i]] = f.snap
			}
		}
		lt.mu.Unlock()
		close(flights[0].done)
	}
	for _, j := range joined {
		snap, err := lt.await(ctx, reads, owners[j.index], j.flight, true)
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		snaps[j.index] = snap
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
	return lt.remainingAt(snap, lt.clock.Now())
}

// remainingAt is remaining at the local monotonic time now.
func (lt *LeaseTracker) remainingAt(snap leaseSnapshot, now time.Duration) time.Duration {
	if snap.result.Kind != location.KindFound {
		return 0
	}
	ttl := snap.result.LeaseExpiresAt.Sub(snap.result.StoreNow)
	if snap.result.LeaseExpiresAt.IsZero() {
		ttl = cmp.Or(lt.pollingInterval, time.Second)
	}
	return ttl - (now - snap.fetchedAt)
}

// reusable returns ownerID's cached lease when it is younger than the
// polling interval and still live at now, or the answer a read of the same
// tick got (reads: the tick's answers of lt). Called with mu held.
func (lt *LeaseTracker) reusable(reads map[string]leaseSnapshot, ownerID string, now time.Duration) (leaseSnapshot, bool) {
	if cur, ok := lt.snapshots[ownerID]; ok && cur.epoch == lt.epoch && now-cur.fetchedAt < lt.pollingInterval && lt.remainingAt(cur, now) > 0 {
		return cur, true
	}
	if snap, ok := reads[ownerID]; ok && snap.epoch == lt.epoch {
		return snap, true
	}
	return leaseSnapshot{}, false
}

// snapshot returns ownerID's reusable lease (reusable), and reads it
// otherwise (joining a read already in flight).
func (lt *LeaseTracker) snapshot(ctx context.Context, ownerID string) (leaseSnapshot, error) {
	reads := tickReadsOf(ctx).of(lt, 0)
	lt.mu.Lock()
	if snap, ok := lt.reusable(reads, ownerID, lt.clock.Now()); ok {
		lt.mu.Unlock()
		return snap, nil
	}
	if f, ok := lt.flights[ownerID]; ok {
		lt.mu.Unlock()
		return lt.await(ctx, reads, ownerID, f, true)
	}
	f := &leaseFlight{done: make(chan struct{})}
	lt.flights[ownerID] = f
	epoch := lt.epoch
	lt.mu.Unlock()

	res, err := lt.store.ReadOwnerLease(ctx, ownerID)

	lt.mu.Lock()
	lt.land(ownerID, f, epoch, lt.clock.Now(), res, err)
	lt.mu.Unlock()
	close(f.done)
	return lt.await(ctx, reads, ownerID, f, false)
}

// land ends the read f of ownerID, started at epoch, with its answer got
// at the local time now: the flight is no longer in flight, and a
// successful answer is cached. The caller closes f.done after it. Called
// with mu held.
func (lt *LeaseTracker) land(ownerID string, f *leaseFlight, epoch int64, now time.Duration, res location.OwnerLeaseReadResult, err error) {
	if lt.flights[ownerID] == f {
		delete(lt.flights, ownerID)
	}
	if err != nil {
		f.err = fmt.Errorf("autoconnect: read owner lease %q: %w", ownerID, err)
	} else {
		f.snap = leaseSnapshot{result: res, fetchedAt: now, epoch: epoch}
		if cur, ok := lt.snapshots[ownerID]; !ok || cur.epoch <= epoch {
			lt.snapshots[ownerID] = f.snap
		}
	}
}

// await returns the answer of the read f of ownerID, waiting for it when
// the check joined another's read (joined: joinedFlight is told), and
// records it for the tick.
func (lt *LeaseTracker) await(ctx context.Context, reads map[string]leaseSnapshot, ownerID string, f *leaseFlight, joined bool) (leaseSnapshot, error) {
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
	if reads != nil {
		lt.mu.Lock()
		reads[ownerID] = f.snap
		lt.mu.Unlock()
	}
	return f.snap, nil
}
