package memstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// What only memstore has (see fixture_test.go): the test hooks it gives the
// conformance harness, its change notifications, its ListAuthorities scan
// cursors and its authority tables, its page tokens and key order.

// TestHooks checks the test hooks memstore gives the conformance harness:
// what they change, how they validate, and that they honour a context.
func TestHooks(t *testing.T) {
	t.Run("ExpireOwnerLease ends the lease now and keeps the entry", func(t *testing.T) {
		f := newMemFix(t)
		a := f.claim("a")
		f.clk.Advance(time.Second)
		f.expire("a")
		require.Equal(t, ownerLease{token: a, expiresAt: fixture.T0().Add(time.Second)}, f.state().leases["a"])
		g, live := (&source{s: f.s, now: f.clk.Now()}).LiveLease("a")
		require.False(t, live)
		require.Zero(t, g)
		f.noEffect(func() { f.expire("nobody") })
	})
	t.Run("ExpireOwnerLease checks its context first", func(t *testing.T) {
		f := newMemFix(t)
		f.claim("a")
		ctx, cancel := context.WithCancel(f.ctx)
		cancel()
		f.noEffect(func() { require.ErrorIs(t, f.s.ExpireOwnerLease(ctx, "a"), context.Canceled) })
	})
	t.Run("SetOwnerLeaseCounter sets the last issued generation", func(t *testing.T) {
		f := newMemFix(t)
		require.NoError(t, f.s.SetOwnerLeaseCounter(41))
		require.Equal(t, int64(42), f.claim("a").LeaseGeneration)
		requireInputError(t, f.s.SetOwnerLeaseCounter(-1), location.ClassRange)
	})
	t.Run("SetAuthorityCounters sets the last issued values", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		ptr := func(v int64) *int64 { return &v }
		require.NoError(t, f.s.SetAuthorityCounters(ptr(41), ptr(7), nil))
		reserve := func(id string) location.ReserveResult {
			return f.reserved(f.s.Reserve(f.ctx, fixture.SpotRequest(location.ObjectUserSpot, id, fixture.Target(na), "room")))
		}
		r := reserve("c1")
		require.Equal(t, location.StoreVersion("42"), r.Creating.StoreVersion)
		require.Equal(t, int64(8), r.Creating.ObjectGeneration)
		require.Equal(t, int64(1), r.Creating.AuthorityOwnerGeneration, "a nil counter is left alone")
		require.NoError(t, f.s.SetAuthorityCounters(nil, nil, ptr(100)))
		require.Equal(t, int64(101), reserve("c2").Creating.AuthorityOwnerGeneration)
		f.noEffect(func() {
			neg := int64(-1)
			requireInputError(t, f.s.SetAuthorityCounters(nil, &neg, nil), location.ClassRange)
		})
	})
}

func TestWatchChanges(t *testing.T) {
	var _ location.ChangeWatcher = (*Store)(nil)
	pending := func(ch <-chan struct{}) bool {
		select {
		case _, ok := <-ch:
			return ok
		default:
			return false
		}
	}
	t.Run("notifies watchers of the touched tables, coalesced", func(t *testing.T) {
		f := newMemFix(t)
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		spots, err := f.s.WatchChanges(ctx, location.TableSpots)
		require.NoError(t, err)
		peers, err := f.s.WatchChanges(ctx, location.TablePeers, location.TableRoutes)
		require.NoError(t, err)
		all, err := f.s.WatchChanges(ctx)
		require.NoError(t, err)

		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", 1), location.IntentNewClaim))
		f.stored(f.s.UpdateSpot(f.ctx, spotAt("a", 1, fixture.MeshPlay, "spot-2"), location.IntentNewClaim))
		require.True(t, pending(spots))
		require.False(t, pending(spots), "two changes coalesce into one notification")
		require.False(t, pending(peers))
		require.True(t, pending(all))

		f.stored(f.s.UpdateRoute(f.ctx, fixture.ROUTE("a", 0), location.IntentNewClaim))
		require.True(t, pending(peers))
		require.False(t, pending(spots))
		require.True(t, pending(all))
	})
	t.Run("no notification without a change", func(t *testing.T) {
		f := newMemFix(t)
		a, b := f.claim("a"), f.claim("b")
		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim))
		ch, err := f.s.WatchChanges(f.ctx)
		require.NoError(t, err)
		require.Equal(t, location.RejectedConflict, f.wrote(f.s.UpdateSpot(f.ctx, fixture.SPOT("b", b.LeaseGeneration), location.IntentNewClaim)).Status)
		_, err = f.s.ResolveSpot(f.ctx, fixture.SpotKey())
		require.NoError(t, err)
		_, err = f.s.ReadOwnerLease(f.ctx, "a")
		require.NoError(t, err)
		require.False(t, pending(ch))
		_, err = f.s.RemoveSpot(f.ctx, fixture.SpotKey(), a)
		require.NoError(t, err)
		require.True(t, pending(ch))
	})
	t.Run("closed when the context ends", func(t *testing.T) {
		f := newMemFix(t)
		ctx, cancel := context.WithCancel(f.ctx)
		ch, err := f.s.WatchChanges(ctx, location.TableSpots)
		require.NoError(t, err)
		cancel()
		select {
		case _, ok := <-ch:
			if ok { // a notification may be pending; the close follows
				_, ok = <-ch
			}
			require.False(t, ok)
		case <-time.After(10 * time.Second):
			t.Fatal("the channel was not closed")
		}
		f.s.mu.Lock()
		require.Empty(t, f.s.watchers, "the subscription is gone")
		f.s.mu.Unlock()
		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", 1), location.IntentNewClaim)) // no send on a closed channel
	})
}

