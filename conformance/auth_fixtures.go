package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// This file drives the standard authority fixture F of the authority
// catalogue (§0.3) on a scenario's store: authEnv publishes F's values
// (package fixture) and holds the helpers every AUTH scenario shares (RS,
// AS, RA, AA, REL, AGG, U, CAS and the "nothing changed" check).

// authMiB is the authority payload limit (fixture.MiB) under the name the
// random tester uses.
const authMiB = fixture.MiB

// authSetup is a fixture variant: F[NA spots=1], F[NB room=0], ….
type authSetup struct {
	NA, NB      fixture.Limits
	NAEntrySpot string
}

// authOpt changes one thing of the standard fixture.
type authOpt func(*authSetup)

// authWithNA changes NA's published limits.
func authWithNA(f func(*fixture.Limits)) authOpt { return func(s *authSetup) { f(&s.NA) } }

// authWithNB changes NB's published limits.
func authWithNB(f func(*fixture.Limits)) authOpt { return func(s *authSetup) { f(&s.NB) } }

// authWithNAEntrySpot makes NA publish an Entry Spot ID.
func authWithNAEntrySpot(id string) authOpt { return func(s *authSetup) { s.NAEntrySpot = id } }

// authNode is a fixture mesh node and the descriptor last published for it.
type authNode struct {
	Desc location.MeshNodeDescriptor
}

// Key returns the node's descriptor key.
func (n *authNode) Key() location.MeshNodeKey { return n.Desc.Key() }

// Owner returns the owner token the node was last published with.
func (n *authNode) Owner() location.OwnerToken { return n.Desc.Owner() }

// Target returns the node as a creation target.
func (n *authNode) Target() location.CreationTarget { return fixture.Target(n.Desc) }

// authEnv is one scenario's fixture F: the case, the owner leases A and B,
// the nodes NA and NB, and the terminals read so far.
type authEnv struct {
	c *Case
	// A and B are the owner leases of owner-a and owner-b; AExp and BExp their
	// reported expiry.
	A, B       location.OwnerToken
	AExp, BExp time.Time
	NA, NB     *authNode
	// seenOps are the creation terminals read so far (part of "nothing
	// changed").
	seenOps []location.OperationIdentity
}

// newAuthEnv builds fixture F (with the given variations) on the case's
// fresh store.
func newAuthEnv(c *Case, opts ...authOpt) *authEnv {
	c.Helper()
	setup := authSetup{NA: fixture.DefaultLimits(), NB: fixture.DefaultLimits()}
	for _, o := range opts {
		o(&setup)
	}
	e := &authEnv{c: c}
	e.A, e.AExp = e.claim("owner-a")
	e.B, e.BExp = e.claim("owner-b")
	e.NA = e.publishNode("node-a", e.A, setup.NA, setup.NAEntrySpot)
	e.NB = e.publishNode("node-b", e.B, setup.NB, "")
	return e
}

// TA and TB are the creation targets of NA and NB.
func (e *authEnv) TA() location.CreationTarget { return e.NA.Target() }

// TB is NB's creation target.
func (e *authEnv) TB() location.CreationTarget { return e.NB.Target() }

// now is the fake clock's time.
func (e *authEnv) now() time.Time { return location.Millis(e.c.F.Clock.Now()) }

// claim claims an owner lease of fixture.LeaseTTL and returns its token and
// expiry.
func (e *authEnv) claim(ownerID string) (location.OwnerToken, time.Time) {
	e.c.Helper()
	r, err := e.c.S.ClaimOwnerLease(e.c.Ctx, ownerID, fixture.LeaseTTL)
	require.NoError(e.c, err, "claimOwnerLease(%s)", ownerID)
	require.Equal(e.c, location.KindClaimed, r.Kind, "claimOwnerLease(%s)", ownerID)
	return r.Token, r.LeaseExpiresAt
}

// release releases an owner lease and requires it to be released.
func (e *authEnv) release(t location.OwnerToken) {
	e.c.Helper()
	require.Equal(e.c, location.KindReleased, callNoErr(e.c, e.c.S.ReleaseOwnerLease, t), "releaseOwnerLease(%+v)", t)
}

