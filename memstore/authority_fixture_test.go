package memstore

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// This file holds the authority catalogue's standard fixture F (§0.3) on a
// Store, with the catalogue's helpers (RS, AS, RA, AA, REL, AGG, U, CAS).

// auT0 is the fixture's start time, 2026-07-03T00:00:00Z.
func auT0() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }

// auLimits are a fixture node's published limits.
type auLimits struct{ actors, spots, room, hall, shard int64 }

// auTen are F's limits.
func auTen() auLimits { return auLimits{10, 10, 10, 10, 10} }

// auFix is fixture F: owner leases A and B (60 s), nodes NA (owner A) and NB
// (owner B) in mesh m.
type auFix struct {
	t      *testing.T
	ctx    context.Context
	s      *Store
	clk    *clock.Manual
	A, B   location.OwnerToken
	NA, NB location.MeshNodeDescriptor
}

// auOpt varies fixture F.
type auOpt func(na, nb *location.MeshNodeDescriptor)

// auNALimits and auNBLimits are F[NA …] and F[NB …].
func auNALimits(l auLimits) auOpt {
	return func(na, _ *location.MeshNodeDescriptor) { na.PopulationCapacity = auPopulation(l) }
}

func auNBLimits(l auLimits) auOpt {
	return func(_, nb *location.MeshNodeDescriptor) { nb.PopulationCapacity = auPopulation(l) }
}

// auNAEntrySpot makes NA publish an entry spot id.
func auNAEntrySpot(id string) auOpt {
	return func(na, _ *location.MeshNodeDescriptor) { na.EntrySpotID = &id }
}

func auPopulation(l auLimits) location.Population {
	return location.Population{
		Actors: location.PopulationCapacity{Limit: l.actors},
		Spots:  location.PopulationCapacity{Limit: l.spots},
		SpotTypes: []location.SpotTypeCapacity{
			{ObjectKind: location.ObjectUserSpot, StableType: "room", PopulationCapacity: location.PopulationCapacity{Limit: l.room}},
			{ObjectKind: location.ObjectUserSpot, StableType: "hall", PopulationCapacity: location.PopulationCapacity{Limit: l.hall}},
			{ObjectKind: location.ObjectInstanceSpot, StableType: "shard", PopulationCapacity: location.PopulationCapacity{Limit: l.shard}},
		},
	}
}

func newAuFix(t *testing.T, opts ...auOpt) *auFix {
	clk := clock.NewManual(auT0())
	f := &auFix{t: t, ctx: t.Context(), clk: clk,
		s: New(Options{Clock: clk.Now, Random: rand.NewChaCha8([32]byte{7})})}
	f.A = f.claim("owner-a")
	f.B = f.claim("owner-b")
	na, nb := auNode("node-a", f.A), auNode("node-b", f.B)
	for _, o := range opts {
		o(&na, &nb)
	}
	f.NA, f.NB = na, nb
	f.publish(na, location.IntentNewClaim)
	f.publish(nb, location.IntentNewClaim)
	return f
}

// auNode is a valid Server/Serving descriptor of mesh m with F's limits.
func auNode(rid string, owner location.OwnerToken) location.MeshNodeDescriptor {
	return location.MeshNodeDescriptor{
		MeshName: "m", RID: location.RoutingID(rid), LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity:    auPopulation(auTen()),
		ActivationConcurrency: location.ActivationConcurrency{Limit: 4},
		ChannelWeights:        map[string]int64{}, SpotTypes: []string{}, ObjectCapabilities: []location.ObjectCapability{},
		State: location.StateServing, SecurityIdentity: "id", OwnerID: owner.OwnerID, LeaseGeneration: owner.LeaseGeneration,
	}
}

// with returns the fixture reporting to t (for subtests sharing a store).
func (f *auFix) with(t *testing.T) *auFix {
	c := *f
	c.t, c.ctx = t, t.Context()
	return &c
}