// TestScanCursors checks memstore's ListAuthorities cursors: text that does
// not decode to a cursor of this store's format (version m1, revision,
// offset, prefix) is scanExpired, an offset past the end is an empty page,
// and a cursor keeps any prefix bytes.
func TestScanCursors(t *testing.T) {
	t.Run("malformed cursors are scanExpired", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		f.AS("g1", na)
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for _, c := range []string{"garbage", "!!!", enc("m1:"), enc("m1:x:0:"), enc("m1:0:-1:"), enc("m2:0:0:"), enc("m1:0")} {
			f.noEffect(func() {
				r, err := f.s.ListAuthorities(f.ctx, "", c, 1)
				require.NoError(t, err)
				require.Equal(t, location.AuthorityScanResult{Kind: location.KindScanExpired}, r, "cursor %q", c)
			})
		}
	})
	t.Run("an offset past the end gives an empty page", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		f.AS("g1", na)
		for _, offset := range []int{1, 5, math.MaxInt} {
			c := scanCursor{revision: f.state().scanRevision, offset: offset, prefix: ""}.encode()
			r, err := f.s.ListAuthorities(f.ctx, "", c, 3)
			require.NoError(t, err)
			require.Equal(t, location.AuthorityScanResult{Kind: location.KindPage, Items: []location.AuthorityEntry{}}, r)
		}
	})
	t.Run("a cursor round-trips any prefix bytes", func(t *testing.T) {
		for _, c := range []scanCursor{
			{revision: 0, offset: 0, prefix: ""},
			{revision: 7, offset: 3, prefix: "zla1:a:1:"},
			{revision: 1 << 62, offset: 999, prefix: "a:b:\x00\xff"},
		} {
			got, ok := decodeScanCursor(c.encode())
			require.True(t, ok)
			require.Equal(t, c, got)
		}
	})
}

