package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section L: cross-cutting rules (LS-200 … LS-209).

// ls200 checks LS-200 "Cancelled context" (L. Cross-cutting; A-29 fixed: every
// method checks its context first, before it validates its input).
func ls200(l *lsCase) {
	a := l.claim("a")
	pg, rg := lsOneRowEach(l, a)

	ctx, cancel := context.WithCancel(l.Ctx)
	cancel()
	s := l.S
	mn := fixture.MN(a)
	mn.DescriptorRevision = 4
	cs := fixture.CS(a)
	cs.DescriptorRevision = 2
	fp := fixture.FP(a)
	fp.DescriptorRevision = 2
	ref := fixture.XferRef(fixture.XFER())
	x2 := fixture.XFER2()
	x2.ActorID = "actor-2"
	akey := location.AuthorityKey("zla1:a:7:actor-1")
	calls := []struct {
		name string
		call func() error
	}{
		{"UpdateMeshNode", func() error { _, err := s.UpdateMeshNode(ctx, mn, location.IntentRenew); return err }},
		{"RemoveMeshNode", func() error { _, err := s.RemoveMeshNode(ctx, fixture.MNKey(), a); return err }},
		{"ListMeshNodes", func() error { _, err := s.ListMeshNodes(ctx, fixture.MeshGame, location.PageRequest{}); return err }},
		{"UpdateClientServer", func() error { _, err := s.UpdateClientServer(ctx, cs, location.IntentRenew); return err }},
		{"RemoveClientServer", func() error { _, err := s.RemoveClientServer(ctx, fixture.CSKey(), a); return err }},
		{"ListClientServers", func() error { _, err := s.ListClientServers(ctx, "orders", location.PageRequest{}); return err }},
		{"UpdateFanoutPublisher", func() error { _, err := s.UpdateFanoutPublisher(ctx, fp, location.IntentRenew); return err }},
		{"RemoveFanoutPublisher", func() error { _, err := s.RemoveFanoutPublisher(ctx, fixture.FPKey(), a); return err }},
		{"ListFanoutPublishers", func() error { _, err := s.ListFanoutPublishers(ctx, "events", location.PageRequest{}); return err }},
		{"UpdatePeer", func() error { _, err := s.UpdatePeer(ctx, fixture.PEER("a", 0), location.IntentTakeover); return err }},
		{"RemovePeer", func() error { _, err := s.RemovePeer(ctx, fixture.PeerKey(), fixture.Token("a", pg)); return err }},
		{"ListPeers", func() error { _, err := s.ListPeers(ctx, location.PeerFilter{}); return err }},
		{"UpdateSpot", func() error {
			_, err := s.UpdateSpot(ctx, fixture.SPOT("a", a.LeaseGeneration), location.IntentTakeover)
			return err
		}},
		{"RemoveSpot", func() error { _, err := s.RemoveSpot(ctx, fixture.SpotKey(), a); return err }},
		{"ResolveSpot", func() error { _, err := s.ResolveSpot(ctx, fixture.SpotKey()); return err }},
		{"ListSpots", func() error { _, err := s.ListSpots(ctx, location.SpotFilter{}, location.PageRequest{}); return err }},
		{"UpdateActor", func() error {
			_, err := s.UpdateActor(ctx, fixture.ACTOR("a", a.LeaseGeneration), location.IntentTakeover)
			return err
		}},
		{"RemoveActor", func() error { _, err := s.RemoveActor(ctx, fixture.ActorKey(), a); return err }},
		{"ResolveActor", func() error { _, err := s.ResolveActor(ctx, fixture.ActorKey()); return err }},
		{"ListActors", func() error { _, err := s.ListActors(ctx, location.ActorFilter{}, location.PageRequest{}); return err }},
		{"UpdateRoute", func() error { _, err := s.UpdateRoute(ctx, fixture.ROUTE("a", 0), location.IntentTakeover); return err }},
		{"RemoveRoute", func() error { _, err := s.RemoveRoute(ctx, fixture.RouteKey(), fixture.Token("a", rg)); return err }},
		{"ResolveRoute", func() error { _, err := s.ResolveRoute(ctx, fixture.RouteKey()); return err }},
		{"ListRoutes", func() error { _, err := s.ListRoutes(ctx, location.RouteFilter{}, location.PageRequest{}); return err }},
		{"ClaimOwnerLease", func() error { _, err := s.ClaimOwnerLease(ctx, "c", lsTTL); return err }},
		{"ReadOwnerLease", func() error { _, err := s.ReadOwnerLease(ctx, "a"); return err }},
		{"RenewOwnerLease", func() error { _, err := s.RenewOwnerLease(ctx, a, time.Minute); return err }},
		{"ReleaseOwnerLease", func() error { _, err := s.ReleaseOwnerLease(ctx, a); return err }},
		{"RemoveAllByOwner", func() error { _, err := s.RemoveAllByOwner(ctx, a); return err }},
		{"PrepareActorTransfer", func() error { _, err := s.PrepareActorTransfer(ctx, x2); return err }},
		{"CommitActorTransfer", func() error { _, err := s.CommitActorTransfer(ctx, ref, "recovery-a"); return err }},
		{"ActivateActorTransfer", func() error { _, err := s.ActivateActorTransfer(ctx, ref, "recovery-a"); return err }},
		{"AbortActorTransfer", func() error { _, err := s.AbortActorTransfer(ctx, ref, "recovery-a"); return err }},
		{"TakeOverActorTransfer", func() error { _, err := s.TakeOverActorTransfer(ctx, ref, "recovery-b", lsTTL); return err }},
		{"ResolveActorTransfer", func() error { _, err := s.ResolveActorTransfer(ctx, fixture.MeshGame, "actor-1"); return err }},
		{"GetChangeStamp", func() error {
			_, err := s.GetChangeStamp(ctx, location.ChangeStampScope{Kind: location.LocationPeer.Scope()})
			return err
		}},
		{"ReadAuthority", func() error { _, err := s.ReadAuthority(ctx, akey); return err }},
		{"CompareExchangeAuthority", func() error {
			_, err := s.CompareExchangeAuthority(ctx, akey, "1", location.AuthorityMutation{Kind: location.MutationDelete})
			return err
		}},
		{"ListAuthorities", func() error { _, err := s.ListAuthorities(ctx, "zla1:", "", 10); return err }},
		{"Reserve", func() error {
			_, err := s.Reserve(ctx, lsActorReserve("actor-1", fixture.MeshGame, "node-a", a))
			return err
		}},
		{"Commit", func() error { _, err := s.Commit(ctx, location.CommitRequest{}); return err }},
		{"CompleteCreation", func() error { _, err := s.CompleteCreation(ctx, location.CompleteCreationRequest{}); return err }},
		{"ReadCreationTerminal", func() error { _, err := s.ReadCreationTerminal(ctx, location.OperationIdentity{}); return err }},
		{"AbortCreation", func() error { _, err := s.AbortCreation(ctx, location.AbortRequest{}); return err }},
		{"ReserveRelocationCapacity", func() error {
			_, err := s.ReserveRelocationCapacity(ctx, location.RelocationReservationRequest{})
			return err
		}},
		{"AbortRelocationCapacity", func() error { _, err := s.AbortRelocationCapacity(ctx, "r"); return err }},
		{"PrepareAggregate", func() error { _, err := s.PrepareAggregate(ctx, location.AggregatePrepareRequest{}); return err }},
		{"CommitAggregate", func() error { _, err := s.CommitAggregate(ctx, location.AggregateFence{}); return err }},
		{"AbortAggregate", func() error { _, err := s.AbortAggregate(ctx, location.AggregateFence{}); return err }},
	}
	if st, ok := s.(location.MeshNodeChangeStamper); ok {
		calls = append(calls, struct {
			name string
			call func() error
		}{"GetMeshNodeChangeStamp", func() error { _, _, err := st.GetMeshNodeChangeStamp(ctx, fixture.MeshGame); return err }})
	}
	if w, ok := s.(location.ChangeWatcher); ok {
		calls = append(calls, struct {
			name string
			call func() error
		}{"WatchChanges", func() error { _, err := w.WatchChanges(ctx); return err }})
	}
	invalid := fixture.MN(a)
	invalid.MeshName = ""
	calls = append(calls, struct {
		name string
		call func() error
	}{"UpdateMeshNode with an invalid descriptor", func() error {
		_, err := s.UpdateMeshNode(ctx, invalid, location.IntentNewClaim)
		if errors.Is(err, location.ErrInvalidArgument) {
			return fmt.Errorf("the input was checked before the context: %w", err)
		}
		return err
	}})
	l.useOwner("c")
	before := l.snap()
	for _, c := range calls {
		err := c.call()
		require.Errorf(l, err, "%s with a cancelled context", c.name)
		require.Truef(l, errors.Is(err, context.Canceled), "%s with a cancelled context: error %v does not wrap context.Canceled", c.name, err)
	}
	l.noEffect(before, "calls with a cancelled context")
}

