package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Deliberately broken stores that only the suite's own scenarios (LSX-…,
// CW-…) catch: each wraps memstore with one realistic bug, and the suite
// must fail exactly the expected scenarios — no catalogue scenario fails.
// The same wrappers without a bug pass everything, so each failure is the
// bug's.

// brokenHarness is memstore behind wrap, with every capability memstore has.
// wrap returns the store under test and the harness's expiry hook.
func brokenHarness(name string, wrap func(s *memstore.Store, clk *clock.Manual) (location.Store, func(context.Context, string) error)) conformance.Harness {
	return conformance.Harness{
		Name: name,
		NewFixture: func(conformance.TB) conformance.Fixture {
			f, s, clk := memFixture(conformance.T0())
			f.Store, f.ExpireOwnerLease = wrap(s, clk)
			return f
		},
		Capabilities: conformance.Capabilities{ExactNumbers: true, InMemorySemantics: true,
			OwnerLeaseCounterHook: true, AuthorityCounterHook: true, MeshNodeChangeStamp: true},
		// memstore notifies before a write returns: a short wait suffices.
		NotifyTimeout: 200 * time.Millisecond,
	}
}

// leaseCacheBugs are the mistakes a ReadOwnerLease cache can make.
type leaseCacheBugs struct {
	// expiryHook: the harness's expiry does not drop the cached answer.
	expiryHook bool
	// clock: a cached lease is served after its expiry.
	clock bool
	// renew, release, claim: the store's own call does not drop the
	// cached answer of its owner.
	renew, release, claim bool
}

// leaseReadCache answers ReadOwnerLease from a read-through cache per owner
// id, as a store with an expensive read might. Without bugs it is correct:
// its own claims, renewals and releases and the expiry hook drop the owner's
// entry, and a cached lease is served only before its expiry by the store
// clock.
type leaseReadCache struct {
	*memstore.Store
	clk  *clock.Manual
	bugs leaseCacheBugs

	mu    sync.Mutex
	cache map[string]location.OwnerLeaseReadResult
}

func newLeaseReadCache(bugs leaseCacheBugs) func(*memstore.Store, *clock.Manual) (location.Store, func(context.Context, string) error) {
	return func(s *memstore.Store, clk *clock.Manual) (location.Store, func(context.Context, string) error) {
		c := &leaseReadCache{Store: s, clk: clk, bugs: bugs, cache: map[string]location.OwnerLeaseReadResult{}}
		return c, func(ctx context.Context, ownerID string) error {
			if !bugs.expiryHook {
				c.drop(ownerID)
			}
			return s.ExpireOwnerLease(ctx, ownerID)
		}
	}
}

func (c *leaseReadCache) drop(ownerID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cache, ownerID)
}

// ReadOwnerLease serves the cached answer while it is valid.
func (c *leaseReadCache) ReadOwnerLease(ctx context.Context, ownerID string) (location.OwnerLeaseReadResult, error) {
	if err := ctx.Err(); err != nil {
		return location.OwnerLeaseReadResult{}, err
	}
	if err := location.ValidateOwnerID(ownerID); err != nil {
		return location.OwnerLeaseReadResult{}, err
	}
	c.mu.Lock()
	r, ok := c.cache[ownerID]
	c.mu.Unlock()
	if ok && (r.Kind == location.KindMissing || c.bugs.clock || r.LeaseExpiresAt.After(c.clk.Now())) {
		if r.Kind == location.KindFound {
			r.StoreNow = location.Millis(c.clk.Now())
		}
		return r, nil
	}
	r, err := c.Store.ReadOwnerLease(ctx, ownerID)
	if err == nil {
		c.mu.Lock()
		c.cache[ownerID] = r
		c.mu.Unlock()
	}
	return r, err
}

func (c *leaseReadCache) ClaimOwnerLease(ctx context.Context, ownerID string, ttl time.Duration) (location.OwnerLeaseClaimResult, error) {
	if !c.bugs.claim {
		c.drop(ownerID)
	}
	return c.Store.ClaimOwnerLease(ctx, ownerID, ttl)
}

func (c *leaseReadCache) RenewOwnerLease(ctx context.Context, t location.OwnerToken, ttl time.Duration) (location.OwnerLeaseRenewResult, error) {
	if !c.bugs.renew {
		c.drop(t.OwnerID)
	}
	return c.Store.RenewOwnerLease(ctx, t, ttl)
}

