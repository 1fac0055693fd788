package autoconnect

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/recorded"
	"github.com/zlink-systems/zlink-etcd/location"
)

// livenessStore is a fakeLeaseStore that also reads many owners at once
// (location.OwnerLivenessReader), from the same programmed answers, with
// their expiries or (withoutExpiry, as etcdstore) without; it records each
// batch.
type livenessStore struct {
	*fakeLeaseStore
	withoutExpiry bool

	batches recorded.Log[[]string]

	mu   sync.Mutex
	fail error
}

// ReadOwnerLiveness implements location.OwnerLivenessReader.
func (s *livenessStore) ReadOwnerLiveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, error) {
	s.batches.Add(slices.Clone(ownerIDs))
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	out := make([]location.OwnerLiveness, len(ownerIDs))
	for i, o := range ownerIDs {
		r, err := s.ReadOwnerLease(ctx, o)
		if err != nil {
			return nil, err
		}
		if r.Kind == location.KindFound {
			out[i] = location.OwnerLiveness{Live: true, Token: r.Token}
			if !s.withoutExpiry {
				out[i].LeaseExpiresAt, out[i].StoreNow = r.LeaseExpiresAt, r.StoreNow
			}
		}
	}
	return out, nil
}

// With a store that reads many owners at once, a tick's owners are read in
// one call: the version check reads every followed owner that needs a
// read, a listing the ones the version check has not read.
func TestTrackerReadsOwnersAtOnce(t *testing.T) {
	ctx := context.Background()
	store := &livenessStore{fakeLeaseStore: newFakeLeaseStore()}
	for _, o := range []string{"a", "b", "c"} {
		store.set(o, found(15_000))
	}
	clock := newFakeClock()
	lt := newTracker(t, store, clock, 1000)
	lt.RetainOwners("scope", []string{"a", "b", "c", "d"})

	_, err := lt.LiveOwnerSetVersion(ctx)
	require.NoError(t, err)
	batches := store.batches.Take()
	require.Len(t, batches, 1)
	require.ElementsMatch(t, []string{"a", "b", "c", "d"}, batches[0])

	// Within the polling interval, live answers are reused and missing
	// owners read again; a change notification makes every answer stale.
	_, err = lt.LiveOwnerSetVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"d"}}, store.batches.Take())
	lt.InvalidateLiveness()
	tick := withTickReads(ctx)
	_, err = lt.LiveOwnerSetVersion(tick)
	require.NoError(t, err)
	require.Len(t, store.batches.Take()[0], 4)
	live, err := lt.listOwners(tick, "scope", []string{"a", "d", "e"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"a": true, "d": false, "e": false}, live)
	require.Equal(t, [][]string{{"e"}}, store.batches.Take(), "the tick's answers are reused; e is new")
	require.Equal(t, 2, store.count("a"), "a was read twice, in batches")
}

// An answer without an expiry (etcd: the lease is live now) counts as live
// for one polling interval from its read; one with an expiry ages as a
// ReadOwnerLease answer does.
func TestTrackerTrustsLivenessWithoutExpiryForOneInterval(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		withoutExpiry bool
		pollingMs     int64
		ttlMs         int64
		liveAt        []int64 // ms after the read, each checked with a fresh tick
		deadAt        []int64
	}{
		{"without_expiry", true, 1000, 500, []int64{0, 999}, []int64{1000}},
		{"with_expiry", false, 1000, 500, []int64{0, 499}, []int64{500}},
		{"without_expiry_no_polling", true, 0, 500, []int64{0, 999}, []int64{1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &livenessStore{fakeLeaseStore: newFakeLeaseStore(), withoutExpiry: tc.withoutExpiry}
			store.set("a", found(tc.ttlMs))
			clock := newFakeClock()
			lt := newTracker(t, store, clock, tc.pollingMs)
			snaps, err := lt.readAll(ctx, []string{"a"})
			require.NoError(t, err)
			snap := snaps[0]
			for _, at := range tc.liveAt {
				clock.Set(time.Duration(at) * time.Millisecond)
				require.Positive(t, lt.remaining(snap), "live %d ms after the read", at)
			}
			for _, at := range tc.deadAt {
				clock.Set(time.Duration(at) * time.Millisecond)
				require.LessOrEqual(t, lt.remaining(snap), time.Duration(0), "not trusted %d ms after the read", at)
			}
		})
	}
}

// A single check of an owner that a batch is reading joins that read; a
// failed batch fails every owner it read, and caches nothing.
func TestTrackerBatchFlights(t *testing.T) {
	ctx := context.Background()
	store := &livenessStore{fakeLeaseStore: newFakeLeaseStore()}
	store.set("a", found(15_000))
	store.gate, store.entered = make(chan struct{}), make(chan string, 4)
	lt := newTracker(t, store, newFakeClock(), 1000)
	joined := make(chan string, 1)
	lt.joinedFlight = func(o string) { joined <- o }
	done := make(chan error, 1)
	go func() {
		_, err := lt.readAll(ctx, []string{"a"})
		done <- err
	}()
	require.Equal(t, "a", <-store.entered)
	single := make(chan bool, 1)
	go func() {
		live, err := lt.IsOwnerLive(ctx, "a")
		require.NoError(t, err)
		single <- live
	}()
	require.Equal(t, "a", <-joined)
	close(store.gate)
	require.NoError(t, <-done)
	require.True(t, <-single)
	require.Equal(t, 1, store.count("a"), "one read for both")

	store.gate, store.entered = nil, nil
	lt.InvalidateLiveness()
	store.mu.Lock()
	store.fail = errors.New("etcd is away")
	store.mu.Unlock()
	_, err := lt.readAll(ctx, []string{"a", "b"})
	require.ErrorContains(t, err, "etcd is away")
	require.Empty(t, cachedOwnersAfter(lt, 1), "nothing cached after a failed batch")
}

// cachedOwnersAfter returns the owners whose cached answer is of epoch at
// least epoch.
func cachedOwnersAfter(lt *LeaseTracker, epoch int64) []string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	var out []string
	for o, s := range lt.snapshots {
		if s.epoch >= epoch {
			out = append(out, o)
		}
	}
	return out
}
