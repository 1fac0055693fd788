package rules_test

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// This file holds a Source with dense counters (like memstore's) and the
// standard authority fixture F of the authority catalogue (§0.3), so that the
// authority rules can be tested on their own.

// authT0() is the fixture's start time, 2026-07-03T00:00:00Z.
func authT0() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }

// authLease is an owner lease of the fake source.
type authLease struct {
	generation int64
	expiresAt  time.Time
}

// authSource is a rules.Source over plain maps with dense counters.
type authSource struct {
	now                    time.Time
	tables                 map[rules.Table]map[string]rules.Record
	leases                 map[string]authLease
	version, object, owner int64
	reservations           int
	scanRevision           int64
}

func newAuthSource() *authSource {
	return &authSource{now: authT0(), tables: map[rules.Table]map[string]rules.Record{}, leases: map[string]authLease{}}
}

func (s *authSource) Now() time.Time { return s.now }

func (s *authSource) Get(t rules.Table, key string) (rules.Record, bool) {
	r, ok := s.tables[t][key]
	return r, ok
}

func (s *authSource) LiveLease(ownerID string) (int64, bool) {
	l, ok := s.leases[ownerID]
	return l.generation, ok && l.expiresAt.After(s.now)
}

func (s *authSource) NextGeneration(rules.Table, string) int64 { return 1 }

func (s *authSource) CanIssue(v, o, w int64) bool {
	return v <= location.MaxGeneration-s.version && o <= location.MaxGeneration-s.object && w <= location.MaxGeneration-s.owner
}

func (s *authSource) IssueVersion() location.StoreVersion {
	s.version++
	return location.StoreVersion(strconv.FormatInt(s.version, 10))
}

func (s *authSource) IssueObjectGeneration(location.AuthorityKey) int64 { s.object++; return s.object }

func (s *authSource) IssueOwnerGeneration(location.AuthorityKey) int64 { s.owner++; return s.owner }

func (s *authSource) NewReservationID() string {
	s.reservations++
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", s.reservations)
}

// put stores a value directly.
func (s *authSource) put(t rules.Table, key string, v any) {
	if s.tables[t] == nil {
		s.tables[t] = map[string]rules.Record{}
	}
	s.tables[t][key] = rules.Record{Value: v}
}

// snapshot is a copy of the whole fake state, for "nothing changed" checks.
type authState struct {
	tables                 map[rules.Table]map[string]rules.Record
	version, object, owner int64
	scanRevision           int64
}

func (s *authSource) state() authState {
	st := authState{tables: map[rules.Table]map[string]rules.Record{}, version: s.version, object: s.object, owner: s.owner, scanRevision: s.scanRevision}
	for t, m := range s.tables {
		if len(m) > 0 {
			st.tables[t] = maps.Clone(m)
		}
	}
	return st
}

// decide runs one decision like memstore does: counters and writes are kept
// only when it succeeds.
func decideOn[R any](s *authSource, run func(*rules.Tx) (R, error)) (R, error) {
	v, o, w := s.version, s.object, s.owner
	tx := rules.NewTx(s)
	res, err := run(tx)
	if err != nil {
		s.version, s.object, s.owner = v, o, w
		return res, err
	}
	p := tx.Plan()
	for _, wr := range p.Writes {
		if wr.Value == nil {
			delete(s.tables[wr.Table], wr.Key)
			continue
		}
		s.put(wr.Table, wr.Key, wr.Value)
	}
	if p.ScanRevisionBumped {
		s.scanRevision++
	}
	return res, nil
}

// authLimits are a fixture node's published limits.
type authLimits struct{ actors, spots, room, hall, shard int64 }

// authF is the standard fixture F.
type authF struct {
	t      *testing.T
	src    *authSource
	A, B   location.OwnerToken
	NA, NB location.MeshNodeDescriptor
}

// authOpt varies the fixture.
type authOpt func(na, nb *location.MeshNodeDescriptor)

// withLimits sets a node's limits ("NA" or "NB").
func withLimits(node string, l authLimits) authOpt {
	return func(na, nb *location.MeshNodeDescriptor) {
		d := na
		if node == "NB" {
			d = nb
		}
		d.PopulationCapacity = authPopulation(l)
	}
}

