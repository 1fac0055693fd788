package etcdstore

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
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
	t.Run("renew rows of an owner without a lease", func(t *testing.T) {
		f := newFixture(t)
		writes := []struct {
			name  string
			write func(location.WriteIntent) (location.WriteResult, error)
		}{
			{"peer", func(i location.WriteIntent) (location.WriteResult, error) {
				return f.s.UpdatePeer(ctx, peer("n1", "nobody"), i)
			}},
			{"route", func(i location.WriteIntent) (location.WriteResult, error) {
				return f.s.UpdateRoute(ctx, route("r1", "nobody"), i)
			}},
		}
		for _, w := range writes {
			t.Run(w.name, func(t *testing.T) {
				storedIn(t)(w.write(location.IntentNewClaim))
				f.counts()
				storedIn(t)(w.write(location.IntentRenew))
				require.Equal(t, oneTxn(), f.counts(), "a renewal does not consult the owner key")
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
	t.Run("reserve and commit a user spot", func(t *testing.T) {
		f, target := creationFixture(t)

		req := userSpotRoom("s1", target)
		f.counts()
		r, err := f.s.Reserve(ctx, req)
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, r.Kind)
		// One read of everything the decision reads (the record and its entry
		// claim are new, so not cached; the object generation needs a fresh
		// read anyway), then the commit.
		require.Equal(t, map[string]int{txn.CallTxn: 2}, f.counts())
		c, err := f.s.Commit(ctx, location.CommitRequest{Key: req.Key, ReservationID: r.ReservationID,
			ExpectedStoreVersion: r.Creating.StoreVersion, Target: target, ReadyPayload: []byte("ready")})
		require.NoError(t, err)
		require.Equal(t, location.KindCommitted, c.Kind)
		// The record, descriptor, owner key and the ledger buckets the
		// record's allocation names are cached; the fresh reservation
		// terminal is assumed absent, and the commit asserts it: one
		// transaction.
		require.Equal(t, oneTxn(), f.counts())
	})
	t.Run("other creation steps", func(t *testing.T) {
		f, target := creationFixture(t)

		// A replayed Commit: the terminal it expected absent is cached now
		// (the first Commit wrote it); the answer is verified by one
		// transaction.
		req := userSpotRoom("s1", target)
		r, err := f.s.Reserve(ctx, req)
		require.NoError(t, err)
		commit := location.CommitRequest{Key: req.Key, ReservationID: r.ReservationID,
			ExpectedStoreVersion: r.Creating.StoreVersion, Target: target, ReadyPayload: []byte("ready")}
		_, err = f.s.Commit(ctx, commit)
		require.NoError(t, err)
		f.counts()
		c, err := f.s.Commit(ctx, commit)
		require.NoError(t, err)
		require.Equal(t, location.KindAlreadyCommitted, c.Kind)
		require.Equal(t, oneTxn(), f.counts())

		// Commit by another store (another process) that has cached
		// nothing: one read of the record, the descriptor, the owner key
		// and the buckets guessed from the target (actor and spot), one Get
		// of the spot type's bucket the record names, then the commit.
		req = userSpotRoom("s2", target)
		r, err = f.s.Reserve(ctx, req)
		require.NoError(t, err)
		other, err := New(f.s.client, Options{Root: f.s.layout.Root(), Clock: f.clock.Now, KV: f.rec})
		require.NoError(t, err)
		f.counts()
		c, err = other.Commit(ctx, location.CommitRequest{Key: req.Key, ReservationID: r.ReservationID,
			ExpectedStoreVersion: r.Creating.StoreVersion, Target: target, ReadyPayload: []byte("ready")})
		require.NoError(t, err)
		require.Equal(t, location.KindCommitted, c.Kind)
		require.Equal(t, map[string]int{txn.CallTxn: 2, txn.CallGet: 1}, f.counts())

		// Abort after this process's Reserve: one transaction.
		req = userSpotRoom("s3", target)
		r, err = f.s.Reserve(ctx, req)
		require.NoError(t, err)
		f.counts()
		kind, err := f.s.AbortCreation(ctx, location.AbortRequest{Key: req.Key, ReservationID: r.ReservationID,
			ExpectedStoreVersion: r.Creating.StoreVersion, Target: target})
		require.NoError(t, err)
		require.Equal(t, location.KindAborted, kind)
		require.Equal(t, oneTxn(), f.counts())

		// An actor's completion after this process's Reserve: one
		// transaction (both terminals are assumed absent).
		actor := actorReservation("actor-1", target)
		key := actor.Key
		r, err = f.s.Reserve(ctx, actor)
		require.NoError(t, err)
		require.Equal(t, location.KindReserved, r.Kind)
		envelope := []byte("env")
		sum := sha256.Sum256(envelope)
		op := location.OperationIdentity{SourceNodeRID: "node-a", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: 1}}
		f.counts()
		done, err := f.s.CompleteCreation(ctx, location.CompleteCreationRequest{Key: key, ReservationID: r.ReservationID,
			ExpectedStoreVersion: r.Creating.StoreVersion, Target: target,
			Completion: location.CreationCompletion{Kind: location.TerminalCreated, ReadyPayload: []byte("ready"),
				Terminal: location.TerminalPublication{Operation: op, TerminalEnvelope: envelope, TerminalEnvelopeSHA256: sum[:], OperationDeadline: t0().Add(time.Minute)}}})
		require.NoError(t, err)
		require.Equal(t, location.KindCreated, done.Kind)
		require.Equal(t, oneTxn(), f.counts())
	})
	t.Run("list 1,000 mesh nodes", func(t *testing.T) {
		f := newFixture(t, func(o *Options) { o.WatchCache.Disabled = true })
		const rows = 1000
		writeMeshNodesDirectly(t, f, "m", rows)
		f.counts()
		page, err := f.s.ListMeshNodes(ctx, "m", location.PageRequest{})
		require.NoError(t, err)
		requireOneSpotEach(t, page.Items, rows)
		// Range reads of listBatch rows, then range reads of the rows'
		// capacity ledger buckets (two each), ledgerBatch per request.
		require.Equal(t, map[string]int{txn.CallGet: (rows+listBatch-1)/listBatch + (2*rows+ledgerBatch-1)/ledgerBatch}, f.counts())
		require.Equal(t, 2, (rows+listBatch-1)/listBatch+(2*rows+ledgerBatch-1)/ledgerBatch, "one range read of each")
	})
	t.Run("list 1,000 mesh nodes from the watch cache", func(t *testing.T) {
		f := newFixture(t)
		const rows = 1000
		writeMeshNodesDirectly(t, f, "m", rows)
		f.warmCache(t)
		f.counts()
		page, err := f.s.ListMeshNodes(ctx, "m", location.PageRequest{})
		require.NoError(t, err)
		requireOneSpotEach(t, page.Items, rows)
		// One linearizable read of the current revision, whatever the rows.
		require.Equal(t, map[string]int{txn.CallGet: 1}, f.counts())
		peers, err := f.s.ListPeers(ctx, location.PeerFilter{})
		require.NoError(t, err)
		require.Empty(t, peers)
		live, err := f.s.ReadOwnerLiveness(ctx, []string{"lister", "a", "b"})
		require.NoError(t, err)
		require.Len(t, live, 3)
		require.Equal(t, map[string]int{txn.CallGet: 2}, f.counts(), "ListPeers and ReadOwnerLiveness: one request each")
	})
	t.Run("remove all of an owner's 1,000 rows", func(t *testing.T) {
		f := newFixture(t)
		const rows = 1000
		a := f.claim(t, "a")
		writeSpotsDirectly(t, f, a, rows)
		f.counts()
		n, err := f.s.RemoveAllByOwner(ctx, a)
		require.NoError(t, err)
		require.EqualValues(t, rows, n)
		// One keys-only range read of the owner index (indexBatch entries
		// per request); then per batch one read of the rows (not cached)
		// and one commit. A spot row costs two writes (row, index entry),
		// a batch keeps removalReserveOps of the 128 operations for the
		// owner key and the change stamps, and its rows move all the spot
		// table's delete fences: 54 rows per batch.
		const perBatch = (txn.DefaultMaxTxnOps - removalReserveOps - keys.FenceBuckets) / 2
		require.Equal(t, 54, perBatch)
		batches := (rows + perBatch - 1) / perBatch
		require.Equal(t, map[string]int{
			txn.CallGet: (rows + indexBatch - 1) / indexBatch,
			txn.CallTxn: 2 * batches,
		}, f.counts())
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

// requireOneSpotEach checks a list of rows descriptors written by
// writeMeshNodesDirectly: each with one active spot of the room type.
func requireOneSpotEach(t *testing.T, items []location.MeshNodeDescriptor, rows int) {
	t.Helper()
	require.Len(t, items, rows)
	for _, d := range items {
		require.Equal(t, int64(1), d.PopulationCapacity.Spots.Active)
		require.Equal(t, int64(1), d.PopulationCapacity.SpotTypes[0].Active)
	}
}

// writeMeshNodesDirectly writes rows descriptors of mesh, each with one
// active "room" user spot in its capacity ledger (its spot and typed
// buckets), encoded as the store encodes them, without the store (and so
// without its cache and recorder).
func writeMeshNodesDirectly(t *testing.T, f *fixture, mesh string, rows int) {
	t.Helper()
	now := location.Millis(time.Now())
	tok := location.OwnerToken{OwnerID: "lister", LeaseGeneration: 1}
	kvs := make([][2]string, 0, 3*rows)
	one, err := encodeValue(rules.TableLedger, rules.LedgerEntry{Active: 1}, 0, txn.NewNonce(), now)
	require.NoError(t, err)
	for i := range rows {
		d := meshNode(mesh, location.RoutingID(fmt.Sprintf("node-%05d", i)), tok)
		v, err := encodeValue(location.TableMeshNodes, d, 1, txn.NewNonce(), now)
		require.NoError(t, err)
		kvs = append(kvs, [2]string{f.s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(d.Key())), string(v)})
		for _, b := range []rules.Bucket{
			{Descriptor: d.Key(), Lifecycle: d.LifecycleGeneration, Name: rules.BucketSpot},
			{Descriptor: d.Key(), Lifecycle: d.LifecycleGeneration, Name: string(location.ObjectUserSpot), StableType: "room"},
		} {
			kvs = append(kvs, [2]string{f.s.tableKey(rules.TableLedger, b.Key()), string(one)})
		}
	}
	require.NoError(t, putAll(t.Context(), f.s.client.KV, kvs, 128, 4))
}

// writeSpotsDirectly writes rows spot rows of tok and their owner-index
// entries, encoded as the store encodes them, without the store.
func writeSpotsDirectly(t *testing.T, f *fixture, tok location.OwnerToken, rows int) {
	t.Helper()
	now := location.Millis(time.Now())
	kvs := make([][2]string, 0, 2*rows)
	for i := range rows {
		row := spot(fmt.Sprintf("spot-%05d", i), tok)
		nonce := txn.NewNonce()
		v, err := encodeValue(location.TableSpots, row, tok.LeaseGeneration+1, nonce, now)
		require.NoError(t, err)
		key := rules.SpotKey(row.Key())
		kvs = append(kvs,
			[2]string{f.s.tableKey(location.TableSpots, key), string(v)},
			[2]string{f.s.layout.OwnerIndexKey(tok.OwnerID, string(location.TableSpots), key), string(indexValue(nonce))})
	}
	require.NoError(t, putAll(t.Context(), f.s.client.KV, kvs, 128, 4))
}

// creationFixture is a store with one owner's mesh node with room for
// creations, and one user spot created on it (so that the node's keys are
// cached); it returns the store and the node as a creation target.
func creationFixture(t *testing.T) (*fixture, location.CreationTarget) {
	t.Helper()
	f := newFixture(t)
	a := f.claim(t, "a")
	storedIn(t)(f.s.UpdateMeshNode(t.Context(), creationNode("m", "node-a", a), location.IntentNewClaim))
	target := location.CreationTarget{MeshName: "m", NodeRID: "node-a", NodeLifecycleGeneration: 1, Owner: a}
	_, _, err := reserveAndCommit(t.Context(), f.s, "s0", target, []byte("ready"))
	require.NoError(t, err)
	return f, target
}