// claim claims a 60 s owner lease.
func (f *auFix) claim(ownerID string) location.OwnerToken {
	f.t.Helper()
	r, err := f.s.ClaimOwnerLease(f.ctx, ownerID, time.Minute)
	require.NoError(f.t, err)
	require.Equal(f.t, location.KindClaimed, r.Kind)
	return r.Token
}

// release releases an owner lease.
func (f *auFix) release(tok location.OwnerToken) {
	f.t.Helper()
	k, err := f.s.ReleaseOwnerLease(f.ctx, tok)
	require.NoError(f.t, err)
	require.Equal(f.t, location.KindReleased, k)
}

// expire is ExpireOwnerLease.
func (f *auFix) expire(ownerID string) {
	f.t.Helper()
	require.NoError(f.t, f.s.ExpireOwnerLease(f.ctx, ownerID))
}

// publish writes a mesh-node descriptor, which must be stored.
func (f *auFix) publish(d location.MeshNodeDescriptor, intent location.WriteIntent) {
	f.t.Helper()
	r, err := f.s.UpdateMeshNode(f.ctx, d, intent)
	require.NoError(f.t, err)
	require.Equal(f.t, location.Stored, r.Status, "publish %s", d.RID)
}

// target is a node's creation target.
func auTarget(d location.MeshNodeDescriptor) location.CreationTarget {
	return location.CreationTarget{MeshName: d.MeshName, NodeRID: d.RID, NodeLifecycleGeneration: d.LifecycleGeneration, Owner: d.Owner()}
}

// Capacity vectors.
func auVA() location.CapacityVector { return location.CapacityVector{Actors: 1} }

func auVS(t string, n int64) location.CapacityVector {
	return location.CapacityVector{Spots: n, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: t, Count: n}}
}

func auVI(t string) location.CapacityVector {
	return location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectInstanceSpot, StableType: t, Count: 1}}
}

// auKS and auKA are KS(id) and KA(id).
func auKS(id string) location.AuthorityKey {
	k, err := location.EncodeAuthorityKey(location.ObjectUserSpot, id)
	if err != nil {
		panic(err)
	}
	return k
}

func auKA(id string) location.AuthorityKey {
	k, err := location.EncodeAuthorityKey(location.ObjectActor, id)
	if err != nil {
		panic(err)
	}
	return k
}

func auBytes(n int, b byte) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// auReserveReq is RS/RI/RA's request.
func auReserveReq(kind location.ObjectKind, id, stableType string, t location.CreationTarget, v location.CapacityVector) location.ReserveRequest {
	return location.ReserveRequest{
		Key:             location.ObjectCreationKey{Kind: kind, GlobalID: id},
		Intent:          location.CreationIntent{StableType: stableType, RequestContentReference: "req:" + id, RequestSHA256: auBytes(32, 1), RequestEncodedSize: 10},
		Target:          t,
		CreatingPayload: []byte("creating"),
		Capacity:        v,
	}
}

func (f *auFix) reserve(r location.ReserveRequest) location.ReserveResult {
	f.t.Helper()
	res, err := f.s.Reserve(f.ctx, r)
	require.NoError(f.t, err)
	return res
}

// RS reserves user spot id (stable type room unless given).
func (f *auFix) RS(id string, t location.CreationTarget, stableType ...string) location.ReserveResult {
	f.t.Helper()
	st := "room"
	if len(stableType) > 0 {
		st = stableType[0]
	}
	res := f.reserve(auReserveReq(location.ObjectUserSpot, id, st, t, auVS(st, 1)))
	require.Equal(f.t, location.KindReserved, res.Kind, "RS(%s)", id)
	return res
}

// RA reserves actor id.
func (f *auFix) RA(id string, t location.CreationTarget) location.ReserveResult {
	f.t.Helper()
	res := f.reserve(auReserveReq(location.ObjectActor, id, "player", t, auVA()))
	require.Equal(f.t, location.KindReserved, res.Kind, "RA(%s)", id)
	return res
}