// lsActorReserve is a valid reservation of actor id on (mesh, node) for the
// owner token.
func lsActorReserve(id, mesh, node string, owner location.OwnerToken) location.ReserveRequest {
	return location.ReserveRequest{
		Key: location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: id},
		Intent: location.CreationIntent{
			StableType: "player", RequestContentReference: "req:" + id,
			RequestSHA256: bytes.Repeat([]byte{1}, 32), RequestEncodedSize: 10,
		},
		Target:          location.CreationTarget{MeshName: mesh, NodeRID: lsRID(node), NodeLifecycleGeneration: 7, Owner: owner},
		CreatingPayload: []byte("creating"),
		Capacity:        location.CapacityVector{Actors: 1},
	}
}

// ls201 checks LS-201 "Order" (L. Cross-cutting): lists are in (mesh, id) byte
// order, not creation order.
func ls201(l *lsCase) {
	a := l.claim("a")
	lsSpotRows(l,
		lsSpotOn("a", a.LeaseGeneration, "m2", "spot-b"),
		lsSpotOn("a", a.LeaseGeneration, "m2", "spot-c"),
		lsSpotOn("a", a.LeaseGeneration, "m2", "spot-a"),
		lsSpotOn("a", a.LeaseGeneration, "m1", "spot-z"),
	)
	require.Equal(l, []string{"spot-a", "spot-b", "spot-c"}, lsSpotIDs(l.listSpots(location.SpotFilter{MeshName: lsStrPtr("m2")}, location.PageRequest{}).Items))
	require.Equal(l, []string{"m1/spot-z", "m2/spot-a", "m2/spot-b", "m2/spot-c"}, lsMeshSpotIDs(l.listSpots(location.SpotFilter{}, location.PageRequest{}).Items))
}