// expire makes ownerID's lease not live (F.ExpireOwnerLease).
func (e *authEnv) expire(ownerID string) {
	e.c.Helper()
	require.NotNil(e.c, e.c.F.ExpireOwnerLease, "the harness must provide ExpireOwnerLease")
	require.NoError(e.c, e.c.F.ExpireOwnerLease(e.c.Ctx, ownerID))
}

// publishNode publishes a new node with NewClaim and requires it stored.
func (e *authEnv) publishNode(rid string, owner location.OwnerToken, l fixture.Limits, entrySpot string) *authNode {
	e.c.Helper()
	n := &authNode{Desc: fixture.Node(rid, owner, l, entrySpot)}
	e.publish(n, location.IntentNewClaim)
	return n
}

// publish writes n.Desc with intent and requires stored.
func (e *authEnv) publish(n *authNode, intent location.WriteIntent) {
	e.c.Helper()
	r, err := e.c.S.UpdateMeshNode(e.c.Ctx, n.Desc, intent)
	require.NoError(e.c, err, "updateMeshNode(%s)", n.Desc.RID)
	require.Equal(e.c, location.Stored, r.Status, "updateMeshNode(%s, %s)", n.Desc.RID, intent)
}

// republish changes n's descriptor with edit and publishes it with intent.
func (e *authEnv) republish(n *authNode, intent location.WriteIntent, edit func(d *location.MeshNodeDescriptor)) {
	e.c.Helper()
	edit(&n.Desc)
	e.publish(n, intent)
}

// removeNode removes n with owner and requires stored.
func (e *authEnv) removeNode(n *authNode, owner location.OwnerToken) {
	e.c.Helper()
	st, err := e.c.S.RemoveMeshNode(e.c.Ctx, n.Key(), owner)
	require.NoError(e.c, err)
	require.Equal(e.c, location.Stored, st, "removeMeshNode(%s)", n.Desc.RID)
}

// --- keys, vectors, identities ---------------------------------------------

// authKey encodes a key with the store-independent codec.
func authKey(c *Case, kind location.ObjectKind, id string) location.AuthorityKey {
	c.Helper()
	k, err := location.EncodeAuthorityKey(kind, id)
	require.NoError(c, err, "encode %s %q", kind, id)
	return k
}

// --- creation helpers --------------------------------------------------------

// reserve calls Reserve and requires no error.
func (e *authEnv) reserve(r location.ReserveRequest) location.ReserveResult {
	e.c.Helper()
	res, err := e.c.S.Reserve(e.c.Ctx, r)
	require.NoError(e.c, err, "reserve(%s %q)", r.Key.Kind, r.Key.GlobalID)
	return res
}

// requireReserved requires a reserved result and returns it.
func (e *authEnv) requireReserved(res location.ReserveResult) location.ReserveResult {
	e.c.Helper()
	require.Equal(e.c, location.KindReserved, res.Kind, "reserve result %s", authDescribeReserve(res))
	require.NotNil(e.c, res.Creating)
	require.NotEmpty(e.c, res.ReservationID)
	require.Equal(e.c, e.now(), res.Creating.StoreNow, "creating.storeNow")
	return res
}

// RS reserves user_spot id (stable type t, default room) on T.
func (e *authEnv) RS(id string, T location.CreationTarget, t ...string) location.ReserveResult {
	e.c.Helper()
	return e.requireReserved(e.reserve(fixture.SpotRequest(location.ObjectUserSpot, id, T, authStableOr(t, "room"))))
}

// RI reserves instance_spot id (stable type t, default shard) on T.
func (e *authEnv) RI(id string, T location.CreationTarget, t ...string) location.ReserveResult {
	e.c.Helper()
	return e.requireReserved(e.reserve(fixture.SpotRequest(location.ObjectInstanceSpot, id, T, authStableOr(t, "shard"))))
}

// RA reserves actor id (stable type player) on T.
func (e *authEnv) RA(id string, T location.CreationTarget) location.ReserveResult {
	e.c.Helper()
	return e.requireReserved(e.reserve(fixture.ActorRequest(id, T)))
}

