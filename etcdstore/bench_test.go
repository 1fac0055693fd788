package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// The store's hot operations, each beside its raw-etcd twin, at 1, 16 and
// 64 concurrent callers (bench_harness_test.go, bench_twin_test.go). How to
// run them, and what they measured, is in docs/performance.md; for example
//
//	go test -run '^$' -bench 'ReserveCommit' -benchtime 2s -count 5 ./etcdstore/
//
// Every caller owns its own owner lease and rows, so callers never contend
// for the same guarded key; they share the change-stamp keys, which are
// written without a guard.

// Sizes of the large fixtures.
const (
	benchListRows   = 1000
	benchRemoveRows = 10000
)

// benchLeaseSeconds keeps the benchmarks' owner leases alive through a whole
// run without renewals.
const benchLeaseSeconds = 3600

// benchPayloadBytes is the size of the authority payloads the benchmarks
// write.
const benchPayloadBytes = 256

// fixtureTB is what the benchmark fixtures need of a test or benchmark.
type fixtureTB interface {
	etcdtest.TB
	Errorf(format string, args ...any)
	FailNow()
}

// benchWorld is a store over a fresh prefix of a client, with its request
// recorder and transaction capture, and the raw side: the same client's KV
// and Lease behind a recorder of their own, under another fresh prefix of
// the same length (so that keys have the same sizes).
type benchWorld struct {
	client   *clientv3.Client
	s        *Store
	rec      *txn.Recorder
	capture  *txnCapture
	raw      *txn.Recorder
	rawLease clientv3.Lease
	rawRoot  string
	// lease is the Lease under both sides' recorders (the client's; a fake
	// in BenchmarkClientCPU).
	lease *benchLease
}

// benchLease is a Lease whose implementation a benchmark can replace
// between runs (BenchmarkClientCPU).
type benchLease struct{ clientv3.Lease }

// compact compacts the member's history up to now (waiting until it is
// physically done), so that the history of a benchmark never fills the
// member's space quota. The harness calls it after every phase, outside the
// timer.
func (w *benchWorld) compact(ctx context.Context) error {
	resp, err := w.client.Get(ctx, "compact-probe")
	if err != nil {
		return err
	}
	_, err = w.client.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical())
	if txn.IsCompacted(err) {
		return nil // nothing was written since the last compaction
	}
	return err
}

// newBenchWorld returns a world over client with fresh prefixes; adjust
// (when given) changes the store's options.
func newBenchWorld(tb fixtureTB, client *clientv3.Client, adjust ...func(*Options)) *benchWorld {
	tb.Helper()
	rec := txn.NewRecorder(client.KV)
	capture := &txnCapture{KV: rec}
	lease := &benchLease{Lease: client.Lease}
	opts := Options{Root: etcdtest.UniquePrefix(tb), MinLeaseSeconds: benchLeaseSeconds, KV: capture, Lease: rec.Lease(lease)}
	for _, a := range adjust {
		if a != nil {
			a(&opts)
		}
	}
	s, err := New(client, opts)
	require.NoError(tb, err)
	raw := txn.NewRecorder(client.KV)
	return &benchWorld{client: client, s: s, rec: rec, capture: capture, raw: raw,
		rawLease: raw.Lease(lease), rawRoot: etcdtest.UniquePrefix(tb), lease: lease}
}

// storeCall is one caller's call of a single-transaction benchmark.
type storeCall struct {
	call func(ctx context.Context) error
	// twinKeys, when set, is called once after the captured call; it
	// returns, for the twin's k-th call, extra (captured, fresh) pairs of
	// strings to replace in keys: the identifiers each call makes anew.
	twinKeys func() func(k int) []string
	// keepAlive names the store key whose etcd lease the call keeps alive
	// beside its transaction (an owner-lease renewal); the twin does the
	// same with its copy of the key.
	keepAlive string
}