func authPopulation(l authLimits) location.Population {
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

func newAuthF(t *testing.T, opts ...authOpt) *authF {
	f := &authF{t: t, src: newAuthSource()}
	f.A = f.claim("owner-a", 1)
	f.B = f.claim("owner-b", 2)
	ten := authLimits{10, 10, 10, 10, 10}
	na := authNode("node-a", f.A, ten)
	nb := authNode("node-b", f.B, ten)
	for _, o := range opts {
		o(&na, &nb)
	}
	f.publish(na)
	f.publish(nb)
	f.NA, f.NB = na, nb
	return f
}

func authNode(rid string, owner location.OwnerToken, l authLimits) location.MeshNodeDescriptor {
	return location.MeshNodeDescriptor{
		MeshName: "m", RID: location.RoutingID(rid), LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:7300", ObjectRole: location.RoleServer, State: location.StateServing,
		PopulationCapacity: authPopulation(l), OwnerID: owner.OwnerID, LeaseGeneration: owner.LeaseGeneration,
	}
}

// claim gives ownerID a live lease of the given generation for 60 s.
func (f *authF) claim(ownerID string, generation int64) location.OwnerToken {
	f.src.leases[ownerID] = authLease{generation: generation, expiresAt: f.src.now.Add(time.Minute)}
	return location.OwnerToken{OwnerID: ownerID, LeaseGeneration: generation}
}

// release drops ownerID's lease.
func (f *authF) release(ownerID string) { delete(f.src.leases, ownerID) }

// publish stores (or replaces) a mesh-node descriptor.
func (f *authF) publish(d location.MeshNodeDescriptor) {
	f.src.put(location.TableMeshNodes, rules.MeshNodeKey(d.Key()), d)
}

// unpublish removes a mesh-node descriptor.
func (f *authF) unpublish(d location.MeshNodeDescriptor) {
	delete(f.src.tables[location.TableMeshNodes], rules.MeshNodeKey(d.Key()))
}

// target is a node's creation target.
func target(d location.MeshNodeDescriptor) location.CreationTarget {
	return location.CreationTarget{MeshName: d.MeshName, NodeRID: d.RID, NodeLifecycleGeneration: d.LifecycleGeneration, Owner: d.Owner()}
}

// Capacity vectors of the catalogue.
func vA() location.CapacityVector { return location.CapacityVector{Actors: 1} }
func vS(t string) location.CapacityVector {
	return location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: t, Count: 1}}
}
func vI(t string) location.CapacityVector {
	return location.CapacityVector{Spots: 1, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectInstanceSpot, StableType: t, Count: 1}}
}
func vSn(t string, n int64) location.CapacityVector {
	return location.CapacityVector{Spots: n, SpotType: &location.SpotTypeDelta{ObjectKind: location.ObjectUserSpot, StableType: t, Count: n}}
}

// keyS and keyA are the authority keys of a spot and an actor id.
func keyS(id string) location.AuthorityKey {
	k, err := location.EncodeAuthorityKey(location.ObjectUserSpot, id)
	if err != nil {
		panic(err)
	}
	return k
}

func keyA(id string) location.AuthorityKey {
	k, err := location.EncodeAuthorityKey(location.ObjectActor, id)
	if err != nil {
		panic(err)
	}
	return k
}

// digest1 is the creation request digest of the helpers (32 × 0x01).
func digest1() []byte { return bytesOf(32, 0x01) }

func bytesOf(n int, b byte) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// reserveReq is RS/RI/RA's request.
func reserveReq(kind location.ObjectKind, id, stableType string, t location.CreationTarget, v location.CapacityVector) location.ReserveRequest {
	return location.ReserveRequest{
		Key:             location.ObjectCreationKey{Kind: kind, GlobalID: id},
		Intent:          location.CreationIntent{StableType: stableType, RequestContentReference: "req:" + id, RequestSHA256: digest1(), RequestEncodedSize: 10},
		Target:          t,
		CreatingPayload: []byte("creating"),
		Capacity:        v,
	}
}