// authStableOr returns t[0] or def.
func authStableOr(t []string, def string) string {
	if len(t) > 0 {
		return t[0]
	}
	return def
}

// commit calls Commit and requires no error.
func (e *authEnv) commit(r location.CommitRequest) location.CommitResult {
	e.c.Helper()
	res, err := e.c.S.Commit(e.c.Ctx, r)
	require.NoError(e.c, err, "commit(%q)", r.Key.GlobalID)
	return res
}

// requireCommitKind requires a commit result of kind k (and a ready snapshot
// for committed / alreadyCommitted).
func (e *authEnv) requireCommitKind(res location.CommitResult, k location.ResultKind) *location.AuthoritySnapshot {
	e.c.Helper()
	require.Equal(e.c, k, res.Kind, "commit result")
	if k == location.KindCommitted || k == location.KindAlreadyCommitted {
		require.NotNil(e.c, res.Ready)
		require.Equal(e.c, e.now(), res.Ready.StoreNow, "ready.storeNow")
	} else {
		require.Nil(e.c, res.Ready, "a %s commit carries no snapshot", k)
	}
	return res.Ready
}

// AS reserves and commits user_spot id on T and returns the active snapshot.
func (e *authEnv) AS(id string, T location.CreationTarget, t ...string) *location.AuthoritySnapshot {
	e.c.Helper()
	R := e.RS(id, T, t...)
	return e.requireCommitKind(e.commit(fixture.CommitRequest(id, R, T)), location.KindCommitted)
}

// activeOnTA is AS(id, TA) with its key KS(id).
func (e *authEnv) activeOnTA(id string) (location.AuthorityKey, *location.AuthoritySnapshot) {
	e.c.Helper()
	return fixture.KS(id), e.AS(id, e.TA())
}

// complete calls CompleteCreation and requires no error.
func (e *authEnv) complete(r location.CompleteCreationRequest) location.CompleteCreationResult {
	e.c.Helper()
	res, err := e.c.S.CompleteCreation(e.c.Ctx, r)
	require.NoError(e.c, err, "completeCreation(%q)", r.Key.GlobalID)
	return res
}

// AA reserves actor id on T and completes it created with fixture.OP(n).
func (e *authEnv) AA(id string, T location.CreationTarget, n uint64) (location.ReserveResult, location.CompleteCreationResult) {
	e.c.Helper()
	R := e.RA(id, T)
	res := e.complete(fixture.CompleteRequest(id, R, T, location.TerminalCreated, fixture.P(fixture.OP(n), T0().Add(60*time.Second))))
	require.Equal(e.c, location.KindCreated, res.Kind, "completeCreation(%q)", id)
	require.NotNil(e.c, res.Ready)
	require.NotNil(e.c, res.Terminal)
	return R, res
}

// abort calls AbortCreation and requires no error.
func (e *authEnv) abort(r location.AbortRequest) location.ResultKind {
	e.c.Helper()
	k, err := e.c.S.AbortCreation(e.c.Ctx, r)
	require.NoError(e.c, err, "abort(%q)", r.Key.GlobalID)
	return k
}

// readTerminal reads a creation terminal and remembers the identity for the
// "nothing changed" fingerprint.
func (e *authEnv) readTerminal(op location.OperationIdentity) location.TerminalReadResult {
	e.c.Helper()
	res := callNoErr(e.c, e.c.S.ReadCreationTerminal, op)
	e.rememberOp(op)
	if res.Kind == location.KindMissing {
		require.Equal(e.c, e.now(), res.StoreNow, "missing.storeNow")
	} else {
		require.Equal(e.c, location.KindFound, res.Kind)
		require.NotNil(e.c, res.Record)
	}
	return res
}

// rememberOp adds op to the fingerprint's terminals.
func (e *authEnv) rememberOp(op location.OperationIdentity) {
	for _, o := range e.seenOps {
		if o == op {
			return
		}
	}
	e.seenOps = append(e.seenOps, op)
}

