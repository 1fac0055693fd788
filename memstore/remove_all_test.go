package memstore

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// lsPutAuthorityRow stores an active authority row of owner with one spot of
// capacity on K_A (lifecycle 7) and its ledger entry, as the authority side
// would after a committed creation.
func lsPutAuthorityRow(f *lsFix, key string, owner location.OwnerToken) {
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
			Descriptor: lsKA(), DescriptorLifecycleGeneration: 7, Capacity: location.CapacityVector{Spots: 1},
		},
	}}
	b := rules.Bucket{Descriptor: lsKA(), Lifecycle: 7, Name: rules.BucketSpot}.Key()
	e, _ := f.s.tables[rules.TableLedger][b].Value.(rules.LedgerEntry)
	e.Active++
	f.s.tables[rules.TableLedger][b] = rules.Record{Value: e}
}

func TestRemoveAllByOwner(t *testing.T) {
	t0 := lsT0()
	newClaim := location.IntentNewClaim
	removeAll := func(f *lsFix, tok location.OwnerToken) int64 {
		f.t.Helper()
		n, err := f.s.RemoveAllByOwner(f.ctx, tok)
		require.NoError(f.t, err)
		return n
	}
	t.Run("LS-160 without a lease", func(t *testing.T) {
		f := newLSFix(t)
		f.updateSpot(lsSpotRow("ghost", 1), newClaim)
		f.noEffect(func() { require.Zero(t, removeAll(f, location.OwnerToken{OwnerID: "ghost", LeaseGeneration: 1})) })
	})
	t.Run("LS-161 wrong generation", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.noEffect(func() {
			require.Zero(t, removeAll(f, location.OwnerToken{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 1}))
		})
	})
	t.Run("LS-162 expired lease", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.expire("a")
		f.noEffect(func() { require.Zero(t, removeAll(f, a)) })
		require.NotNil(t, f.resolveSpot(lsSpotKey()))
	})
	// sweep sets up LS-163: a owns one row in every table, b one spot.
	sweep := func(t *testing.T) *lsFix {
		f := newLSFix(t)
		f.claim("a")
		f.claim("b")
		f.updateMN(f.mne("a"), newClaim)
		f.updateCS(f.cs("a"), newClaim)
		f.updateFP(f.fp("a"), newClaim)
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.updateSpot(f.spot("a"), newClaim)
		f.updateActor(f.actor("a"), newClaim)
		f.updateRoute(lsRoute("a", 0), newClaim)
		bSpot := f.spot("b")
		bSpot.SpotID = "spot-2"
		f.updateSpot(bSpot, newClaim)
		return f
	}
	type scope struct {
		kind location.LocationKind
		mesh string
	}
	scopes := []scope{
		{location.LocationPeer, "game"}, {location.LocationPeer, "play"}, {location.LocationPeer, ""},
		{location.LocationSpot, "play"}, {location.LocationSpot, ""},
		{location.LocationActor, "play"}, {location.LocationActor, ""},
		{location.LocationRoute, ""},
		{location.LocationClientServer, "orders"}, {location.LocationClientServer, ""},
	}
	stamps := func(f *lsFix) map[scope]int64 {
		out := map[scope]int64{}
		for _, s := range scopes {
			out[s] = f.stamp(s.kind, s.mesh)
		}
		return out
	}
	t.Run("LS-163 sweep across tables", func(t *testing.T) {
		f := sweep(t)
		before := stamps(f)
		meshBefore := f.state().meshStamps["game"]
		require.Equal(t, int64(7), removeAll(f, f.tok["a"]))
		require.Empty(t, f.meshNodes("game"))
		require.Empty(t, f.clientServers("orders"))
		f.s.mu.Lock()
		require.Empty(t, f.s.tables[location.TableFanoutPublishers])
		f.s.mu.Unlock()
		require.Empty(t, f.peers(location.PeerFilter{}))
		require.Nil(t, f.resolveSpot(lsSpotKey()))
		require.Nil(t, f.resolveActor(lsActorKey()))
		require.Nil(t, f.resolveRoute(lsRouteKey()))
		require.NotNil(t, f.resolveSpot(location.SpotKey{MeshName: "play", SpotID: "spot-2"}))
		require.Equal(t, location.KindFound, f.readLease("a").Kind)
		delta := map[scope]int64{}
		for s, v := range stamps(f) {
			delta[s] = v - before[s]
		}
		require.Equal(t, map[scope]int64{
			{location.LocationPeer, "game"}: 1, {location.LocationPeer, "play"}: 1, {location.LocationPeer, ""}: 2,
			{location.LocationSpot, "play"}: 1, {location.LocationSpot, ""}: 1,
			{location.LocationActor, "play"}:          1, // A-08 fixed
			{location.LocationActor, ""}:              1,
			{location.LocationRoute, ""}:              1,
			{location.LocationClientServer, "orders"}: 1, {location.LocationClientServer, ""}: 1,
		}, delta)
		require.Equal(t, meshBefore+1, f.state().meshStamps["game"])
		f.s.mu.Lock()
		require.Empty(t, f.s.tables[rules.TableEntryClaims], "the entry-spot claim is released")
		f.s.mu.Unlock()

		t.Run("LS-167 second sweep", func(t *testing.T) {
			f.noEffect(func() { require.Zero(t, removeAll(f, f.tok["a"])) })
		})
	})
	t.Run("LS-165 counters survive the sweep", func(t *testing.T) {
		f := sweep(t)
		removeAll(f, f.tok["a"])
		require.Equal(t, lsStored(2, t0), f.updatePeer(lsPeer("a", 0), newClaim))
		require.Equal(t, lsStored(1, t0), f.updateMN(f.mn("a"), newClaim))
	})
	t.Run("LS-164 rows of an older incarnation are swept", func(t *testing.T) {
		f := newLSFix(t)
		f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		f.updatePeer(lsPeer("a", 0), newClaim)
		f.expire("a")
		g2 := f.claim("a")
		require.Equal(t, int64(2), removeAll(f, g2))
		require.Nil(t, f.resolveSpot(lsSpotKey()))
		require.Empty(t, f.peers(location.PeerFilter{}))
	})
	t.Run("LS-166 transfers untouched", func(t *testing.T) {
		f := newLSFix(t)
		_, err := f.s.PrepareActorTransfer(f.ctx, lsXfer(lsXferID))
		require.NoError(t, err)
		recovery := f.claim("recovery-a")
		f.noEffect(func() { require.Zero(t, removeAll(f, recovery)) })
		rec, err := f.s.ResolveActorTransfer(f.ctx, "game", "actor-1")
		require.NoError(t, err)
		require.NotNil(t, rec)
	})
	t.Run("authority rows of the exact token go first", func(t *testing.T) {
		f := newLSFix(t)
		a := f.claim("a")
		f.updateSpot(f.spot("a"), newClaim)
		lsPutAuthorityRow(f, "zla1:s:6:spot-x", a)
		lsPutAuthorityRow(f, "zla1:s:6:spot-y", location.OwnerToken{OwnerID: "a", LeaseGeneration: a.LeaseGeneration + 7})
		require.Equal(t, int64(2), removeAll(f, a))
		st := f.state()
		require.NotContains(t, st.tables[rules.TableAuthority], "zla1:s:6:spot-x")
		require.Contains(t, st.tables[rules.TableAuthority], "zla1:s:6:spot-y", "another token's record stays")
		b := rules.Bucket{Descriptor: lsKA(), Lifecycle: 7, Name: rules.BucketSpot}.Key()
		require.Equal(t, rules.LedgerEntry{Active: 1}, st.tables[rules.TableLedger][b].Value, "the removed record's capacity is released")
	})
	t.Run("LS-209 removeAllByOwner is one atomic step", func(t *testing.T) {
		for range 20 {
			f := newLSFix(t)
			a := f.claim("a")
			f.claim("b")
			f.updateSpot(f.spot("a"), newClaim)
			f.updateMN(f.mn("a"), newClaim)
			lsPutAuthorityRow(f, "zla1:s:6:spot-x", a)
			var wg sync.WaitGroup
			var spotRes location.WriteResult
			var n int64
			wg.Add(3)
			go func() {
				defer wg.Done()
				n, _ = f.s.RemoveAllByOwner(f.ctx, a)
			}()
			go func() {
				defer wg.Done()
				spotRes, _ = f.s.UpdateSpot(f.ctx, f.spot("b"), newClaim)
			}()
			go func() {
				defer wg.Done()
				for range 50 {
					st := f.state()
					_, authority := st.tables[rules.TableAuthority]["zla1:s:6:spot-x"]
					_, mesh := st.tables[location.TableMeshNodes][rules.MeshNodeKey(lsKA())]
					assert.Equal(t, authority, mesh, "authority record and location rows go together")
				}
			}()
			wg.Wait()
			require.Contains(t, []location.WriteResult{lsConflict(), lsStored(2, t0)}, spotRes)
			if spotRes.Status == location.Stored {
				require.Equal(t, int64(3), n, "the sweep ran first")
				require.Equal(t, "b", f.resolveSpot(lsSpotKey()).OwnerID)
			} else {
				require.Equal(t, int64(3), n)
				require.Nil(t, f.resolveSpot(lsSpotKey()))
			}
		}
	})
}