func (f *authF) reserve(r location.ReserveRequest) location.ReserveResult {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.ReserveResult, error) { return rules.Reserve(tx, r) })
	require.NoError(f.t, err)
	return res
}

// RS reserves a user spot (stable type room unless given).
func (f *authF) RS(id string, t location.CreationTarget, stableType ...string) location.ReserveResult {
	f.t.Helper()
	st := "room"
	if len(stableType) > 0 {
		st = stableType[0]
	}
	res := f.reserve(reserveReq(location.ObjectUserSpot, id, st, t, vS(st)))
	require.Equal(f.t, location.KindReserved, res.Kind, "RS(%s)", id)
	return res
}

// RA reserves an actor.
func (f *authF) RA(id string, t location.CreationTarget) location.ReserveResult {
	f.t.Helper()
	res := f.reserve(reserveReq(location.ObjectActor, id, "player", t, vA()))
	require.Equal(f.t, location.KindReserved, res.Kind, "RA(%s)", id)
	return res
}

func commitReq(id string, r location.ReserveResult, t location.CreationTarget) location.CommitRequest {
	return location.CommitRequest{
		Key:                  location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: id},
		ReservationID:        r.ReservationID,
		ExpectedStoreVersion: r.Creating.StoreVersion,
		Target:               t,
		ReadyPayload:         []byte("ready"),
	}
}

func (f *authF) commit(r location.CommitRequest) location.CommitResult {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.CommitResult, error) { return rules.Commit(tx, r) })
	require.NoError(f.t, err)
	return res
}

// AS reserves and commits a user spot.
func (f *authF) AS(id string, t location.CreationTarget, stableType ...string) location.AuthoritySnapshot {
	f.t.Helper()
	r := f.RS(id, t, stableType...)
	res := f.commit(commitReq(id, r, t))
	require.Equal(f.t, location.KindCommitted, res.Kind, "AS(%s)", id)
	return *res.Ready
}

// op is OP(n).
func op(n uint64) location.OperationIdentity {
	return location.OperationIdentity{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: n}}
}

// pub is P(op, deadline).
func pub(o location.OperationIdentity, deadline time.Time) location.TerminalPublication {
	sum := sha256.Sum256([]byte("env"))
	return location.TerminalPublication{Operation: o, TerminalEnvelope: []byte("env"), TerminalEnvelopeSHA256: sum[:], OperationDeadline: deadline}
}

func completeReq(id string, r location.ReserveResult, t location.CreationTarget, kind location.TerminalState, p location.TerminalPublication) location.CompleteCreationRequest {
	c := location.CreationCompletion{Kind: kind, Terminal: p}
	if kind == location.TerminalCreated {
		c.ReadyPayload = []byte("ready-actor")
	}
	return location.CompleteCreationRequest{
		Key:                  location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: id},
		ReservationID:        r.ReservationID,
		ExpectedStoreVersion: r.Creating.StoreVersion,
		Target:               t,
		Completion:           c,
	}
}

func (f *authF) complete(r location.CompleteCreationRequest) location.CompleteCreationResult {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.CompleteCreationResult, error) { return rules.CompleteCreation(tx, r) })
	require.NoError(f.t, err)
	return res
}

// AA reserves an actor and completes it created with OP(n).
func (f *authF) AA(id string, t location.CreationTarget, n uint64) location.AuthoritySnapshot {
	f.t.Helper()
	r := f.RA(id, t)
	res := f.complete(completeReq(id, r, t, location.TerminalCreated, pub(op(n), authT0().Add(time.Minute))))
	require.Equal(f.t, location.KindCreated, res.Kind, "AA(%s)", id)
	return *res.Ready
}

func abortReq(kind location.ObjectKind, id string, r location.ReserveResult, t location.CreationTarget) location.AbortRequest {
	return location.AbortRequest{
		Key:                  location.ObjectCreationKey{Kind: kind, GlobalID: id},
		ReservationID:        r.ReservationID,
		ExpectedStoreVersion: r.Creating.StoreVersion,
		Target:               t,
	}
}

func (f *authF) abort(r location.AbortRequest) location.ResultKind {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortCreation(tx, r) })
	require.NoError(f.t, err)
	return res
}