// TestAuthorityTables checks what memstore keeps in its authority tables:
// a read of an expired creation terminal deletes it (D-13), no empty ledger
// bucket is kept once capacity is returned, and RemoveAllByOwner removes
// only the rows of the exact owner token, releasing their capacity.
func TestAuthorityTables(t *testing.T) {
	t.Run("a read of an expired terminal purges it", func(t *testing.T) {
		f := newMemFix(t)
		na, _ := f.authorityF()
		T := fixture.Target(na)
		R := f.reserved(f.s.Reserve(f.ctx, fixture.ActorRequest("a1", T)))
		res, err := f.s.CompleteCreation(f.ctx, fixture.CompleteRequest("a1", R, T, location.TerminalCreated, fixture.P(fixture.OP(1), fixture.T0().Add(time.Minute))))
		require.NoError(t, err)
		require.Equal(t, location.KindCreated, res.Kind)
		stored := func() bool {
			f.s.mu.Lock()
			defer f.s.mu.Unlock()
			_, ok := f.s.tables[rules.TableOperationTerminals][rules.OperationKey(fixture.OP(1))]
			return ok
		}
		f.clk.Set(res.Terminal.ExpiresAt)
		require.True(t, stored(), "an expired terminal lingers until read")
		read, err := f.s.ReadCreationTerminal(f.ctx, fixture.OP(1))
		require.NoError(t, err)
		require.Equal(t, location.TerminalReadResult{Kind: location.KindMissing, StoreNow: res.Terminal.ExpiresAt}, read)
		require.False(t, stored(), "the read purged the expired terminal")
	})
	t.Run("no empty ledger bucket is kept", func(t *testing.T) {
		f := newMemFix(t)
		na, nb := f.authorityF()
		S := f.AS("e1", na)
		f.reserved(f.s.Reserve(f.ctx, fixture.ActorRequest("e2", fixture.Target(na))))
		R, err := f.s.ReserveRelocationCapacity(f.ctx, fixture.RelRequest("R1", fixture.KS("e1"), S, na, nb, fixture.VS("room")))
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, R.Kind)
		moved, err := f.s.CompareExchangeAuthority(f.ctx, fixture.KS("e1"), S.StoreVersion, fixture.NewOwner("moved", nb.Owner(), "R1"))
		require.NoError(t, err)
		require.Equal(t, location.KindStored, moved.Kind)
		deleted, err := f.s.CompareExchangeAuthority(f.ctx, fixture.KS("e1"), moved.Stored.StoreVersion, fixture.Delete())
		require.NoError(t, err)
		require.Equal(t, location.KindDeleted, deleted.Kind)
		require.Positive(t, f.wroteN(f.s.RemoveAllByOwner(f.ctx, na.Owner())))
		f.s.mu.Lock()
		defer f.s.mu.Unlock()
		require.Empty(t, f.s.tables[rules.TableLedger], "every bucket went back to zero and was deleted")
	})
	t.Run("RemoveAllByOwner removes the exact token's authority rows", func(t *testing.T) {
		f := newMemFix(t)
		a := f.claim("a")
		f.stored(f.s.UpdateSpot(f.ctx, fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim))
		f.putAuthorityRow("zla1:s:6:spot-x", a)
		f.putAuthorityRow("zla1:s:6:spot-y", fixture.Token("a", a.LeaseGeneration+7))
		require.Equal(t, int64(2), f.wroteN(f.s.RemoveAllByOwner(f.ctx, a)), "the spot row and one authority row")
		st := f.state()
		require.NotContains(t, st.tables[rules.TableAuthority], "zla1:s:6:spot-x")
		require.Contains(t, st.tables[rules.TableAuthority], "zla1:s:6:spot-y", "another token's record stays")
		b := rules.Bucket{Descriptor: fixture.MNKey(), Lifecycle: 7, Name: rules.BucketSpot}.Key()
		require.Equal(t, rules.LedgerEntry{Active: 1}, st.tables[rules.TableLedger][b].Value, "the removed record's capacity is released")
	})
}

// wroteN requires a count without error.
func (f *memFix) wroteN(n int64, err error) int64 {
	f.t.Helper()
	require.NoError(f.t, err)
	return n
}

// putAuthorityRow stores an active authority row of the owner token with one
// spot of capacity on K_A (lifecycle 7) and its ledger entry, as a committed
// creation would: rows of an older lease generation cannot be made through
// the API while the owner is live.
func (f *memFix) putAuthorityRow(key string, owner location.OwnerToken) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.tables[rules.TableAuthority] == nil {
		f.s.tables[rules.TableAuthority] = map[string]rules.Record{}
		f.s.tables[rules.TableLedger] = map[string]rules.Record{}
	}
	f.s.tables[rules.TableAuthority][key] = rules.Record{Value: rules.AuthorityRow{
		StoreVersion: "1",
		Owner:        owner,
		Allocation: location.PlacementAllocation{
			State: location.AllocationActive, ObjectKind: location.ObjectUserSpot, StableType: "lobby",
			Descriptor: fixture.MNKey(), DescriptorLifecycleGeneration: 7, Capacity: location.CapacityVector{Spots: 1},
		},
	}}
	b := rules.Bucket{Descriptor: fixture.MNKey(), Lifecycle: 7, Name: rules.BucketSpot}.Key()
	e, _ := f.s.tables[rules.TableLedger][b].Value.(rules.LedgerEntry)
	e.Active++
	f.s.tables[rules.TableLedger][b] = rules.Record{Value: e}
}

// TestParseOffset checks the reference's parseInt rules for tokens (02 §1.5).
func TestParseOffset(t *testing.T) {
	for _, c := range []struct {
		token string
		want  int
	}{
		{"", 0}, {"0", 0}, {"2", 2}, {"2x", 2}, {" 3", 3}, {"\t\n\u00a0\ufeff\u20284", 4}, {"+1", 1},
		{"-1", 0}, {"-0", 0}, {"abc", 0}, {"1e3", 1}, {"0x10", 0}, {"007", 7}, {"+", 0}, {"- 1", 0},
		{"1 2", 1}, {"\u00855", 0}, {"99999999999999999999999", math.MaxInt}, {"١", 0},
	} {
		t.Run(fmt.Sprintf("%q", c.token), func(t *testing.T) {
			require.Equal(t, c.want, parseOffset(c.token))
		})
	}
}