// replayPair builds both sides of an operation whose calls write with
// transactions: setup prepares a caller's state through the store and
// returns its call; the call runs once to reach the steady state, once more
// captured, and the caller's twin replays the captured writes.
func replayPair(tb fixtureTB, w *benchWorld, callers int, setup func(ctx context.Context, caller int) (storeCall, error)) (store, raw benchSide) {
	tb.Helper()
	ctx := tb.Context()
	storeCalls := make([]func(context.Context) error, callers)
	twinCalls := make([]func(context.Context) error, callers)
	for c := range callers {
		sc, err := setup(ctx, c)
		require.NoError(tb, err)
		require.NoError(tb, sc.call(ctx), "warm-up call")
		w.capture.start()
		err = sc.call(ctx)
		captured := w.capture.stop()
		require.NoError(tb, err)
		tms, err := writeTemplates(captured)
		require.NoError(tb, err)

		root := renamer(w.s.layout.Root(), w.rawRoot)
		var ks []string
		for _, tm := range tms {
			ks = append(ks, tm.keys()...)
		}
		if sc.keepAlive != "" {
			ks = append(ks, sc.keepAlive)
		}
		twin := newRawTwin(w.raw, w.rawLease)
		require.NoError(tb, twin.mirror(ctx, w.client.KV, ks, root, benchLeaseSeconds))
		var fresh func(int) []string
		if sc.twinKeys != nil {
			fresh = sc.twinKeys()
		}
		var lease clientv3.LeaseID
		if sc.keepAlive != "" {
			lease = clientv3.LeaseID(twin.known[root(sc.keepAlive)].leased)
			require.NotZero(tb, lease, "the twin's copy of %s has no lease", sc.keepAlive)
		}
		// Without fresh identifiers, the twin's keys are the same on every
		// call: they are renamed once, here, as a hand-written client would
		// build its keys once (renaming every key on every call cost the
		// twin a few microseconds a call that the store does not pay).
		twinTms, same := tms, func(k string) string { return k }
		if fresh == nil {
			twinTms = make([]txnTemplate, len(tms))
			for i := range tms {
				twinTms[i] = tms[i].renamed(root)
			}
		}
		k := 0
		storeCalls[c] = sc.call
		twinCalls[c] = func(ctx context.Context) error {
			tms, rename := twinTms, same
			if fresh != nil {
				rename = renamer(w.s.layout.Root(), w.rawRoot, fresh(k)...)
			}
			k++
			if lease == 0 {
				return twin.call(ctx, tms, rename)
			}
			var (
				wg    sync.WaitGroup
				kaErr error
			)
			wg.Go(func() {
				ka, err := twin.lease.KeepAliveOnce(ctx, lease)
				if err == nil && ka.TTL <= 0 {
					err = fmt.Errorf("bench: twin lease %x expired", lease)
				}
				kaErr = err
			})
			err := twin.call(ctx, tms, rename)
			wg.Wait()
			return errors.Join(err, kaErr)
		}
	}
	store = benchSide{rec: w.rec, cleanup: w.compact, call: func(ctx context.Context, c int) error { return storeCalls[c](ctx) }}
	raw = benchSide{rec: w.raw, cleanup: w.compact, call: func(ctx context.Context, c int) error { return twinCalls[c](ctx) }}
	return store, raw
}

// claimFor claims a one-minute owner lease (kept by etcd for
// benchLeaseSeconds).
func claimFor(ctx context.Context, s *Store, ownerID string) (location.OwnerToken, error) {
	res, err := s.ClaimOwnerLease(ctx, ownerID, time.Minute)
	if err != nil {
		return location.OwnerToken{}, err
	}
	if res.Kind != location.KindClaimed {
		return location.OwnerToken{}, fmt.Errorf("claim %s: %v", ownerID, res.Kind)
	}
	return res.Token, nil
}

// stored checks that a write answered Stored.
func stored(res location.WriteResult, err error) error {
	if err != nil {
		return err
	}
	if res.Status != location.Stored {
		return fmt.Errorf("write answered %v", res.Status)
	}
	return nil
}

// withWorld memoizes one client per top-level benchmark and builds a fresh
// world (fresh prefixes) per number of callers.
func withWorld(b *testing.B, build func(tb fixtureTB, w *benchWorld, callers int) (store, raw benchSide)) {
	var client *clientv3.Client
	runAtEveryConcurrency(b, func(tb benchTB, callers int) (benchSide, benchSide) {
		if client == nil {
			client = benchClient(tb)
		}
		return build(tb, newBenchWorld(tb, client), callers)
	})
}

// BenchmarkRenewOwnerLease renews an owner lease with the same TTL: a
// KeepAliveOnce beside one guarded rewrite of the owner key.
func BenchmarkRenewOwnerLease(b *testing.B) { withWorld(b, renewOwnerLeasePair) }