func auCommitReq(id string, r location.ReserveResult, t location.CreationTarget) location.CommitRequest {
	return location.CommitRequest{
		Key:           location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: id},
		ReservationID: r.ReservationID, ExpectedStoreVersion: r.Creating.StoreVersion, Target: t, ReadyPayload: []byte("ready"),
	}
}

func (f *auFix) commit(c location.CommitRequest) location.CommitResult {
	f.t.Helper()
	res, err := f.s.Commit(f.ctx, c)
	require.NoError(f.t, err)
	return res
}

// AS reserves and commits user spot id.
func (f *auFix) AS(id string, t location.CreationTarget, stableType ...string) location.AuthoritySnapshot {
	f.t.Helper()
	r := f.RS(id, t, stableType...)
	res := f.commit(auCommitReq(id, r, t))
	require.Equal(f.t, location.KindCommitted, res.Kind, "AS(%s)", id)
	return *res.Ready
}

// auOP is OP(n).
func auOP(n uint64) location.OperationIdentity {
	return location.OperationIdentity{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: n}}
}

// auPub is P(op, deadline).
func auPub(op location.OperationIdentity, deadline time.Time) location.TerminalPublication {
	sum := sha256.Sum256([]byte("env"))
	return location.TerminalPublication{Operation: op, TerminalEnvelope: []byte("env"), TerminalEnvelopeSHA256: sum[:], OperationDeadline: deadline}
}

func auCompleteReq(id string, r location.ReserveResult, t location.CreationTarget, kind location.TerminalState, p location.TerminalPublication) location.CompleteCreationRequest {
	c := location.CreationCompletion{Kind: kind, Terminal: p}
	if kind == location.TerminalCreated {
		c.ReadyPayload = []byte("ready-actor")
	}
	return location.CompleteCreationRequest{
		Key:           location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: id},
		ReservationID: r.ReservationID, ExpectedStoreVersion: r.Creating.StoreVersion, Target: t, Completion: c,
	}
}

func (f *auFix) complete(c location.CompleteCreationRequest) location.CompleteCreationResult {
	f.t.Helper()
	res, err := f.s.CompleteCreation(f.ctx, c)
	require.NoError(f.t, err)
	return res
}

// AA reserves actor id and completes it created with OP(n), deadline T0+60 s.
func (f *auFix) AA(id string, t location.CreationTarget, n uint64) location.AuthoritySnapshot {
	f.t.Helper()
	r := f.RA(id, t)
	res := f.complete(auCompleteReq(id, r, t, location.TerminalCreated, auPub(auOP(n), auT0().Add(time.Minute))))
	require.Equal(f.t, location.KindCreated, res.Kind, "AA(%s)", id)
	return *res.Ready
}

func auAbortReq(kind location.ObjectKind, id string, r location.ReserveResult, t location.CreationTarget) location.AbortRequest {
	return location.AbortRequest{
		Key:           location.ObjectCreationKey{Kind: kind, GlobalID: id},
		ReservationID: r.ReservationID, ExpectedStoreVersion: r.Creating.StoreVersion, Target: t,
	}
}

func (f *auFix) abort(a location.AbortRequest) location.ResultKind {
	f.t.Helper()
	k, err := f.s.AbortCreation(f.ctx, a)
	require.NoError(f.t, err)
	return k
}

func (f *auFix) read(k location.AuthorityKey) location.AuthorityReadResult {
	f.t.Helper()
	r, err := f.s.ReadAuthority(f.ctx, k)
	require.NoError(f.t, err)
	return r
}

func (f *auFix) current(k location.AuthorityKey) location.AuthoritySnapshot {
	f.t.Helper()
	r := f.read(k)
	require.Equal(f.t, location.KindSnapshot, r.Kind, "%s", k)
	return *r.Snapshot
}

func (f *auFix) readTerminal(op location.OperationIdentity) location.TerminalReadResult {
	f.t.Helper()
	r, err := f.s.ReadCreationTerminal(f.ctx, op)
	require.NoError(f.t, err)
	return r
}