// ls202 checks LS-202 "Full traversal" (L. Cross-cutting): paging through all
// rows yields the unpaged list.
func ls202(l *lsCase) {
	a := l.claim("a")
	for i := 1; i <= 5; i++ {
		lsSpotRows(l, lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, fmt.Sprintf("spot-%d", i)))
	}
	play := location.SpotFilter{MeshName: lsStrPtr(fixture.MeshPlay)}
	all := l.listSpots(play, location.PageRequest{})
	var got []location.SpotLocation
	token := ""
	for i, want := range []int{2, 2, 1} {
		p := l.listSpots(play, location.PageRequest{PageSize: 2, ContinuationToken: token})
		require.Lenf(l, p.Items, want, "page %d", i+1)
		if i < 2 {
			require.NotEmptyf(l, p.ContinuationToken, "page %d has a token", i+1)
		} else {
			require.Emptyf(l, p.ContinuationToken, "page %d has no token", i+1)
		}
		got = append(got, p.Items...)
		token = p.ContinuationToken
	}
	l.expectSameRow(all.Items, got, "the pages concatenated equal the unpaged list")
}

// ls203 checks LS-203 "Returned rows are copies" (L. Cross-cutting; A-40
// fixed): rows a caller passes in and rows a store returns are copies.
func ls203(l *lsCase) {
	lsCreateMN(l, func(d *location.MeshNodeDescriptor) { d.EntrySpotID = lsStrPtr("entry-1") })
	lsCreateSpot(l)
	mns := l.listMN(fixture.MeshGame)
	wantMN := normalizeValue(mns)
	mns[0].ObjectCapabilities[0].StableType = "mutated"
	mns[0].ObjectCapabilities = append(mns[0].ObjectCapabilities, location.ObjectCapability{StableType: "extra"})
	mns[0].ChannelWeights["orders"] = -1
	mns[0].SpotTypes[0] = "mutated"
	mns[0].PopulationCapacity.SpotTypes[0].Limit = 1
	*mns[0].EntrySpotID = "mutated"
	l.expectSameRow(wantMN, l.listMN(fixture.MeshGame), "ListMeshNodes after mutating a returned row")

	// A peer written and then changed by its caller keeps what was written.
	in := fixture.PEER("a", 0)
	pres := l.putPeer(in, location.IntentNewClaim)
	l.expectStored(pres, numPositive(1), l.now(), "PEER(a)")
	in.Metadata["route-endpoint"] = "mutated"
	in.Capabilities[0] = "mutated"
	*in.NodeRID = "mutated"

	spot := l.resolveSpot(fixture.SpotKey())
	wantSpot := *spot
	spot.OwnerID, spot.SpotGeneration = "mutated", 99
	l.expectSameRow(&wantSpot, l.resolveSpot(fixture.SpotKey()), "ResolveSpot after mutating a returned row")

	peers := l.listPeers(location.PeerFilter{})
	wantPeers := normalizeValue(peers)
	peers[0].Metadata["route-endpoint"] = "mutated"
	peers[0].Metadata["extra"] = "x"
	peers[0].Capabilities[0] = "mutated"
	*peers[0].NodeRID = "mutated"
	l.expectSameRow(wantPeers, l.listPeers(location.PeerFilter{}), "ListPeers after mutating a returned row")
	written := fixture.PEER("a", pres.Generation)
	written.UpdatedAt = l.now()
	l.expectSameRow([]location.PeerLocation{written}, l.listPeers(location.PeerFilter{}), "the peer as written: the caller's map, slice and pointer were copied in")

	// A transfer's participants are copied in and out.
	r := fixture.XFER()
	lsPrepared(l, r)
	r.Participants[0] = "mutated"
	rec := l.resolveXfer(fixture.MeshGame, "actor-1")
	require.Equal(l, []location.RoutingID{"node-a", "node-b"}, rec.Participants, "the caller's participants were copied in")
	rec.Participants[1] = "mutated"
	require.Equal(l, []location.RoutingID{"node-a", "node-b"}, l.resolveXfer(fixture.MeshGame, "actor-1").Participants, "a resolved record is a copy")
}