// --- relocation and aggregates ----------------------------------------------

// reserveRel calls ReserveRelocationCapacity and requires no error.
func (e *authEnv) reserveRel(r location.RelocationReservationRequest) location.RelocationReserveResult {
	e.c.Helper()
	res, err := e.c.S.ReserveRelocationCapacity(e.c.Ctx, r)
	require.NoError(e.c, err, "reserveRelocationCapacity(%q)", r.ReservationID)
	return res
}

// REL reserves relocation capacity and requires reserved{fence rid}.
func (e *authEnv) REL(rid string, key location.AuthorityKey, S *location.AuthoritySnapshot, from, to *authNode, capacity ...location.CapacityVector) location.RelocationReservationRequest {
	e.c.Helper()
	cv := fixture.VS("room")
	if len(capacity) > 0 {
		cv = capacity[0]
	}
	req := fixture.RelRequest(rid, key, S, from.Desc, to.Desc, cv)
	res := e.reserveRel(req)
	require.Equal(e.c, location.KindReserved, res.Kind, "reserveRelocationCapacity(%q): %+v", rid, res)
	require.Equal(e.c, location.RelocationFence(rid), res.Fence)
	return req
}

// abortRel calls AbortRelocationCapacity and requires no error.
func (e *authEnv) abortRel(fence string) location.ResultKind {
	e.c.Helper()
	return callNoErr(e.c, e.c.S.AbortRelocationCapacity, location.RelocationFence(fence))
}

// AGG builds the aggregate prepare request: participants in byte order,
// participant i carrying "agg-i" and "mem-i", target NB (lifecycle 1) and B.
func (e *authEnv) AGG(id string, gen int64, parts []fixture.Part, capacity location.CapacityVector) location.AggregatePrepareRequest {
	return fixture.AGG(e.NB.Desc, id, gen, parts, capacity)
}

// prepare calls PrepareAggregate and requires no error.
func (e *authEnv) prepare(r location.AggregatePrepareRequest) location.AggregatePrepareResult {
	e.c.Helper()
	res, err := e.c.S.PrepareAggregate(e.c.Ctx, r)
	require.NoError(e.c, err, "prepareAggregate(%q, %d)", r.AggregateID, r.AggregateGeneration)
	return res
}

// requirePrepared requires prepared (or alreadyPrepared) with the request's fence.
func (e *authEnv) requirePrepared(res location.AggregatePrepareResult, r location.AggregatePrepareRequest, k location.ResultKind) {
	e.c.Helper()
	require.Equal(e.c, k, res.Kind, "prepareAggregate result")
	require.Equal(e.c, location.AggregateFence{AggregateID: r.AggregateID, AggregateGeneration: r.AggregateGeneration}, res.Fence)
}

// authAggFence is the fence {id, gen}.
func authAggFence(id string, gen int64) location.AggregateFence {
	return location.AggregateFence{AggregateID: id, AggregateGeneration: gen}
}

// callNoErr calls f with the case's context and arg, requires no error and
// returns the result.
func callNoErr[A, R any](c *Case, f func(context.Context, A) (R, error), arg A) R {
	c.Helper()
	r, err := f(c.Ctx, arg)
	require.NoError(c, err)
	return r
}

// commitAgg calls CommitAggregate and requires no error.
func (e *authEnv) commitAgg(f location.AggregateFence) location.ResultKind {
	e.c.Helper()
	return callNoErr(e.c, e.c.S.CommitAggregate, f)
}

// abortAgg calls AbortAggregate and requires no error.
func (e *authEnv) abortAgg(f location.AggregateFence) location.ResultKind {
	e.c.Helper()
	return callNoErr(e.c, e.c.S.AbortAggregate, f)
}

// removeAll calls RemoveAllByOwner and requires no error.
func (e *authEnv) removeAll(t location.OwnerToken) int64 {
	e.c.Helper()
	return callNoErr(e.c, e.c.S.RemoveAllByOwner, t)
}

// --- read and compare-exchange -----------------------------------------------