// CAS is compareExchangeAuthority.
func (f *auFix) CAS(k location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation) location.CompareExchangeResult {
	f.t.Helper()
	r, err := f.s.CompareExchangeAuthority(f.ctx, k, v, m)
	require.NoError(f.t, err)
	return r
}

func auPreserve(payload string) location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: []byte(payload)}
}

func auRestore(expected location.OwnerToken, payload string) location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationRestore, ExpectedOwner: &expected, Payload: []byte(payload)}
}

func auRebind(expected, target location.OwnerToken, payload string) location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationRebindOwnerLease, ExpectedOwner: &expected, TargetOwner: &target, Payload: []byte(payload)}
}

func auDelete() location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationDelete}
}

func auNewOwner(target location.OwnerToken, fence, payload string) location.AuthorityMutation {
	fe := location.RelocationFence(fence)
	return location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionNewOwner, TargetOwner: &target, RelocationFence: &fe, Payload: []byte(payload)}
}

// auRelReq is REL(id, S, from, to, cap) for a user_spot/room row.
func auRelReq(id string, k location.AuthorityKey, s location.AuthoritySnapshot, from, to location.MeshNodeDescriptor, v location.CapacityVector) location.RelocationReservationRequest {
	return location.RelocationReservationRequest{
		ReservationID: id, AuthorityKey: k, ExpectedStoreVersion: s.StoreVersion,
		ObjectKind: location.ObjectUserSpot, StableType: "room",
		SourceDescriptor: from.Key(), SourceNodeLifecycleGeneration: from.LifecycleGeneration, SourceOwner: from.Owner(),
		TargetDescriptor: to.Key(), TargetNodeLifecycleGeneration: to.LifecycleGeneration, TargetOwner: to.Owner(),
		Capacity: v,
	}
}

func (f *auFix) REL(r location.RelocationReservationRequest) location.RelocationReserveResult {
	f.t.Helper()
	res, err := f.s.ReserveRelocationCapacity(f.ctx, r)
	require.NoError(f.t, err)
	return res
}

func (f *auFix) abortRel(fence string) location.ResultKind {
	f.t.Helper()
	k, err := f.s.AbortRelocationCapacity(f.ctx, location.RelocationFence(fence))
	require.NoError(f.t, err)
	return k
}

// auPart is an aggregate participant.
type auPart struct {
	key        location.AuthorityKey
	version    location.StoreVersion
	transition location.Transition
}

// auAggReq is AGG(id, gen, parts, cap) targeting NB with owner B.
func (f *auFix) aggReq(id string, gen int64, v location.CapacityVector, parts ...auPart) location.AggregatePrepareRequest {
	r := location.AggregatePrepareRequest{
		AggregateID: id, AggregateGeneration: gen, InventoryDigest: auBytes(32, 7),
		TargetDescriptor: f.NB.Key(), TargetDescriptorLifecycleGeneration: 1, TargetOwner: f.B, Capacity: v,
	}
	for i, p := range parts {
		r.Participants = append(r.Participants, location.AggregateParticipant{
			AuthorityKey: p.key, ExpectedStoreVersion: p.version, OwnerTransition: p.transition,
			AuthorityPayload: fmt.Appendf(nil, "agg-%d", i), MembershipMutation: fmt.Appendf(nil, "mem-%d", i),
		})
	}
	return r
}

func (f *auFix) prepare(r location.AggregatePrepareRequest) location.AggregatePrepareResult {
	f.t.Helper()
	res, err := f.s.PrepareAggregate(f.ctx, r)
	require.NoError(f.t, err)
	return res
}

func auFence(id string, gen int64) location.AggregateFence {
	return location.AggregateFence{AggregateID: id, AggregateGeneration: gen}
}

func (f *auFix) commitAgg(id string, gen int64) location.ResultKind {
	f.t.Helper()
	k, err := f.s.CommitAggregate(f.ctx, auFence(id, gen))
	require.NoError(f.t, err)
	return k
}

func (f *auFix) abortAgg(id string, gen int64) location.ResultKind {
	f.t.Helper()
	k, err := f.s.AbortAggregate(f.ctx, auFence(id, gen))
	require.NoError(f.t, err)
	return k
}