func (c *leaseReadCache) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	if !c.bugs.release {
		c.drop(t.OwnerID)
	}
	return c.Store.ReleaseOwnerLease(ctx, t)
}

// watchBugs are the mistakes a change watcher can make.
type watchBugs struct {
	// missTable: changes of this table are never sent.
	missTable location.Table
	// noneIsNothing: a watcher of no table in particular watches nothing.
	noneIsNothing bool
	// release, expiry: a lease ending this way is not sent.
	release, expiry bool
	// removeAll: RemoveAllByOwner's removals are not sent.
	removeAll bool
	// neverClose: the channel stays open after its context ended.
	neverClose bool
	// doneContext: a done context is not an error.
	doneContext bool
}

// notifyingStore implements location.ChangeWatcher itself, by signalling
// after each of its own calls that changed something, as a store built on a
// backend without watches might. Without bugs it keeps the contract.
type notifyingStore struct {
	*memstore.Store
	bugs watchBugs

	mu       sync.Mutex
	watchers map[chan struct{}]map[location.Table]bool // nil set: every table
}

func newNotifyingStore(bugs watchBugs) func(*memstore.Store, *clock.Manual) (location.Store, func(context.Context, string) error) {
	return func(s *memstore.Store, _ *clock.Manual) (location.Store, func(context.Context, string) error) {
		n := &notifyingStore{Store: s, bugs: bugs, watchers: map[chan struct{}]map[location.Table]bool{}}
		return n, func(ctx context.Context, ownerID string) error {
			live, err := s.ReadOwnerLease(ctx, ownerID)
			if err != nil {
				return err
			}
			if err := s.ExpireOwnerLease(ctx, ownerID); err != nil {
				return err
			}
			if live.Kind == location.KindFound && !bugs.expiry {
				n.signal(rules.LocationTables()...)
			}
			return nil
		}
	}
}

// WatchChanges registers a watcher.
func (n *notifyingStore) WatchChanges(ctx context.Context, tables ...location.Table) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil && !n.bugs.doneContext {
		return nil, fmt.Errorf("notifyingStore: WatchChanges: %w", err)
	}
	var set map[location.Table]bool
	if len(tables) > 0 || n.bugs.noneIsNothing {
		set = map[location.Table]bool{}
		for _, t := range tables {
			set[t] = true
		}
	}
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	n.watchers[ch] = set
	n.mu.Unlock()
	context.AfterFunc(ctx, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.watchers, ch)
		if !n.bugs.neverClose {
			close(ch)
		}
	})
	return ch, nil
}