// read reads key, requires no error and storeNow = clock.
func (e *authEnv) read(key location.AuthorityKey) location.AuthorityReadResult {
	e.c.Helper()
	r, err := e.c.S.ReadAuthority(e.c.Ctx, key)
	require.NoError(e.c, err, "readAuthority(%q)", key)
	e.checkReadResult(&r, "readAuthority")
	return r
}

// checkReadResult checks the shape and times of a read result.
func (e *authEnv) checkReadResult(r *location.AuthorityReadResult, what string) {
	e.c.Helper()
	require.NotNil(e.c, r, "%s: nil read result", what)
	switch r.Kind {
	case location.KindMissing:
		require.Nil(e.c, r.Snapshot, "%s: missing with a snapshot", what)
		require.Equal(e.c, e.now(), r.StoreNow, "%s: missing.storeNow", what)
	case location.KindSnapshot:
		require.NotNil(e.c, r.Snapshot, "%s: snapshot kind without snapshot", what)
		require.Equal(e.c, e.now(), r.Snapshot.StoreNow, "%s: snapshot.storeNow", what)
		require.Equal(e.c, e.now(), r.StoreNow, "%s: storeNow", what)
	default:
		require.Failf(e.c, "bad read kind", "%s: kind %q", what, r.Kind)
	}
}

// requireRow reads key and requires it to equal want (nil = missing).
func (e *authEnv) requireRow(key location.AuthorityKey, want *location.AuthoritySnapshot) *location.AuthoritySnapshot {
	e.c.Helper()
	r := e.read(key)
	e.requireReadIs(&r, want, fmt.Sprintf("readAuthority(%s)", key))
	return r.Snapshot
}

// requireMissing requires key to be missing.
func (e *authEnv) requireMissing(key location.AuthorityKey) {
	e.c.Helper()
	e.requireRow(key, nil)
}

// requireReadIs requires r to be missing (want nil) or the snapshot want.
func (e *authEnv) requireReadIs(r *location.AuthorityReadResult, want *location.AuthoritySnapshot, what string) {
	e.c.Helper()
	e.checkReadResult(r, what)
	if want == nil {
		require.Equal(e.c, location.KindMissing, r.Kind, "%s: want missing, got %s", what, authDescribeSnap(r.Snapshot))
		return
	}
	require.Equal(e.c, location.KindSnapshot, r.Kind, "%s: want a snapshot", what)
	authRequireSameSnap(e.c, want, r.Snapshot, what)
}

// cas calls CompareExchangeAuthority and requires no error.
func (e *authEnv) cas(key location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation) location.CompareExchangeResult {
	e.c.Helper()
	r, err := e.c.S.CompareExchangeAuthority(e.c.Ctx, key, v, m)
	require.NoError(e.c, err, "CAS(%s, %q, %s)", key, v, m.Kind)
	return r
}

// requireStored requires a stored result, checks its storeNow and returns the snapshot.
func (e *authEnv) requireStored(r location.CompareExchangeResult) *location.AuthoritySnapshot {
	e.c.Helper()
	require.Equal(e.c, location.KindStored, r.Kind, "CAS result: %s", authDescribeCAS(r))
	require.NotNil(e.c, r.Stored)
	require.Equal(e.c, e.now(), r.Stored.StoreNow, "stored.storeNow")
	require.Nil(e.c, r.Current, "stored carries no current read")
	require.Empty(e.c, r.DeletedVersion, "stored carries no deleted version")
	return r.Stored
}

// requireDeleted requires a deleted result with a version and storeNow =
// clock, and returns it.
func (e *authEnv) requireDeleted(r location.CompareExchangeResult) location.CompareExchangeResult {
	e.c.Helper()
	require.Equal(e.c, location.KindDeleted, r.Kind, "CAS delete: %s", authDescribeCAS(r))
	require.NotEmpty(e.c, r.DeletedVersion, "deleted.version")
	require.Equal(e.c, e.now(), r.StoreNow, "deleted.storeNow")
	require.Nil(e.c, r.Stored, "deleted carries no stored snapshot")
	require.Nil(e.c, r.Current, "deleted carries no current read")
	return r
}