// auEntry is one active/reserved pair of U(node).
type auEntry struct{ Active, Reserved int64 }

// auUsage is U(node): the node's capacity usage as listMeshNodes shows it.
type auUsage struct{ Actors, Spots, Room, Hall, Shard auEntry }

func auSpots(active, reserved int64) auUsage {
	return auUsage{Spots: auEntry{active, reserved}, Room: auEntry{active, reserved}}
}

// U reads a node's usage through ListMeshNodes.
func (f *auFix) U(d location.MeshNodeDescriptor) auUsage {
	f.t.Helper()
	page, err := f.s.ListMeshNodes(f.ctx, "m", location.PageRequest{})
	require.NoError(f.t, err)
	for _, n := range page.Items {
		if n.RID != d.RID {
			continue
		}
		e := func(c location.PopulationCapacity) auEntry { return auEntry{c.Active, c.Reserved} }
		u := auUsage{Actors: e(n.PopulationCapacity.Actors), Spots: e(n.PopulationCapacity.Spots)}
		for _, st := range n.PopulationCapacity.SpotTypes {
			switch st.StableType {
			case "room":
				u.Room = e(st.PopulationCapacity)
			case "hall":
				u.Hall = e(st.PopulationCapacity)
			case "shard":
				u.Shard = e(st.PopulationCapacity)
			}
		}
		return u
	}
	f.t.Fatalf("node %s is not listed", d.RID)
	return auUsage{}
}

// auState is the whole store state, counters included.
type auState struct {
	tables                 map[rules.Table]map[string]rules.Record
	leases                 map[string]ownerLease
	stamps                 map[rules.StampCounter]int64
	version, object, owner int64
	scanRevision           int64
}

func (f *auFix) state() auState {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	st := auState{
		tables: map[rules.Table]map[string]rules.Record{}, leases: maps.Clone(f.s.leases), stamps: maps.Clone(f.s.stamps),
		version: f.s.versionCounter, object: f.s.objectCounter, owner: f.s.ownerCounter, scanRevision: f.s.scanRevision,
	}
	for t, rows := range f.s.tables {
		if len(rows) > 0 {
			st.tables[t] = maps.Clone(rows)
		}
	}
	return st
}

// unchanged runs op and requires the store's state to be as before.
func (f *auFix) unchanged(op func()) {
	f.t.Helper()
	before := f.state()
	op()
	require.Equal(f.t, before, f.state(), "the call changed the store")
}

// invalid requires err to be an InputError of the class and code (0 and ""
// accept any), and op to change nothing.
func (f *auFix) invalid(class location.ErrorClass, code string, op func() error) {
	f.t.Helper()
	f.unchanged(func() {
		err := op()
		require.ErrorIs(f.t, err, location.ErrInvalidArgument)
		ie, ok := location.AsInputError(err)
		require.True(f.t, ok, "%v", err)
		if class != 0 {
			require.Equal(f.t, class, ie.Class, "%v", err)
		}
		if code != "" {
			require.Equal(f.t, code, ie.Code, "%v", err)
		}
	})
}

// auSnap wraps a snapshot as a read result.
func auSnap(s location.AuthoritySnapshot) location.AuthorityReadResult {
	return location.AuthorityReadResult{Kind: location.KindSnapshot, Snapshot: &s, StoreNow: s.StoreNow}
}

func (f *auFix) missing() location.AuthorityReadResult {
	return location.AuthorityReadResult{Kind: location.KindMissing, StoreNow: f.clk.Now()}
}

func auConflict(cur location.AuthorityReadResult) location.CompareExchangeResult {
	return location.CompareExchangeResult{Kind: location.KindConflict, Current: &cur}
}

// list is listAuthorities.
func (f *auFix) list(prefix, cursor string, limit int) location.AuthorityScanResult {
	f.t.Helper()
	r, err := f.s.ListAuthorities(f.ctx, prefix, cursor, limit)
	require.NoError(f.t, err)
	return r
}