// TestOffsetTokens checks memstore's continuation tokens: decimal offsets
// parsed like the reference's parseInt, so a token that is not a number
// restarts the list and an offset past the end gives an empty page.
func TestOffsetTokens(t *testing.T) {
	f := newMemFix(t)
	for _, id := range []string{"spot-2", "spot-1"} {
		f.stored(f.s.UpdateSpot(f.ctx, spotAt("a", 1, fixture.MeshPlay, id), location.IntentNewClaim))
	}
	play := location.SpotFilter{MeshName: &[]string{fixture.MeshPlay}[0]}
	for _, c := range []struct {
		page      location.PageRequest
		ids       []string
		nextToken string
	}{
		{location.PageRequest{PageSize: 1}, []string{"spot-1"}, "1"},
		{location.PageRequest{PageSize: 1, ContinuationToken: "1"}, []string{"spot-2"}, ""},
		{location.PageRequest{PageSize: 1, ContinuationToken: "abc"}, []string{"spot-1"}, "1"},
		{location.PageRequest{PageSize: 1, ContinuationToken: "-1"}, []string{"spot-1"}, "1"},
		{location.PageRequest{PageSize: 5, ContinuationToken: "2x"}, nil, ""},
		{location.PageRequest{ContinuationToken: "1"}, []string{"spot-2"}, ""},
	} {
		page, err := f.s.ListSpots(f.ctx, play, c.page)
		require.NoError(t, err)
		var ids []string
		for _, s := range page.Items {
			ids = append(ids, s.SpotID)
		}
		require.Equal(t, c.ids, ids, "%+v", c.page)
		require.Equal(t, c.nextToken, page.ContinuationToken, "%+v", c.page)
	}
	page, err := f.s.ListSpots(f.ctx, play, location.PageRequest{ContinuationToken: "99"})
	require.NoError(t, err)
	require.Equal(t, location.Page[location.SpotLocation]{Items: []location.SpotLocation{}}, page, "an offset past the end is an empty page")
}

// TestListsFollowKeyOrder checks that lists are in the order of the rows'
// canonical keys, which are length-prefixed: the 4-byte mesh play sorts
// before the 5-byte mesh other, and routes sort by kind first.
func TestListsFollowKeyOrder(t *testing.T) {
	f := newMemFix(t)
	for _, s := range []location.SpotLocation{
		spotAt("a", 1, "other", "spot-3"), spotAt("a", 1, fixture.MeshPlay, "spot-2"), spotAt("a", 1, fixture.MeshPlay, "spot-1"),
	} {
		f.stored(f.s.UpdateSpot(f.ctx, s, location.IntentNewClaim))
	}
	spots, err := f.s.ListSpots(f.ctx, location.SpotFilter{}, location.PageRequest{})
	require.NoError(t, err)
	var got []string
	for _, s := range spots.Items {
		got = append(got, s.MeshName+"/"+s.SpotID)
	}
	require.Equal(t, []string{"play/spot-1", "play/spot-2", "other/spot-3"}, got)

	for _, x := range []struct{ mesh, id string }{{"other", "actor-2"}, {fixture.MeshPlay, "actor-3"}, {fixture.MeshPlay, "actor-1"}} {
		a := fixture.ACTOR("a", 1)
		a.MeshName, a.ActorID, a.ActorRef.ActorID, a.ActorRef.MeshName = x.mesh, x.id, x.id, x.mesh
		f.stored(f.s.UpdateActor(f.ctx, a, location.IntentNewClaim))
	}
	actors, err := f.s.ListActors(f.ctx, location.ActorFilter{}, location.PageRequest{})
	require.NoError(t, err)
	got = nil
	for _, a := range actors.Items {
		got = append(got, a.MeshName+"/"+a.ActorID)
	}
	require.Equal(t, []string{"play/actor-1", "play/actor-3", "other/actor-2"}, got)

	for _, x := range []struct {
		kind location.RouteKind
		key  string
	}{{location.RouteSpotName, "r2"}, {location.RouteActorSession, "r3"}, {location.RouteActorSession, "r1"}} {
		r := fixture.ROUTE("a", 0)
		r.RouteKind, r.RouteKey = x.kind, x.key
		f.stored(f.s.UpdateRoute(f.ctx, r, location.IntentNewClaim))
	}
	routes, err := f.s.ListRoutes(f.ctx, location.RouteFilter{}, location.PageRequest{})
	require.NoError(t, err)
	got = nil
	for _, r := range routes.Items {
		got = append(got, r.RouteKey)
	}
	require.Equal(t, []string{"r1", "r3", "r2"}, got)
}