// requireConflict requires conflict{current = want} (want nil = missing).
func (e *authEnv) requireConflict(r location.CompareExchangeResult, want *location.AuthoritySnapshot) {
	e.c.Helper()
	require.Equal(e.c, location.KindConflict, r.Kind, "CAS result: %s", authDescribeCAS(r))
	require.Nil(e.c, r.Stored, "conflict carries no stored snapshot")
	require.Empty(e.c, r.DeletedVersion, "conflict carries no deleted version")
	e.requireReadIs(r.Current, want, "conflict.current")
}

// requireCASConflict requires a CAS of key from version v with m to be a
// conflict whose current is want, and to change nothing (what names it).
func (e *authEnv) requireCASConflict(what string, key location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation, want *location.AuthoritySnapshot) {
	e.c.Helper()
	e.unchanged(what, func() { e.requireConflict(e.cas(key, v, m), want) })
}

// requireConflictAny requires a conflict with a well-formed current.
func (e *authEnv) requireConflictAny(r location.CompareExchangeResult) {
	e.c.Helper()
	require.Equal(e.c, location.KindConflict, r.Kind, "CAS result: %s", authDescribeCAS(r))
	e.checkReadResult(r.Current, "conflict.current")
}

// exactVersion requires, on a store with exact numbers, the store version a
// store with dense counters issues (the reference's); other stores' versions
// are opaque (catalogue §0.2) and are not checked here.
func (e *authEnv) exactVersion(got location.StoreVersion, want, what string) {
	e.c.Helper()
	if e.c.Caps.denseCounters() {
		require.Equal(e.c, location.StoreVersion(want), got, "%s: exact version", what)
	}
}

// exactNumber requires, on a store with exact numbers, the generation a
// store with dense counters issues (the reference's).
func (e *authEnv) exactNumber(got, want int64, what string) {
	e.c.Helper()
	if e.c.Caps.denseCounters() {
		require.Equal(e.c, want, got, "%s: exact number", what)
	}
}

// exactGenerations requires s's objectGeneration and
// authorityOwnerGeneration to be n exactly (when counters are dense); what
// prefixes the two field names in the messages.
func (e *authEnv) exactGenerations(s *location.AuthoritySnapshot, n int64, what string) {
	e.c.Helper()
	e.exactNumber(s.ObjectGeneration, n, what+"objectGeneration")
	e.exactNumber(s.AuthorityOwnerGeneration, n, what+"authorityOwnerGeneration")
}

// authRequireInvalid requires an invalid-argument error.
func authRequireInvalid(c *Case, err error, what string) {
	c.Helper()
	require.Error(c, err, "%s: want invalid argument", what)
	require.True(c, errors.Is(err, location.ErrInvalidArgument), "%s: want invalid argument, got %v", what, err)
}

// --- capacity observation (U) -------------------------------------------------

// authSlot is one authUsage pair.
type authSlot struct{ Active, Reserved int64 }

// authUsage is U(node): the store's authUsage of actors, spots and each spot type.
type authUsage struct {
	Actors, Spots, Room, Hall, Shard authSlot
}

// zero reports whether every counter is 0.
func (u authUsage) zero() bool { return u == authUsage{} }

// plusRooms is u with reserved more room spots (and spots) reserved and
// active more active; negative counts are fewer.
func (u authUsage) plusRooms(reserved, active int64) authUsage {
	u.Spots.Reserved += reserved
	u.Room.Reserved += reserved
	u.Spots.Active += active
	u.Room.Active += active
	return u
}

// allPages calls page with "" and then with each token it returns until
// one is empty, and returns every item in order. A list of more than
// limit pages fails the case (what names the list).
func allPages[T any](c *Case, what string, limit int, page func(token string) (items []T, next string)) []T {
	c.Helper()
	var all []T
	token := ""
	for range limit {
		items, next := page(token)
		all = append(all, items...)
		if next == "" {
			return all
		}
		token = next
	}
	require.FailNow(c, what+" never ended")
	return nil
}