func renewOwnerLeasePair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	return replayPair(tb, w, callers, func(ctx context.Context, c int) (storeCall, error) {
		owner := fmt.Sprintf("owner-%02d", c)
		tok, err := claimFor(ctx, w.s, owner)
		if err != nil {
			return storeCall{}, err
		}
		return storeCall{keepAlive: w.s.layout.OwnerKey(owner), call: func(ctx context.Context) error {
			res, err := w.s.RenewOwnerLease(ctx, tok, time.Minute)
			if err == nil && res.Kind != location.KindRenewed {
				err = fmt.Errorf("renew answered %v", res.Kind)
			}
			return err
		}}, nil
	})
}

// BenchmarkRenewOwnerLeaseKeepAliveOnly sets the same renewal beside the
// cheapest one etcd offers: a KeepAliveOnce alone, without rewriting the
// owner key (the renewal 08 §6.2 sketches). Its ratio is the price of the
// rewrite, not of the store's code.
func BenchmarkRenewOwnerLeaseKeepAliveOnly(b *testing.B) { withWorld(b, renewVersusKeepAlivePair) }

func renewVersusKeepAlivePair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	ctx := tb.Context()
	toks := make([]location.OwnerToken, callers)
	leases := make([]clientv3.LeaseID, callers)
	for c := range callers {
		tok, err := claimFor(ctx, w.s, fmt.Sprintf("owner-%02d", c))
		require.NoError(tb, err)
		toks[c] = tok
		g, err := w.rawLease.Grant(ctx, benchLeaseSeconds)
		require.NoError(tb, err)
		leases[c] = g.ID
	}
	store := benchSide{rec: w.rec, cleanup: w.compact, call: func(ctx context.Context, c int) error {
		res, err := w.s.RenewOwnerLease(ctx, toks[c], time.Minute)
		if err == nil && res.Kind != location.KindRenewed {
			err = fmt.Errorf("renew answered %v", res.Kind)
		}
		return err
	}}
	raw := benchSide{rec: w.raw, cleanup: w.compact, call: func(ctx context.Context, c int) error {
		ka, err := w.rawLease.KeepAliveOnce(ctx, leases[c])
		if err == nil && ka.TTL <= 0 {
			err = fmt.Errorf("lease %x expired", leases[c])
		}
		return err
	}}
	return store, raw
}

// BenchmarkUpdateMeshNodeRevision publishes a new revision of the caller's
// mesh-node descriptor (intent renew).
func BenchmarkUpdateMeshNodeRevision(b *testing.B) { withWorld(b, updateMeshNodeRevisionPair) }

func updateMeshNodeRevisionPair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	return rowRenewPair(tb, w, callers, w.s.UpdateMeshNode,
		func(c int, tok location.OwnerToken) location.MeshNodeDescriptor {
			return meshNode("game", location.RoutingID(fmt.Sprintf("node-%02d", c)), tok)
		},
		func(d *location.MeshNodeDescriptor) { d.DescriptorRevision++ })
}

// BenchmarkUpdatePeerRenew renews the caller's auto-connect peer row (its
// owner holds a lease, as a running node's does).
func BenchmarkUpdatePeerRenew(b *testing.B) { withWorld(b, updatePeerRenewPair) }

func updatePeerRenewPair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	return rowRenewPair(tb, w, callers, w.s.UpdatePeer, func(c int, tok location.OwnerToken) location.PeerLocation {
		return peer(location.RoutingID(fmt.Sprintf("node-%02d", c)), tok.OwnerID)
	}, nil)
}

// BenchmarkUpdateSpotRenew renews the caller's spot row.
func BenchmarkUpdateSpotRenew(b *testing.B) { withWorld(b, updateSpotRenewPair) }

func updateSpotRenewPair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	return rowRenewPair(tb, w, callers, w.s.UpdateSpot, func(c int, tok location.OwnerToken) location.SpotLocation {
		return spot(fmt.Sprintf("spot-%02d", c), tok)
	}, nil)
}

// BenchmarkUpdateActorRenew renews the caller's actor row.
func BenchmarkUpdateActorRenew(b *testing.B) { withWorld(b, updateActorRenewPair) }

func updateActorRenewPair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	return rowRenewPair(tb, w, callers, w.s.UpdateActor, func(c int, tok location.OwnerToken) location.ActorLocation {
		return actor(fmt.Sprintf("actor-%02d", c), tok)
	}, nil)
}

