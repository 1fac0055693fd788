package etcdstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// oneTxn is the cost of a steady-state write: one transaction, no read.
func oneTxn() map[string]int { return map[string]int{txn.CallTxn: 1} }

// Steady-state writes cost exactly one transaction: the rows and owner keys
// they read are in the store's cache after the first write, and the commit
// re-asserts them. (The framework's Redis provider needs 2–4 calls here, 08
// §4.6.)
func TestSteadyStateRoundTrips(t *testing.T) {
	ctx := t.Context()
	t.Run("renew rows", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		type write = func(location.WriteIntent) (location.WriteResult, error)
		writes := []struct {
			name  string
			write write
		}{
			{"spot", func(i location.WriteIntent) (location.WriteResult, error) {
				return f.s.UpdateSpot(ctx, spot("s1", a), i)
			}},
			{"actor", func(i location.WriteIntent) (location.WriteResult, error) {
				return f.s.UpdateActor(ctx, actor("a1", a), i)
			}},
			{"peer", func(i location.WriteIntent) (location.WriteResult, error) {
				return f.s.UpdatePeer(ctx, peer("n1", "a"), i)
			}},
			{"route", func(i location.WriteIntent) (location.WriteResult, error) {
				return f.s.UpdateRoute(ctx, route("r1", "a"), i)
			}},
		}
		for _, w := range writes {
			t.Run(w.name, func(t *testing.T) {
				g := storedIn(t)(w.write(location.IntentNewClaim))
				f.counts()
				g2 := storedIn(t)(w.write(location.IntentRenew))
				require.Equal(t, g, g2, "a renewal keeps the generation")
				require.Equal(t, oneTxn(), f.counts())
			})
		}
	})
	t.Run("mesh-node revision update", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		d := meshNode("game", "node-a", a)
		entry := "entry-1"
		d.EntrySpotID = &entry
		storedIn(t)(f.s.UpdateMeshNode(ctx, d, location.IntentNewClaim))
		f.counts()
		d.DescriptorRevision++
		d.State = location.StateDraining
		storedIn(t)(f.s.UpdateMeshNode(ctx, d, location.IntentRenew))
		require.Equal(t, oneTxn(), f.counts())

		// An identical replay writes nothing; the cached view is verified by
		// one transaction.
		res, err := f.s.UpdateMeshNode(ctx, d, location.IntentRenew)
		storedIn(t)(res, err)
		require.Equal(t, oneTxn(), f.counts())
	})
	t.Run("first write of a new row", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		f.counts()
		storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
		// One read of the row (absent: not cached) and its owner key, then
		// one commit.
		require.Equal(t, map[string]int{txn.CallTxn: 2}, f.counts())
	})
	t.Run("takeover of a dead owner's row", func(t *testing.T) {
		f := newFixture(t)
		a, b := f.claim(t, "a"), f.claim(t, "b")
		g := storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
		require.NoError(t, f.s.ExpireOwnerLease(ctx, "a"))
		f.counts()
		g2 := storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", b), location.IntentNewClaim))
		require.Greater(t, g2, g)
		// The cached row names owner a: its owner key is read on demand, and
		// the commit re-asserts it is gone.
		c := f.counts()
		require.LessOrEqual(t, c[txn.CallTxn]+c[txn.CallGet], 3, c)
	})
	t.Run("authority preserve", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		d := meshNode("m", "node-a", a)
		storedIn(t)(f.s.UpdateMeshNode(ctx, d, location.IntentNewClaim))
		target := location.CreationTarget{MeshName: "m", NodeRID: "node-a", NodeLifecycleGeneration: 1, Owner: a}
		key := location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: "s1"}
		r, err := f.s.Reserve(ctx, location.ReserveRequest{Key: key,
			Intent:   location.CreationIntent{StableType: "room", RequestContentReference: "r", RequestSHA256: make([]byte, 32), RequestEncodedSize: 1},
			Target:   target,
			Capacity: location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: "room", Count: 1}}})
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, r.Kind)
		c, err := f.s.Commit(ctx, location.CommitRequest{Key: key, ReservationID: r.ReservationID,
			ExpectedStoreVersion: r.Creating.StoreVersion, Target: target, ReadyPayload: []byte("ready")})
		require.NoError(t, err)
		require.Equal(t, location.KindCommitted, c.Kind)
		authKey, err := location.EncodeAuthorityKey(key.Kind, key.GlobalID)
		require.NoError(t, err)

		f.counts()
		res, err := f.s.CompareExchangeAuthority(ctx, authKey, c.Ready.StoreVersion,
			location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: []byte("p2")})
		require.NoError(t, err)
		require.Equal(t, location.KindStored, res.Kind)
		require.Equal(t, oneTxn(), f.counts())
		read, err := f.s.ReadAuthority(ctx, authKey)
		require.NoError(t, err)
		require.Equal(t, res.Stored.StoreVersion, read.Snapshot.StoreVersion, "the version is the record's ModRevision")
	})
	t.Run("owner lease renewal", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		f.counts()
		res, err := f.s.RenewOwnerLease(ctx, a, time.Minute)
		require.NoError(t, err)
		require.Equal(t, location.KindRenewed, res.Kind)
		require.Equal(t, map[string]int{txn.CallTxn: 1, txn.CallKeepAliveOnce: 1}, f.counts(), "sent in parallel: one round")
	})
	t.Run("resolve", func(t *testing.T) {
		f := newFixture(t)
		a := f.claim(t, "a")
		storedIn(t)(f.s.UpdateSpot(ctx, spot("s1", a), location.IntentNewClaim))
		f.counts()
		got, err := f.s.ResolveSpot(ctx, location.SpotKey{MeshName: "play", SpotID: "s1"})
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Equal(t, oneTxn(), f.counts(), "a cached row is verified by one transaction")
		got, err = f.s.ResolveSpot(ctx, location.SpotKey{MeshName: "play", SpotID: "nope"})
		require.NoError(t, err)
		require.Nil(t, got)
		require.Equal(t, map[string]int{txn.CallGet: 1}, f.counts())
	})
}