// listNodes lists mesh m (every page).
func (e *authEnv) listNodes() []location.MeshNodeDescriptor {
	e.c.Helper()
	return allPages(e.c, "listMeshNodes", 10000, func(tok string) ([]location.MeshNodeDescriptor, string) {
		p, err := e.c.S.ListMeshNodes(e.c.Ctx, fixture.Mesh, location.PageRequest{ContinuationToken: tok})
		require.NoError(e.c, err)
		return p.Items, p.ContinuationToken
	})
}

// authUsageOf extracts U from a listed descriptor.
func authUsageOf(d location.MeshNodeDescriptor) authUsage {
	u := authUsage{
		Actors: authSlot{d.PopulationCapacity.Actors.Active, d.PopulationCapacity.Actors.Reserved},
		Spots:  authSlot{d.PopulationCapacity.Spots.Active, d.PopulationCapacity.Spots.Reserved},
	}
	for _, st := range d.PopulationCapacity.SpotTypes {
		s := authSlot{st.Active, st.Reserved}
		switch {
		case st.ObjectKind == location.ObjectUserSpot && st.StableType == "room":
			u.Room = s
		case st.ObjectKind == location.ObjectUserSpot && st.StableType == "hall":
			u.Hall = s
		case st.ObjectKind == location.ObjectInstanceSpot && st.StableType == "shard":
			u.Shard = s
		}
	}
	return u
}

// U returns the node's authUsage as listMeshNodes("m") reports it.
func (e *authEnv) U(n *authNode) authUsage {
	e.c.Helper()
	for _, d := range e.listNodes() {
		if d.RID == n.Desc.RID {
			return authUsageOf(d)
		}
	}
	require.FailNow(e.c, "node not listed", "U(%s): node not listed", n.Desc.RID)
	return authUsage{}
}

// requireU requires U(n) = want.
func (e *authEnv) requireU(n *authNode, want authUsage) {
	e.c.Helper()
	require.Equal(e.c, want, e.U(n), "U(%s)", n.Desc.RID)
}

// --- "nothing changed" ------------------------------------------------------

// authState is the observable state used for "nothing changed": every
// authority row (fresh scan), every node's authUsage, and the terminals read so far.
type authState struct {
	Rows      []string
	Nodes     []string
	Terminals []string
}

// scanAll lists every authority row (fresh scan, every page).
func (e *authEnv) scanAll(prefix string) []location.AuthorityEntry {
	e.c.Helper()
	return allPages(e.c, "listAuthorities", 100000, func(cursor string) ([]location.AuthorityEntry, string) {
		p, err := e.c.S.ListAuthorities(e.c.Ctx, prefix, cursor, 1000)
		require.NoError(e.c, err, "listAuthorities(%q)", prefix)
		require.Equal(e.c, location.KindPage, p.Kind, "a fresh scan must not expire")
		return p.Items, p.NextCursor
	})
}

// state captures authState.
func (e *authEnv) state() authState {
	e.c.Helper()
	var s authState
	for _, it := range e.scanAll("") {
		s.Rows = append(s.Rows, string(it.Key)+" "+authDescribeSnap(&it.Snapshot))
	}
	for _, d := range e.listNodes() {
		s.Nodes = append(s.Nodes, fmt.Sprintf("%s lc%d %+v", d.RID, d.LifecycleGeneration, authUsageOf(d)))
	}
	for _, op := range e.seenOps {
		r, err := e.c.S.ReadCreationTerminal(e.c.Ctx, op)
		require.NoError(e.c, err)
		s.Terminals = append(s.Terminals, fmt.Sprintf("%+v %s %s", op, r.Kind, authDescribeTerminal(r.Record)))
	}
	return s
}

// unchanged runs fn and requires the observable state to be the same before
// and after it.
func (e *authEnv) unchanged(what string, fn func()) {
	e.c.Helper()
	before := e.state()
	fn()
	after := e.state()
	require.Equal(e.c, before, after, "%s changed the store", what)
}