// signal notifies every watcher of one of tables.
func (n *notifyingStore) signal(tables ...location.Table) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch, set := range n.watchers {
		if set != nil && !slices.ContainsFunc(tables, func(t location.Table) bool { return set[t] }) {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// signalled passes a write's result through, signalling table when the
// write changed it (status stored).
func signalled[R any](n *notifyingStore, table location.Table, status func(R) location.WriteStatus) func(R, error) (R, error) {
	return func(r R, err error) (R, error) {
		if err == nil && status(r) == location.Stored && table != n.bugs.missTable {
			n.signal(table)
		}
		return r, err
	}
}

func resultStatus(r location.WriteResult) location.WriteStatus { return r.Status }
func plainStatus(s location.WriteStatus) location.WriteStatus  { return s }

// The row writes and removals, each signalled.

func (n *notifyingStore) UpdateMeshNode(ctx context.Context, d location.MeshNodeDescriptor, in location.WriteIntent) (location.WriteResult, error) {
	return signalled(n, location.TableMeshNodes, resultStatus)(n.Store.UpdateMeshNode(ctx, d, in))
}

func (n *notifyingStore) RemoveMeshNode(ctx context.Context, k location.MeshNodeKey, o location.OwnerToken) (location.WriteStatus, error) {
	return signalled(n, location.TableMeshNodes, plainStatus)(n.Store.RemoveMeshNode(ctx, k, o))
}

func (n *notifyingStore) UpdateClientServer(ctx context.Context, d location.ClientServerDescriptor, in location.WriteIntent) (location.WriteResult, error) {
	return signalled(n, location.TableClientServers, resultStatus)(n.Store.UpdateClientServer(ctx, d, in))
}

func (n *notifyingStore) RemoveClientServer(ctx context.Context, k location.ClientServerKey, o location.OwnerToken) (location.WriteStatus, error) {
	return signalled(n, location.TableClientServers, plainStatus)(n.Store.RemoveClientServer(ctx, k, o))
}

func (n *notifyingStore) UpdateFanoutPublisher(ctx context.Context, d location.FanoutPublisherDescriptor, in location.WriteIntent) (location.WriteResult, error) {
	return signalled(n, location.TableFanoutPublishers, resultStatus)(n.Store.UpdateFanoutPublisher(ctx, d, in))
}

func (n *notifyingStore) RemoveFanoutPublisher(ctx context.Context, k location.FanoutPublisherKey, o location.OwnerToken) (location.WriteStatus, error) {
	return signalled(n, location.TableFanoutPublishers, plainStatus)(n.Store.RemoveFanoutPublisher(ctx, k, o))
}

func (n *notifyingStore) UpdatePeer(ctx context.Context, p location.PeerLocation, in location.WriteIntent) (location.WriteResult, error) {
	return signalled(n, location.TablePeers, resultStatus)(n.Store.UpdatePeer(ctx, p, in))
}

func (n *notifyingStore) RemovePeer(ctx context.Context, k location.PeerKey, o location.OwnerToken) (location.WriteResult, error) {
	return signalled(n, location.TablePeers, resultStatus)(n.Store.RemovePeer(ctx, k, o))
}

func (n *notifyingStore) UpdateSpot(ctx context.Context, r location.SpotLocation, in location.WriteIntent) (location.WriteResult, error) {
	return signalled(n, location.TableSpots, resultStatus)(n.Store.UpdateSpot(ctx, r, in))
}

func (n *notifyingStore) RemoveSpot(ctx context.Context, k location.SpotKey, o location.OwnerToken) (location.WriteStatus, error) {
	return signalled(n, location.TableSpots, plainStatus)(n.Store.RemoveSpot(ctx, k, o))
}

func (n *notifyingStore) UpdateActor(ctx context.Context, a location.ActorLocation, in location.WriteIntent) (location.WriteResult, error) {
	return signalled(n, location.TableActors, resultStatus)(n.Store.UpdateActor(ctx, a, in))
}

func (n *notifyingStore) RemoveActor(ctx context.Context, k location.ActorKey, o location.OwnerToken) (location.WriteStatus, error) {
	return signalled(n, location.TableActors, plainStatus)(n.Store.RemoveActor(ctx, k, o))
}

func (n *notifyingStore) UpdateRoute(ctx context.Context, r location.RouteLocation, in location.WriteIntent) (location.WriteResult, error) {
	return signalled(n, location.TableRoutes, resultStatus)(n.Store.UpdateRoute(ctx, r, in))
}

func (n *notifyingStore) RemoveRoute(ctx context.Context, k location.RouteKey, o location.OwnerToken) (location.WriteResult, error) {
	return signalled(n, location.TableRoutes, resultStatus)(n.Store.RemoveRoute(ctx, k, o))
}

func (n *notifyingStore) RemoveAllByOwner(ctx context.Context, t location.OwnerToken) (int64, error) {
	removed, err := n.Store.RemoveAllByOwner(ctx, t)
	if err == nil && removed > 0 && !n.bugs.removeAll {
		n.signal(rules.LocationTables()...)
	}
	return removed, err
}

func (n *notifyingStore) ReleaseOwnerLease(ctx context.Context, t location.OwnerToken) (location.ResultKind, error) {
	k, err := n.Store.ReleaseOwnerLease(ctx, t)
	if err == nil && k == location.KindReleased && !n.bugs.release {
		n.signal(rules.LocationTables()...)
	}
	return k, err
}

// suiteOnly selects the scenarios the suite adds to the catalogues.
func suiteOnly(sc conformance.Scenario) bool {
	return strings.HasPrefix(sc.ID, "LSX-") || strings.HasPrefix(sc.ID, "CW-")
}

// failedScenarios runs the scenarios keep selects (all when nil) and returns
// the IDs that failed.
func failedScenarios(t *testing.T, h conformance.Harness, keep func(conformance.Scenario) bool) []string {
	t.Helper()
	rep := conformance.RunSuite(t.Context(), h, conformance.SuiteOptions{Filter: keep})
	require.NotEmpty(t, rep.Scenarios)
	var failed []string
	for _, s := range rep.Scenarios {
		if s.Outcome == conformance.OutcomeFail {
			failed = append(failed, s.ID)
		}
	}
	return failed
}

type wrapFunc = func(*memstore.Store, *clock.Manual) (location.Store, func(context.Context, string) error)

// bugCase is one bug of a broken store and exactly the scenarios that fail
// with it.
type bugCase[B any] struct {
	name   string
	bugs   B
	caught []string
}

// requireCaught runs the suite (the scenarios keep keeps; nil keeps all),
// one case at a time in parallel, on the store wrap makes of the case's
// bugs and requires exactly the case's scenarios to fail.
func requireCaught[B any](t *testing.T, cases []bugCase[B], wrap func(B) wrapFunc, keep func(conformance.Scenario) bool) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.caught, failedScenarios(t, brokenHarness(tc.name, wrap(tc.bugs)), keep))
		})
	}
}