// ls204 checks LS-204 "Caller timestamps are ignored" (L. Cross-cutting).
func ls204(l *lsCase) {
	a := l.claim("a")
	old := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
	mn := fixture.MN(a)
	mn.UpdatedAt = old
	cs := fixture.CS(a)
	cs.UpdatedAt = old
	fp := fixture.FP(a)
	fp.UpdatedAt = old
	p := fixture.PEER("a", 0)
	p.UpdatedAt = old
	sp := fixture.SPOT("a", a.LeaseGeneration)
	sp.UpdatedAt = old
	ac := fixture.ACTOR("a", a.LeaseGeneration)
	ac.UpdatedAt = old
	r := fixture.ROUTE("a", 0)
	r.UpdatedAt = old
	l.expectStored(l.putMN(mn, location.IntentNewClaim), numPositive(1), T0(), "MN")
	l.expectStored(l.putCS(cs, location.IntentNewClaim), numPositive(1), T0(), "CS")
	l.expectStored(l.putFP(fp, location.IntentNewClaim), numPositive(1), T0(), "FP")
	l.expectStored(l.putPeer(p, location.IntentNewClaim), numPositive(1), T0(), "PEER")
	l.expectStored(l.putSpot(sp, location.IntentNewClaim), numPositive(1), T0(), "SPOT")
	l.expectStored(l.putActor(ac, location.IntentNewClaim), numPositive(1), T0(), "ACTOR")
	l.expectStored(l.putRoute(r, location.IntentNewClaim), numPositive(1), T0(), "ROUTE")
	l.expectTime(l.oneMN(fixture.MeshGame).UpdatedAt, T0(), "listed mesh node")
	l.expectTime(l.listCS("orders")[0].UpdatedAt, T0(), "listed client server")
	l.expectTime(l.listFP("events")[0].UpdatedAt, T0(), "listed fanout publisher")
	l.expectTime(lsOnePeer(l).UpdatedAt, T0(), "listed peer")
	l.expectTime(l.resolveSpot(fixture.SpotKey()).UpdatedAt, T0(), "resolved spot")
	l.expectTime(l.resolveActor(fixture.ActorKey()).UpdatedAt, T0(), "resolved actor")
	l.expectTime(l.resolveRoute(fixture.RouteKey()).UpdatedAt, T0(), "resolved route")
}