// requireInvalid requires call to fail with an invalid-argument error of
// class and code (code "": any) and to change nothing.
func (e *authEnv) requireInvalid(what string, class location.ErrorClass, code string, call func() error) {
	e.c.Helper()
	e.unchanged(what, func() {
		if code == "" {
			e.c.expectInputError(call(), class, "%s", what)
			return
		}
		e.c.expectInputErrorCode(call(), class, code, "%s", what)
	})
}

// errOf returns a call's error, for calls whose result does not matter.
func errOf[T any](_ T, err error) error { return err }

// --- descriptions -------------------------------------------------------------

// authDescribeSnap renders every snapshot field except storeNow (nil → "missing").
func authDescribeSnap(s *location.AuthoritySnapshot) string {
	if s == nil {
		return "<missing>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "v=%q payload=%q obj=%d ownerGen=%d owner=%s/%d alloc={%s %s %q %s/%s lc%d %s}",
		s.StoreVersion, s.Payload, s.ObjectGeneration, s.AuthorityOwnerGeneration,
		s.Owner.OwnerID, s.Owner.LeaseGeneration,
		s.Allocation.State, s.Allocation.ObjectKind, s.Allocation.StableType,
		s.Allocation.Descriptor.MeshName, s.Allocation.Descriptor.RID, s.Allocation.DescriptorLifecycleGeneration,
		authDescribeCapacity(s.Allocation.Capacity))
	if p := s.PendingCreation; p != nil {
		fmt.Fprintf(&b, " pending={%s %q %x %d}", p.ReservationID, p.RequestContentReference, p.RequestSHA256, p.RequestEncodedSize)
	}
	return b.String()
}

// authDescribeCapacity renders a capacity vector.
func authDescribeCapacity(v location.CapacityVector) string {
	s := fmt.Sprintf("{actors %d spots %d", v.Actors, v.Spots)
	if v.SpotType != nil {
		s += fmt.Sprintf(" %s/%s %d", v.SpotType.ObjectKind, v.SpotType.StableType, v.SpotType.Count)
	}
	return s + "}"
}

// authDescribeTerminal renders a terminal record (nil → "-").
func authDescribeTerminal(r *location.TerminalRecord) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("{%s %+v res=%s %s env=%q sha=%x exp=%s pub=%s}", r.State, r.Operation, r.ReservationID, r.ObjectKind,
		r.TerminalEnvelope, r.TerminalEnvelopeSHA256, r.ExpiresAt.UTC().Format(time.RFC3339Nano), r.StoreNow.UTC().Format(time.RFC3339Nano))
}

// authDescribeCAS renders a CAS result.
func authDescribeCAS(r location.CompareExchangeResult) string {
	s := string(r.Kind)
	if r.Stored != nil {
		s += " stored=" + authDescribeSnap(r.Stored)
	}
	if r.Current != nil {
		s += " current=" + authDescribeSnap(r.Current.Snapshot)
	}
	if r.DeletedVersion != "" {
		s += " deletedVersion=" + string(r.DeletedVersion)
	}
	return s
}

// authDescribeReserve renders a reserve result.
func authDescribeReserve(r location.ReserveResult) string {
	s := string(r.Kind)
	if r.Creating != nil {
		s += " creating=" + authDescribeSnap(r.Creating)
	}
	if r.Current != nil {
		s += " current=" + authDescribeSnap(r.Current.Snapshot)
	}
	return s
}

// authRequireSameSnap requires two snapshots to be equal in every field but storeNow.
func authRequireSameSnap(c *Case, want, got *location.AuthoritySnapshot, what string) {
	c.Helper()
	require.Equal(c, authDescribeSnap(want), authDescribeSnap(got), "%s", what)
}

// authNoVersion returns s with version cleared (to compare everything else).
func authNoVersion(s *location.AuthoritySnapshot) *location.AuthoritySnapshot {
	cp := *s
	cp.StoreVersion = ""
	return &cp
}

// authWithPayload returns a copy of s with another payload and version cleared.
func authWithPayload(s *location.AuthoritySnapshot, p string) *location.AuthoritySnapshot {
	cp := *authNoVersion(s)
	cp.Payload = []byte(p)
	return &cp
}