// A stale ReadOwnerLease passes the catalogue and fails only the LSX
// scenarios, each bug its own: the whole suite runs for each.
func TestSuiteCatchesStaleLeaseReads(t *testing.T) {
	requireCaught(t, []bugCase[leaseCacheBugs]{
		{"no bug", leaseCacheBugs{}, nil},
		{"the expiry hook does not reach the cache", leaseCacheBugs{expiryHook: true}, []string{"LSX-001"}},
		{"a cached lease is served past its expiry", leaseCacheBugs{clock: true}, []string{"LSX-002"}},
		{"a release does not reach the cache", leaseCacheBugs{release: true}, []string{"LSX-003", "LSX-005"}},
		{"a renewal does not reach the cache", leaseCacheBugs{renew: true}, []string{"LSX-004"}},
		{"a claim does not reach the cache", leaseCacheBugs{claim: true}, []string{"LSX-005"}},
	}, newLeaseReadCache, nil)
}

// A broken change watcher fails only the CW scenarios, each bug its own. The
// catalogue never starts a watch (LS-200 calls WatchChanges with a done
// context, which fails before any watch), so no watcher bug can fail it: that is
// checked once, then each bug runs the suite's own scenarios.
func TestSuiteCatchesBrokenWatchers(t *testing.T) {
	t.Run("the catalogue never watches", func(t *testing.T) {
		var calls atomic.Int32
		h := brokenHarness("counting", func(s *memstore.Store, clk *clock.Manual) (location.Store, func(context.Context, string) error) {
			return countingWatcher{Store: s, calls: &calls}, s.ExpireOwnerLease
		})
		require.Empty(t, failedScenarios(t, h, func(sc conformance.Scenario) bool { return !suiteOnly(sc) }))
		require.Zero(t, calls.Load(), "a catalogue scenario called WatchChanges")
	})
	tests := []bugCase[watchBugs]{
		{"no bug", watchBugs{}, nil},
		{"every table means none", watchBugs{noneIsNothing: true}, []string{"CW-008"}},
		{"a release is not sent", watchBugs{release: true}, []string{"CW-009"}},
		{"an expiry is not sent", watchBugs{expiry: true}, []string{"CW-010"}},
		{"RemoveAllByOwner is not sent", watchBugs{removeAll: true}, []string{"CW-011"}},
		{"the channel never closes", watchBugs{neverClose: true}, []string{"CW-012"}},
		{"a done context is no error", watchBugs{doneContext: true}, []string{"CW-013"}},
	}
	// CW-001 … CW-007 follow rules.LocationTables().
	for i, table := range rules.LocationTables() {
		tests = append(tests, bugCase[watchBugs]{fmt.Sprintf("%s is not sent", table), watchBugs{missTable: table}, []string{fmt.Sprintf("CW-%03d", i+1), "CW-008"}})
	}
	requireCaught(t, tests, newNotifyingStore, suiteOnly)
}

// countingWatcher counts WatchChanges calls.
type countingWatcher struct {
	*memstore.Store
	calls *atomic.Int32
}

func (c countingWatcher) WatchChanges(ctx context.Context, tables ...location.Table) (<-chan struct{}, error) {
	if ctx.Err() == nil { // LS-200 only checks that a done context is refused
		c.calls.Add(1)
	}
	return c.Store.WatchChanges(ctx, tables...)
}