// rowRenewPair builds both sides of a location row's renewal: each caller
// claims the lease of owner "owner-<caller>", writes the row row(caller,
// token) with update and intent new claim, then every call writes it again
// with intent renew, after next (when set) has changed it.
func rowRenewPair[T any](tb fixtureTB, w *benchWorld, callers int,
	update func(context.Context, T, location.WriteIntent) (location.WriteResult, error),
	row func(caller int, tok location.OwnerToken) T, next func(*T)) (benchSide, benchSide) {
	return replayPair(tb, w, callers, func(ctx context.Context, c int) (storeCall, error) {
		tok, err := claimFor(ctx, w.s, fmt.Sprintf("owner-%02d", c))
		if err != nil {
			return storeCall{}, err
		}
		r := row(c, tok)
		if err := stored(update(ctx, r, location.IntentNewClaim)); err != nil {
			return storeCall{}, err
		}
		return storeCall{call: func(ctx context.Context) error {
			if next != nil {
				next(&r)
			}
			return stored(update(ctx, r, location.IntentRenew))
		}}, nil
	})
}

// creationNode is a serving descriptor of (mesh, rid) owned by tok with
// room for a billion "room" user spots (the creation benchmarks never run
// out of capacity).
func creationNode(mesh string, rid location.RoutingID, tok location.OwnerToken) location.MeshNodeDescriptor {
	d := meshNode(mesh, rid, tok)
	const room = 1 << 30
	d.PopulationCapacity.Spots.Limit = room
	d.PopulationCapacity.SpotTypes[0].PopulationCapacity.Limit = room
	d.ObjectCapabilities[0].Limit = room
	return d
}

// creationTargetFor claims the lease of owner "owner-<caller>" and writes
// its serving node "node-<caller>" of mesh "m" (creationNode): the target
// of the caller's creations.
func creationTargetFor(ctx context.Context, s *Store, caller int) (location.CreationTarget, error) {
	tok, err := claimFor(ctx, s, fmt.Sprintf("owner-%02d", caller))
	if err != nil {
		return location.CreationTarget{}, err
	}
	rid := location.RoutingID(fmt.Sprintf("node-%02d", caller))
	if err := stored(s.UpdateMeshNode(ctx, creationNode("m", rid, tok), location.IntentNewClaim)); err != nil {
		return location.CreationTarget{}, err
	}
	return location.CreationTarget{MeshName: "m", NodeRID: rid, NodeLifecycleGeneration: 1, Owner: tok}, nil
}

// userSpotRoom is the reservation of one "room" user spot on target.
func userSpotRoom(gid string, target location.CreationTarget) location.ReserveRequest {
	return location.ReserveRequest{
		Key:      location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: gid},
		Intent:   location.CreationIntent{StableType: "room", RequestContentReference: "r", RequestSHA256: make([]byte, 32), RequestEncodedSize: 1},
		Target:   target,
		Capacity: location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: "room", Count: 1}},
	}
}

// actorReservation is the reservation of one "player" actor on target.
func actorReservation(gid string, target location.CreationTarget) location.ReserveRequest {
	return location.ReserveRequest{
		Key:      location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: gid},
		Intent:   location.CreationIntent{StableType: "player", RequestContentReference: "r", RequestSHA256: make([]byte, 32), RequestEncodedSize: 1},
		Target:   target,
		Capacity: location.CapacityVector{Actors: 1},
	}
}

// reserveAndCommit creates the user spot gid on target: Reserve, then
// Commit. It returns the committed record's version and the reservation id.
func reserveAndCommit(ctx context.Context, s *Store, gid string, target location.CreationTarget, payload []byte) (location.StoreVersion, string, error) {
	req := userSpotRoom(gid, target)
	r, err := s.Reserve(ctx, req)
	if err != nil {
		return "", "", err
	}
	if r.Kind != location.KindReserved {
		return "", "", fmt.Errorf("reserve %s answered %v", gid, r.Kind)
	}
	c, err := s.Commit(ctx, location.CommitRequest{Key: req.Key, ReservationID: r.ReservationID,
		ExpectedStoreVersion: r.Creating.StoreVersion, Target: target, ReadyPayload: payload})
	if err != nil {
		return "", "", err
	}
	if c.Kind != location.KindCommitted {
		return "", "", fmt.Errorf("commit %s answered %v", gid, c.Kind)
	}
	return c.Ready.StoreVersion, r.ReservationID, nil
}