// ls205 checks LS-205 "Failure payload" (L. Cross-cutting).
func ls205(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	// IgnoredStale of every row write (Renew of an absent row) and of the
	// removes that return a full result.
	l.expectFailed(l.putMN(fixture.MN(a), location.IntentRenew), location.IgnoredStale, "MN Renew of an absent row")
	l.expectFailed(l.putCS(fixture.CS(a), location.IntentRenew), location.IgnoredStale, "CS Renew of an absent row")
	l.expectFailed(l.putFP(fixture.FP(a), location.IntentRenew), location.IgnoredStale, "FP Renew of an absent row")
	l.expectFailed(l.putPeer(fixture.PEER("a", 0), location.IntentRenew), location.IgnoredStale, "PEER Renew of an absent row")
	l.expectFailed(l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentRenew), location.IgnoredStale, "SPOT Renew of an absent row")
	l.expectFailed(l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentRenew), location.IgnoredStale, "ACTOR Renew of an absent row")
	l.expectFailed(l.putRoute(fixture.ROUTE("a", 0), location.IntentRenew), location.IgnoredStale, "ROUTE Renew of an absent row")
	l.expectFailed(l.rmPeer(fixture.PeerKey(), fixture.Token("a", 1)), location.IgnoredStale, "RemovePeer of an absent row")
	l.expectFailed(l.rmRoute(fixture.RouteKey(), fixture.Token("a", 1)), location.IgnoredStale, "RemoveRoute of an absent row")
	// RejectedConflict of every row write.
	l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim)
	l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim)
	l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentNewClaim)
	l.putRoute(fixture.ROUTE("a", 0), location.IntentNewClaim)
	lsExpectEveryWriteRejected(l, b)
}

// lsExpectEveryWriteRejected requires a NewClaim to be RejectedConflict in
// every table: the descriptors of an owner without a lease, and b's rows
// over the live rows of a, which the caller stored.
func lsExpectEveryWriteRejected(l *lsCase, b location.OwnerToken) {
	l.Helper()
	ghost := fixture.Token("ghost", 1)
	l.expectFailed(l.putMN(fixture.MN(ghost), location.IntentNewClaim), location.RejectedConflict, "MN without a lease")
	l.expectFailed(l.putCS(fixture.CS(ghost), location.IntentNewClaim), location.RejectedConflict, "CS without a lease")
	l.expectFailed(l.putFP(fixture.FP(ghost), location.IntentNewClaim), location.RejectedConflict, "FP without a lease")
	l.expectFailed(l.putPeer(fixture.PEER("b", 0), location.IntentNewClaim), location.RejectedConflict, "PEER NewClaim over live a")
	l.expectFailed(l.putSpot(fixture.SPOT("b", b.LeaseGeneration), location.IntentNewClaim), location.RejectedConflict, "SPOT NewClaim over live a")
	l.expectFailed(l.putActor(fixture.ACTOR("b", b.LeaseGeneration), location.IntentNewClaim), location.RejectedConflict, "ACTOR NewClaim over live a")
	l.expectFailed(l.putRoute(fixture.ROUTE("b", 0), location.IntentNewClaim), location.RejectedConflict, "ROUTE NewClaim over live a")
}