func (f *authF) read(k location.AuthorityKey) location.AuthorityReadResult {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.AuthorityReadResult, error) { return rules.ReadAuthority(tx, k), nil })
	require.NoError(f.t, err)
	return res
}

func (f *authF) readTerminal(o location.OperationIdentity) location.TerminalReadResult {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.TerminalReadResult, error) { return rules.ReadCreationTerminal(tx, o), nil })
	require.NoError(f.t, err)
	return res
}

func (f *authF) cas(k location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation) location.CompareExchangeResult {
	f.t.Helper()
	res, err := f.casErr(k, v, m)
	require.NoError(f.t, err)
	return res
}

func (f *authF) casErr(k location.AuthorityKey, v location.StoreVersion, m location.AuthorityMutation) (location.CompareExchangeResult, error) {
	return decideOn(f.src, func(tx *rules.Tx) (location.CompareExchangeResult, error) {
		return rules.CompareExchangeAuthority(tx, k, v, m)
	})
}

// Mutations.
func preserve(payload string) location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: []byte(payload)}
}

func restore(expected location.OwnerToken, payload string) location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationRestore, ExpectedOwner: &expected, Payload: []byte(payload)}
}

func rebind(expected, target location.OwnerToken, payload string) location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationRebindOwnerLease, ExpectedOwner: &expected, TargetOwner: &target, Payload: []byte(payload)}
}

func deletion() location.AuthorityMutation {
	return location.AuthorityMutation{Kind: location.MutationDelete}
}

func newOwner(target location.OwnerToken, fence string, payload string) location.AuthorityMutation {
	fe := location.RelocationFence(fence)
	return location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionNewOwner, TargetOwner: &target, RelocationFence: &fe, Payload: []byte(payload)}
}

// relReq is REL(id, S, from, to, cap) for a user_spot/room row.
func relReq(id string, k location.AuthorityKey, s location.AuthoritySnapshot, from, to location.MeshNodeDescriptor, v location.CapacityVector) location.RelocationReservationRequest {
	return location.RelocationReservationRequest{
		ReservationID: id, AuthorityKey: k, ExpectedStoreVersion: s.StoreVersion,
		ObjectKind: location.ObjectUserSpot, StableType: "room",
		SourceDescriptor: from.Key(), SourceNodeLifecycleGeneration: from.LifecycleGeneration, SourceOwner: from.Owner(),
		TargetDescriptor: to.Key(), TargetNodeLifecycleGeneration: to.LifecycleGeneration, TargetOwner: to.Owner(),
		Capacity: v,
	}
}

func (f *authF) rel(r location.RelocationReservationRequest) location.RelocationReserveResult {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.RelocationReserveResult, error) {
		return rules.ReserveRelocationCapacity(tx, r)
	})
	require.NoError(f.t, err)
	return res
}

func (f *authF) abortRel(fence string) location.ResultKind {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) {
		return rules.AbortRelocationCapacity(tx, location.RelocationFence(fence))
	})
	require.NoError(f.t, err)
	return res
}

// part is an aggregate participant; aggReq numbers payloads agg-i/mem-i.
type part struct {
	key        location.AuthorityKey
	version    location.StoreVersion
	transition location.Transition
}

func aggReq(id string, gen int64, target location.MeshNodeDescriptor, v location.CapacityVector, parts ...part) location.AggregatePrepareRequest {
	r := location.AggregatePrepareRequest{
		AggregateID: id, AggregateGeneration: gen, InventoryDigest: bytesOf(32, 0x07),
		TargetDescriptor: target.Key(), TargetDescriptorLifecycleGeneration: target.LifecycleGeneration,
		TargetOwner: target.Owner(), Capacity: v,
	}
	for i, p := range parts {
		r.Participants = append(r.Participants, location.AggregateParticipant{
			AuthorityKey: p.key, ExpectedStoreVersion: p.version, OwnerTransition: p.transition,
			AuthorityPayload: fmt.Appendf(nil, "agg-%d", i), MembershipMutation: fmt.Appendf(nil, "mem-%d", i),
		})
	}
	return r
}