// benchPayload returns an authority payload of benchPayloadBytes.
func benchPayload(tag byte) []byte {
	p := make([]byte, benchPayloadBytes)
	for i := range p {
		p[i] = tag
	}
	return p
}

// BenchmarkCompareExchangeAuthorityPreserve rewrites the payload of the
// caller's committed authority record (put, transition preserve).
func BenchmarkCompareExchangeAuthorityPreserve(b *testing.B) { withWorld(b, casPreservePair) }

func casPreservePair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	return replayPair(tb, w, callers, func(ctx context.Context, c int) (storeCall, error) {
		target, err := creationTargetFor(ctx, w.s, c)
		if err != nil {
			return storeCall{}, err
		}
		gid := fmt.Sprintf("spot-%02d", c)
		version, _, err := reserveAndCommit(ctx, w.s, gid, target, benchPayload('r'))
		if err != nil {
			return storeCall{}, err
		}
		key, err := location.EncodeAuthorityKey(location.ObjectUserSpot, gid)
		if err != nil {
			return storeCall{}, err
		}
		payload := benchPayload('p')
		return storeCall{call: func(ctx context.Context) error {
			res, err := w.s.CompareExchangeAuthority(ctx, key, version,
				location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: payload})
			if err != nil {
				return err
			}
			if res.Kind != location.KindStored {
				return fmt.Errorf("exchange answered %v", res.Kind)
			}
			version = res.Stored.StoreVersion
			return nil
		}}, nil
	})
}

// BenchmarkReserveCommit creates a user spot: Reserve, then Commit, on the
// caller's own node.
func BenchmarkReserveCommit(b *testing.B) { withWorld(b, reserveCommitPair) }

func reserveCommitPair(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
	return replayPair(tb, w, callers, func(ctx context.Context, c int) (storeCall, error) {
		target, err := creationTargetFor(ctx, w.s, c)
		if err != nil {
			return storeCall{}, err
		}
		payload := benchPayload('r')
		// Global ids are "c<caller>-<n>" in the store and "t<caller>-<k>" in
		// the twin: the same length, so the twin's keys have the same sizes.
		n := 0
		var lastGID, lastReservation string
		return storeCall{
			call: func(ctx context.Context) error {
				gid := fmt.Sprintf("c%02d-%09d", c, n)
				n++
				_, res, err := reserveAndCommit(ctx, w.s, gid, target, payload)
				lastGID, lastReservation = gid, res
				return err
			},
			twinKeys: func() func(int) []string {
				gid, res := lastGID, lastReservation
				return func(k int) []string {
					return []string{gid, fmt.Sprintf("t%02d-%09d", c, k), res, fmt.Sprintf("%08x-0000-4000-8000-%012x", c, k)}
				}
			},
		}, nil
	})
}

// BenchmarkListMeshNodes lists a mesh of benchListRows descriptors, each
// with a committed user spot (so two of its three capacity ledger buckets
// exist), from the store's watch cache (the default). The twin reads the
// same rows and ledger buckets with one Txn of two range reads.
func BenchmarkListMeshNodes(b *testing.B) { benchmarkListMeshNodes(b, nil) }

// BenchmarkListMeshNodesDirect is BenchmarkListMeshNodes with the watch
// cache off: every list reads etcd.
func BenchmarkListMeshNodesDirect(b *testing.B) {
	benchmarkListMeshNodes(b, func(o *Options) { o.WatchCache.Disabled = true })
}

// benchmarkListMeshNodes lists the mesh through a store made with adjust.
func benchmarkListMeshNodes(b *testing.B, adjust func(*Options)) {
	var (
		client *clientv3.Client
		w      *benchWorld
	)
	runAtEveryConcurrency(b, func(tb benchTB, callers int) (benchSide, benchSide) {
		if w == nil {
			client = benchClient(tb)
			w = newBenchWorld(tb, client, adjust)
			require.NoError(tb, fillMesh(tb.Context(), w, "m", benchListRows))
			require.NoError(tb, w.compact(tb.Context()))
		}
		return listMeshNodesPair(tb, w, "m", benchListRows)
	})
}