// ls206 checks LS-206 "Concurrent claims are atomic" (L. Cross-cutting):
// concurrent NewClaims on one fresh key, started together behind a barrier,
// and concurrent claims of one owner lease.
func ls206(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("race-%02d", i)
		rows := []location.SpotLocation{lsSpotOn("a", a.LeaseGeneration, fixture.MeshPlay, id), lsSpotOn("b", b.LeaseGeneration, fixture.MeshPlay, id)}
		results := make([]location.WriteResult, len(rows))
		errs := make([]error, len(rows))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j := range rows {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[j], errs[j] = l.S.UpdateSpot(l.Ctx, rows[j], location.IntentNewClaim)
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for j := range rows {
			require.NoErrorf(l, errs[j], "round %d writer %d", i, j)
			switch results[j].Status {
			case location.Stored:
				require.Equalf(l, -1, winner, "round %d: both writers stored", i)
				winner = j
				l.expectStored(results[j], numPositive(1), T0(), "round %d winner", i)
			default:
				l.expectFailed(results[j], location.RejectedConflict, "round %d loser", i)
			}
		}
		require.NotEqualf(l, -1, winner, "round %d: nobody stored", i)
		row := l.resolveSpot(location.SpotKey{MeshName: fixture.MeshPlay, SpotID: id})
		require.NotNil(l, row)
		require.Equalf(l, rows[winner].OwnerID, row.OwnerID, "round %d: the stored row is the winner's", i)
	}

	const claimers = 8
	claims := make([]location.OwnerLeaseClaimResult, claimers)
	errs := make([]error, claimers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for j := 0; j < claimers; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			claims[j], errs[j] = l.S.ClaimOwnerLease(l.Ctx, "owner-z", lsTTL)
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for j := range claims {
		require.NoError(l, errs[j])
		if claims[j].Kind == location.KindClaimed {
			won++
			l.useOwner("owner-z")
			l.expectLeaseFound("owner-z", claims[j].Token, T0().Add(lsTTL))
		} else {
			require.Equal(l, location.KindConflict, claims[j].Kind)
		}
	}
	require.Equal(l, 1, won, "exactly one concurrent claim of owner-z succeeds")
}

// ls207 checks LS-207 "Unknown write intent" (L. Cross-cutting; A-31, Go fix).
func ls207(l *lsCase) {
	a := l.claim("a")
	writes := []struct {
		name string
		call func(location.WriteIntent) error
	}{
		{"UpdateMeshNode", func(in location.WriteIntent) error {
			_, err := l.S.UpdateMeshNode(l.Ctx, fixture.MN(a), in)
			return err
		}},
		{"UpdateClientServer", func(in location.WriteIntent) error {
			_, err := l.S.UpdateClientServer(l.Ctx, fixture.CS(a), in)
			return err
		}},
		{"UpdateFanoutPublisher", func(in location.WriteIntent) error {
			_, err := l.S.UpdateFanoutPublisher(l.Ctx, fixture.FP(a), in)
			return err
		}},
		{"UpdatePeer", func(in location.WriteIntent) error {
			_, err := l.S.UpdatePeer(l.Ctx, fixture.PEER("a", 0), in)
			return err
		}},
		{"UpdateSpot", func(in location.WriteIntent) error {
			_, err := l.S.UpdateSpot(l.Ctx, fixture.SPOT("a", a.LeaseGeneration), in)
			return err
		}},
		{"UpdateActor", func(in location.WriteIntent) error {
			_, err := l.S.UpdateActor(l.Ctx, fixture.ACTOR("a", a.LeaseGeneration), in)
			return err
		}},
		{"UpdateRoute", func(in location.WriteIntent) error {
			_, err := l.S.UpdateRoute(l.Ctx, fixture.ROUTE("a", 0), in)
			return err
		}},
	}
	before := l.snap()
	for _, w := range writes {
		for _, in := range []location.WriteIntent{0, 4} {
			l.expectInputError(w.call(in), location.ClassRange, "%s with intent %d", w.name, int(in))
		}
	}
	l.noEffect(before, "writes with unknown intents")
}

// ls208 checks LS-208 "Transfer lease under one millisecond" (L. Cross-cutting;
// A-41, Go rule).
func ls208(l *lsCase) {
	ref := fixture.XferRef(fixture.XFER())
	for _, ttl := range []time.Duration{0, -time.Millisecond, 999 * time.Microsecond} {
		r := fixture.XFER()
		r.RecoveryLeaseTTL = ttl
		_, err := l.S.PrepareActorTransfer(l.Ctx, r)
		l.expectInputErrorCode(err, location.ClassType, "transfer.lease", "prepare with TTL %v", ttl)
	}
	r := fixture.XFER()
	r.RecoveryLeaseTTL = time.Millisecond
	rec := lsPrepared(l, r)
	l.expectTime(rec.RecoveryLeaseExpiresAt, lsAt(time.Millisecond), "1 ms recovery lease")
	r2 := fixture.XFER2()
	r2.ActorID = "actor-2"
	r2.RecoveryLeaseTTL = 1500 * time.Microsecond
	res2 := l.prepare(r2)
	l.expectXferStatus(res2, location.TransferStored, "prepare with a TTL of 1.5 ms")
	l.expectTime(res2.Record.RecoveryLeaseExpiresAt, lsAt(time.Millisecond), "a TTL of 1.5 ms counts as 1 ms")
	for _, ttl := range []time.Duration{0, -time.Millisecond, 999 * time.Microsecond} {
		_, err := l.S.TakeOverActorTransfer(l.Ctx, ref, "recovery-b", ttl)
		l.expectInputErrorCode(err, location.ClassType, "transfer.lease", "takeover with TTL %v", ttl)
	}
	l.expectXferStatus(l.takeOver(ref, "recovery-b", time.Millisecond), location.TransferRejectedConflict, "takeover while the 1 ms lease runs")
	l.setClock(time.Millisecond)
	res := l.takeOver(ref, "recovery-b", time.Millisecond)
	l.expectXferStatus(res, location.TransferStored, "takeover 1 ms later")
	l.expectTime(res.Record.RecoveryLeaseExpiresAt, lsAt(2*time.Millisecond), "the successor's 1 ms lease")
	l.setClock(2 * time.Millisecond)
	l.expectXferStatus(l.takeOver(ref, "recovery-c", time.Millisecond), location.TransferStored, "the successor's 1 ms lease expired 1 ms later")
}

// ls209 checks LS-209 "RemoveAllByOwner is one atomic step" (L. Cross-cutting;
// in memory only, etcd batches it, E-8): RemoveAllByOwner races a NewClaim on
// one of the owner's spots while an observer reads the owner's authority record
// and then the spot; in no round may the observer see the authority record gone
// while the owner's spot remains.
func ls209(l *lsCase) {
	b := l.claim("b")
	const rounds = 20
	for i := 0; i < rounds; i++ {
		owner := fmt.Sprintf("sweep-%02d", i)
		node := fmt.Sprintf("node-%02d", i)
		spotID := fmt.Sprintf("spot-%02d", i)
		actorID := fmt.Sprintf("actor-%02d", i)
		a := l.claim(owner)
		mn := fixture.MN(a)
		mn.RID = lsRID(node)
		l.expectStored(l.putMN(mn, location.IntentNewClaim), numPositive(1), T0(), "MN(%s)", owner)
		key := location.SpotKey{MeshName: fixture.MeshPlay, SpotID: spotID}
		l.expectStored(l.putSpot(lsSpotOn(owner, a.LeaseGeneration, fixture.MeshPlay, spotID), location.IntentNewClaim), numPositive(1), T0(), "SPOT(%s)", owner)
		res, err := l.S.Reserve(l.Ctx, lsActorReserve(actorID, fixture.MeshGame, node, a))
		require.NoError(l, err)
		require.Equalf(l, location.KindReserved, res.Kind, "round %d: an authority row of %s", i, owner)
		ak, err := keys.EncodeAuthorityKey(keys.AuthorityActor, actorID)
		require.NoError(l, err)
		akey := location.AuthorityKey(ak)

		var (
			wg       sync.WaitGroup
			removed  int64
			rmErr    error
			write    location.WriteResult
			writeErr error
			violated string
			obsErr   error
		)
		start := make(chan struct{})
		done := make(chan struct{})
		wg.Add(3)
		go func() {
			defer wg.Done()
			defer close(done)
			<-start
			removed, rmErr = l.S.RemoveAllByOwner(l.Ctx, a)
		}()
		go func() {
			defer wg.Done()
			<-start
			write, writeErr = l.S.UpdateSpot(l.Ctx, lsSpotOn("b", b.LeaseGeneration, fixture.MeshPlay, spotID), location.IntentNewClaim)
		}()
		go func() {
			defer wg.Done()
			<-start
			for finished := false; !finished && violated == "" && obsErr == nil; {
				select {
				case <-done:
					finished = true
				default:
				}
				auth, err := l.S.ReadAuthority(l.Ctx, akey)
				if err != nil {
					obsErr = err
					return
				}
				spot, err := l.S.ResolveSpot(l.Ctx, key)
				if err != nil {
					obsErr = err
					return
				}
				if auth.Kind == location.KindMissing && spot != nil && spot.OwnerID == owner {
					violated = "the authority record was gone while the owner's spot remained"
				}
			}
		}()
		close(start)
		wg.Wait()
		require.NoErrorf(l, rmErr, "round %d: RemoveAllByOwner", i)
		require.NoErrorf(l, writeErr, "round %d: UpdateSpot", i)
		require.NoErrorf(l, obsErr, "round %d: observer", i)
		require.Emptyf(l, violated, "round %d: %s", i, violated)
		require.Equalf(l, int64(3), removed, "round %d: authority row, mesh node and spot removed", i)
		row := l.resolveSpot(key)
		switch write.Status {
		case location.Stored:
			require.NotNilf(l, row, "round %d", i)
			require.Equalf(l, "b", row.OwnerID, "round %d: b's claim after the removal", i)
		default:
			l.expectFailed(write, location.RejectedConflict, "round %d: b's claim before the removal", i)
			require.Nilf(l, row, "round %d: the removal took a's spot", i)
		}
	}
}