func (f *authF) prepare(r location.AggregatePrepareRequest) location.AggregatePrepareResult {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.AggregatePrepareResult, error) { return rules.PrepareAggregate(tx, r) })
	require.NoError(f.t, err)
	return res
}

func (f *authF) commitAgg(id string, gen int64) location.ResultKind {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) {
		return rules.CommitAggregate(tx, location.AggregateFence{AggregateID: id, AggregateGeneration: gen})
	})
	require.NoError(f.t, err)
	return res
}

func (f *authF) abortAgg(id string, gen int64) location.ResultKind {
	f.t.Helper()
	res, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) {
		return rules.AbortAggregate(tx, location.AggregateFence{AggregateID: id, AggregateGeneration: gen})
	})
	require.NoError(f.t, err)
	return res
}

// authUsage is U(node): the ledger usage of a node's current incarnation.
type authUsage struct {
	Actors, Spots, Room, Hall, Shard rules.LedgerEntry
}

func (f *authF) U(d location.MeshNodeDescriptor) authUsage {
	tx := rules.NewTx(f.src)
	k, lc := d.Key(), d.LifecycleGeneration
	return authUsage{
		Actors: rules.CapacityUsage(tx, k, lc, "actor", ""),
		Spots:  rules.CapacityUsage(tx, k, lc, "spot", ""),
		Room:   rules.CapacityUsage(tx, k, lc, "user_spot", "room"),
		Hall:   rules.CapacityUsage(tx, k, lc, "user_spot", "hall"),
		Shard:  rules.CapacityUsage(tx, k, lc, "instance_spot", "shard"),
	}
}

// ae builds a ledger entry (active, reserved).
func ae(active, reserved int64) rules.LedgerEntry {
	return rules.LedgerEntry{Active: active, Reserved: reserved}
}

// spotUsage is U with only spots and room set.
func spotUsage(active, reserved int64) authUsage {
	return authUsage{Spots: ae(active, reserved), Room: ae(active, reserved)}
}

// unchanged asserts that fn leaves the whole fake state as it was.
func (f *authF) unchanged(fn func()) {
	f.t.Helper()
	before := f.src.state()
	fn()
	require.Equal(f.t, before, f.src.state(), "state changed")
}

// snapshotOf asserts a read result is a snapshot and returns it.
func (f *authF) snapshotOf(r location.AuthorityReadResult) location.AuthoritySnapshot {
	f.t.Helper()
	require.Equal(f.t, location.KindSnapshot, r.Kind)
	require.NotNil(f.t, r.Snapshot)
	return *r.Snapshot
}

// current reads a key's snapshot.
func (f *authF) current(k location.AuthorityKey) location.AuthoritySnapshot {
	f.t.Helper()
	return f.snapshotOf(f.read(k))
}

// missing is missing{now}.
func (f *authF) missing() location.AuthorityReadResult {
	return location.AuthorityReadResult{Kind: location.KindMissing, StoreNow: f.src.now}
}

// snap wraps a snapshot as a read result.
func snap(s location.AuthoritySnapshot) location.AuthorityReadResult {
	return location.AuthorityReadResult{Kind: location.KindSnapshot, Snapshot: &s, StoreNow: s.StoreNow}
}

// conflictOf is conflict{current}.
func conflictOf(cur location.AuthorityReadResult) location.CompareExchangeResult {
	return location.CompareExchangeResult{Kind: location.KindConflict, Current: &cur}
}

// bucketKey is the ledger key of a node incarnation's bucket.
func bucketKey(d location.MeshNodeDescriptor, name, stableType string) string {
	return rules.Bucket{Descriptor: d.Key(), Lifecycle: d.LifecycleGeneration, Name: name, StableType: stableType}.Key()
}

// removeRow runs RemoveAuthorityRow on one key.
func (f *authF) removeRow(k location.AuthorityKey) {
	f.t.Helper()
	_, err := decideOn(f.src, func(tx *rules.Tx) (struct{}, error) { return struct{}{}, rules.RemoveAuthorityRow(tx, k) })
	require.NoError(f.t, err)
}