// fillMesh publishes rows descriptors of mesh under one owner, and commits
// one user spot on each, through the store.
func fillMesh(ctx context.Context, w *benchWorld, mesh string, rows int) error {
	tok, err := claimFor(ctx, w.s, "lister")
	if err != nil {
		return err
	}
	const workers = 16
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs error
	)
	for worker := range workers {
		wg.Go(func() {
			for i := worker; i < rows; i += workers {
				rid := location.RoutingID(fmt.Sprintf("node-%05d", i))
				err := stored(w.s.UpdateMeshNode(ctx, creationNode(mesh, rid, tok), location.IntentNewClaim))
				if err == nil {
					target := location.CreationTarget{MeshName: mesh, NodeRID: rid, NodeLifecycleGeneration: 1, Owner: tok}
					_, _, err = reserveAndCommit(ctx, w.s, fmt.Sprintf("room-%05d", i), target, benchPayload('r'))
				}
				if err != nil {
					mu.Lock()
					errs = errors.Join(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// listMeshNodesPair lists the mesh through the store and reads it raw. The
// store's watch cache (when on) is loaded before it is measured.
func listMeshNodesPair(tb fixtureTB, w *benchWorld, mesh string, rows int) (benchSide, benchSide) {
	tb.Helper()
	if w.s.cache != nil {
		w.s.cache.start(w.s.cache.meshNodes.ranges)
		require.Eventually(tb, func() bool { return w.s.CacheStats().Ready }, time.Minute, time.Millisecond)
	}
	store := benchSide{rec: w.rec, call: func(ctx context.Context, _ int) error {
		page, err := w.s.ListMeshNodes(ctx, mesh, location.PageRequest{})
		if err == nil && len(page.Items) != rows {
			err = fmt.Errorf("listed %d descriptors, want %d", len(page.Items), rows)
		}
		return err
	}}
	nodes := w.s.layout.TablePrefix(string(location.TableMeshNodes)) + keys.Segments(mesh)
	ledger := w.s.layout.TablePrefix(string(rules.TableLedger)) + keys.Segments(mesh)
	raw := benchSide{rec: w.raw, call: func(ctx context.Context, _ int) error {
		resp, err := w.raw.Txn(ctx).Then(
			clientv3.OpGet(nodes, clientv3.WithRange(keys.PrefixEnd(nodes))),
			clientv3.OpGet(ledger, clientv3.WithRange(keys.PrefixEnd(ledger))),
		).Commit()
		if err != nil {
			return err
		}
		if n := len(resp.Responses[0].GetResponseRange().GetKvs()); n != rows {
			return fmt.Errorf("raw range read %d descriptors, want %d", n, rows)
		}
		return nil
	}}
	return store, raw
}

// BenchmarkRemoveAllByOwner removes an owner's benchRemoveRows spot rows;
// every caller removes its own owner's. The rows are written directly
// (values encoded as the store encodes them) before each phase, outside the
// timer, so the store's cache does not hold them.
func BenchmarkRemoveAllByOwner(b *testing.B) {
	withWorld(b, func(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
		return removeAllPair(w, callers, benchRemoveRows)
	})
}

// removeTarget is one prepared owner of the remove benchmark.
type removeTarget struct {
	owner string
	gen   int64
}

// removeAll holds the prepared owners of both sides, per caller.
type removeAll struct {
	w         *benchWorld
	rows      int
	rawLayout keys.Layout
	seq       int
	store     [][]removeTarget
	raw       [][]removeTarget
}

func removeAllPair(w *benchWorld, callers, rows int) (benchSide, benchSide) {
	rawLayout, _ := keys.NewLayout(w.rawRoot) // a prefix from etcdtest.UniquePrefix is a valid root
	r := &removeAll{w: w, rows: rows, rawLayout: rawLayout, store: make([][]removeTarget, callers), raw: make([][]removeTarget, callers)}
	store := benchSide{rec: w.rec, cleanup: w.compact,
		prepare: func(ctx context.Context, callers, perCaller int) error {
			return r.prepare(ctx, false, callers, perCaller)
		},
		call: func(ctx context.Context, c int) error {
			t := r.next(false, c)
			n, err := w.s.RemoveAllByOwner(ctx, location.OwnerToken{OwnerID: t.owner, LeaseGeneration: t.gen})
			if err == nil && n != int64(rows) {
				err = fmt.Errorf("removed %d rows, want %d", n, rows)
			}
			return err
		}}
	raw := benchSide{rec: w.raw, cleanup: w.compact,
		prepare: func(ctx context.Context, callers, perCaller int) error {
			return r.prepare(ctx, true, callers, perCaller)
		},
		call: func(ctx context.Context, c int) error {
			return r.rawRemove(ctx, r.next(true, c))
		}}
	return store, raw
}

// next pops the caller's next prepared owner.
func (r *removeAll) next(raw bool, c int) removeTarget {
	q := &r.store
	if raw {
		q = &r.raw
	}
	t := (*q)[c][0]
	(*q)[c] = (*q)[c][1:]
	return t
}

// prepare gives every caller perCaller owners with r.rows spot rows each:
// the store's owners claim through the store; the twin's owner keys are
// written directly on leases of their own. Rows and owner-index entries
// have the bytes the store writes.
func (r *removeAll) prepare(ctx context.Context, raw bool, callers, perCaller int) error {
	layout := r.w.s.layout
	if raw {
		layout = r.rawLayout
	}
	var kvs [][2]string
	now := location.Millis(time.Now())
	for c := range callers {
		for range perCaller {
			r.seq++
			owner := fmt.Sprintf("owner-%02d-%06d", c, r.seq)
			var t removeTarget
			if raw {
				g, err := r.w.client.Grant(ctx, benchLeaseSeconds)
				if err != nil {
					return err
				}
				resp, err := r.w.client.Put(ctx, layout.OwnerKey(owner), fmt.Sprintf(`{"ownerId":%q}`, owner), clientv3.WithLease(g.ID))
				if err != nil {
					return err
				}
				t = removeTarget{owner: owner, gen: resp.Header.Revision}
				r.raw[c] = append(r.raw[c], t)
			} else {
				tok, err := claimFor(ctx, r.w.s, owner)
				if err != nil {
					return err
				}
				t = removeTarget{owner: owner, gen: tok.LeaseGeneration}
				r.store[c] = append(r.store[c], t)
			}
			tok := location.OwnerToken{OwnerID: owner, LeaseGeneration: t.gen}
			for i := range r.rows {
				row := spot(fmt.Sprintf("%s-%05d", owner, i), tok)
				nonce := txn.NewNonce()
				v, err := encodeValue(location.TableSpots, row, t.gen+1, nonce, now)
				if err != nil {
					return err
				}
				key := rules.SpotKey(row.Key())
				kvs = append(kvs,
					[2]string{layout.TableKey(string(location.TableSpots), key), string(v)},
					[2]string{layout.OwnerIndexKey(owner, string(location.TableSpots), key), string(indexValue(nonce))})
			}
		}
	}
	return putAll(ctx, r.w.client.KV, kvs, 128, 8)
}

// rawRemove is the twin of RemoveAllByOwner over spot rows: one keys-only
// range read of the owner index, then per batch of rows (the store's
// batches, nextBatch) one read of the owner key and the rows and one transaction
// that re-asserts the owner key's CreateRevision and every row's
// ModRevision, deletes the rows and their index entries and touches the two
// spot change stamps and the rows' delete fences.
func (r *removeAll) rawRemove(ctx context.Context, t removeTarget) error {
	kv := r.w.raw
	l := r.rawLayout
	ownerKey := l.OwnerKey(t.owner)
	prefix := l.OwnerIndexPrefix(t.owner)
	idx, err := kv.Get(ctx, prefix, clientv3.WithRange(keys.PrefixEnd(prefix)), clientv3.WithKeysOnly())
	if err != nil {
		return err
	}
	if len(idx.Kvs) != r.rows {
		return fmt.Errorf("raw index lists %d rows, want %d", len(idx.Kvs), r.rows)
	}
	scope := string(location.LocationSpot.Scope())
	stamps := []string{l.StampKey(scope, "play"), l.StampKey(scope, "")}
	entries := make([]indexEntry, len(idx.Kvs))
	for i, e := range idx.Kvs {
		owner, table, key, ok := l.SplitOwnerIndexKey(string(e.Key))
		if !ok {
			return fmt.Errorf("raw: bad index key %q", e.Key)
		}
		entries[i] = indexEntry{ownerID: owner, table: rules.Table(table), key: key, indexKey: string(e.Key)}
	}
	for start := 0; start < len(idx.Kvs); {
		n := r.w.s.nextBatch(entries[start:], 1)
		part := idx.Kvs[start : start+n]
		rowKeys := make([]string, len(part))
		gets := []clientv3.Op{clientv3.OpGet(ownerKey)}
		for i, e := range part {
			_, table, key, ok := l.SplitOwnerIndexKey(string(e.Key))
			if !ok {
				return fmt.Errorf("raw: bad index key %q", e.Key)
			}
			rowKeys[i] = l.TableKey(table, key)
			gets = append(gets, clientv3.OpGet(rowKeys[i]))
		}
		read, err := kv.Txn(ctx).Then(gets...).Commit()
		if err != nil {
			return err
		}
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(ownerKey), "=", t.gen)}
		var then []clientv3.Op
		for i, k := range rowKeys {
			got := read.Responses[i+1].GetResponseRange().GetKvs()
			if len(got) == 0 {
				return fmt.Errorf("raw: row %q is gone", k)
			}
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", got[0].ModRevision))
			then = append(then, clientv3.OpDelete(k))
		}
		for _, e := range part {
			then = append(then, clientv3.OpDelete(string(e.Key)))
		}
		nonce := txn.NewNonce()
		touched := map[string]bool{}
		for _, k := range rowKeys {
			touched[l.DeleteFenceKey(k)] = true
		}
		for _, s := range stamps {
			touched[s] = true
		}
		for k := range touched {
			then = append(then, clientv3.OpPut(k, nonce))
		}
		resp, err := kv.Txn(ctx).If(cmps...).Then(then...).Else(gets...).Commit()
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			return fmt.Errorf("raw: batch at %d failed its guards", start)
		}
		start += n
	}
	return nil
}

// The benchmarks' pairs at a small scale, so that `go test` keeps them
// working (the benchmarks themselves only run with -bench): every pair's
// calls succeed on both sides, and the twins of the single-transaction
// operations send exactly as many requests as the store.
func TestBenchmarkPairs(t *testing.T) {
	const callers, calls = 2, 3
	small := []struct {
		name      string
		build     func(tb fixtureTB, w *benchWorld, callers int) (benchSide, benchSide)
		sameTrips bool
	}{
		{name: "renew owner lease", build: renewOwnerLeasePair, sameTrips: true},
		{name: "renew owner lease, keep-alive only", build: renewVersusKeepAlivePair},
		{name: "mesh-node revision", build: updateMeshNodeRevisionPair, sameTrips: true},
		{name: "peer renew", build: updatePeerRenewPair, sameTrips: true},
		{name: "spot renew", build: updateSpotRenewPair, sameTrips: true},
		{name: "authority preserve", build: casPreservePair, sameTrips: true},
		{name: "reserve and commit", build: reserveCommitPair},
		{name: "list mesh nodes", build: func(tb fixtureTB, w *benchWorld, _ int) (benchSide, benchSide) {
			require.NoError(tb, fillMesh(tb.Context(), w, "m", 20))
			return listMeshNodesPair(tb, w, "m", 20)
		}},
		{name: "remove all by owner", build: func(_ fixtureTB, w *benchWorld, callers int) (benchSide, benchSide) {
			return removeAllPair(w, callers, 30)
		}},
	}
	for _, tc := range small {
		t.Run(tc.name, func(t *testing.T) {
			w := newBenchWorld(t, etcdtest.Connect(t))
			store, raw := tc.build(t, w, callers)
			trips := map[string]int{}
			for name, side := range map[string]benchSide{"store": store, "raw": raw} {
				if side.prepare != nil {
					require.NoError(t, side.prepare(t.Context(), callers, calls))
				}
				res, err := runPhase(t.Context(), side, callers, calls)
				require.NoError(t, err, name)
				require.Equal(t, callers*calls, res.calls)
				require.Zero(t, res.requests%res.calls, "%s: every call costs the same", name)
				trips[name] = res.requests / res.calls
				// side.cleanup is left out: it compacts the shared member,
				// under the feet of other tests' pinned reads.
			}
			if tc.sameTrips {
				require.Equal(t, trips["store"], trips["raw"], "the twin sends the store's requests")
			}
			require.LessOrEqual(t, trips["raw"], trips["store"], "a twin never needs more requests than the store")
		})
	}
}
