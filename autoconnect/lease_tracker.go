package autoconnect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// LeaseTrackerOptions configure a LeaseTracker.
type LeaseTrackerOptions struct {
	// Store reads owner leases. Required.
	Store OwnerLeaseReader
	// Options supplies PollingInterval, the age up to which a live owner's
	// lease is reused without a read.
	Options Options
	// Clock is the monotonic clock; nil means SystemClock().
	Clock Clock
}

// LeaseTracker answers "is this owner alive?" from ReadOwnerLease, caching
// each live answer for one polling interval (or until InvalidateLiveness)
// and ageing it by local monotonic time. Missing or expired owners are read again on every check, so a newly
// claimed owner is seen at once. Concurrent checks of the same owner share
// one read. Safe for concurrent use.
type LeaseTracker struct {
	store           OwnerLeaseReader
	pollingInterval time.Duration
	clock           Clock

	mu        sync.Mutex
	snapshots map[string]leaseSnapshot
	flights   map[string]*leaseFlight
	// epoch counts InvalidateLiveness calls; a snapshot of an older epoch is
	// never reused.
	epoch int64
	// fingerprint is the sorted, newline-joined live owner set last seen by
	// LiveOwnerSetVersion; fingerprinted is false before its first call.
	fingerprint   string
	fingerprinted bool
	version       int64

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
	clock := opts.Clock
	if clock == nil {
		clock = SystemClock()
	}
	return &LeaseTracker{
		store:           opts.Store,
		pollingInterval: t.pollingInterval,
		clock:           clock,
		snapshots:       map[string]leaseSnapshot{},
		flights:         map[string]*leaseFlight{},
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

// LiveOwnerSetVersion refreshes every owner the tracker has seen and returns
// a counter that moves whenever the set of live owners changed since the
// previous call. The first call returns 1.
func (lt *LeaseTracker) LiveOwnerSetVersion(ctx context.Context) (int64, error) {
	lt.mu.Lock()
	owners := make([]string, 0, len(lt.snapshots))
	for o := range lt.snapshots {
		owners = append(owners, o)
	}
	lt.mu.Unlock()
	slices.Sort(owners)
	live := make([]string, 0, len(owners))
	for _, o := range owners {
		snap, err := lt.snapshot(ctx, o)
		if err != nil {
			return 0, err
		}
		if lt.remaining(snap) > 0 && snap.result.Token.OwnerID != "" {
			live = append(live, snap.result.Token.OwnerID)
		}
	}
	slices.Sort(live)
	fp := strings.Join(live, "\n")
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if !lt.fingerprinted || fp != lt.fingerprint {
		lt.fingerprint, lt.fingerprinted = fp, true
		lt.version++
	}
	return lt.version, nil
}

// InvalidateLiveness makes the next check of every owner read the store
// again, however young its cached answer; a read already in flight is not
// reused by later checks. A Loop calls it on every change notification, so
// that the tick it triggers sees a lease that has just ended (the owners
// the tracker has seen are kept for LiveOwnerSetVersion).
func (lt *LeaseTracker) InvalidateLiveness() {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.epoch++
	clear(lt.flights)
}

// remaining returns the lease time left in snap: the TTL the store reported
// at the read, less the local time since the read; not positive when the
// owner had no lease.
func (lt *LeaseTracker) remaining(snap leaseSnapshot) time.Duration {
	if snap.result.Kind != location.KindFound {
		return 0
	}
	ttl := snap.result.LeaseExpiresAt.Sub(snap.result.StoreNow)
	return ttl - (lt.clock.Now() - snap.fetchedAt)
}

// snapshot returns ownerID's cached lease when it is younger than the
// polling interval and still live, and reads it otherwise (joining a read
// already in flight).
func (lt *LeaseTracker) snapshot(ctx context.Context, ownerID string) (leaseSnapshot, error) {
	lt.mu.Lock()
	if cur, ok := lt.snapshots[ownerID]; ok && cur.epoch == lt.epoch && lt.clock.Now()-cur.fetchedAt < lt.pollingInterval && lt.remaining(cur) > 0 {
		lt.mu.Unlock()
		return cur, nil
	}
	if f, ok := lt.flights[ownerID]; ok {
		joined := lt.joinedFlight
		lt.mu.Unlock()
		if joined != nil {
			joined(ownerID)
		}
		select {
		case <-f.done:
			return f.snap, f.err
		case <-ctx.Done():
			return leaseSnapshot{}, fmt.Errorf("autoconnect: read owner lease %q: %w", ownerID, ctx.Err())
		}
	}
	f := &leaseFlight{done: make(chan struct{})}
	lt.flights[ownerID] = f
	epoch := lt.epoch
	lt.mu.Unlock()

	res, err := lt.store.ReadOwnerLease(ctx, ownerID)

	lt.mu.Lock()
	defer lt.mu.Unlock()
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
	return f.snap, f.err
}
