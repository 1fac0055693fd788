package rules_test

import (
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// The authority catalogue's scenarios run through a store in conformance.
// The tests of this package drive the same standard fixture F (package
// fixture) on the decision rules alone, to reach what only the rules have:
// their tables, plans and ledger. This file holds a rules.Source over plain
// maps with dense counters (as memstore's) and authF, F on that source.

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
	return &authSource{now: fixture.T0(), tables: map[rules.Table]map[string]rules.Record{}, leases: map[string]authLease{}}
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

// authState is a copy of the whole fake state, for "nothing changed".
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

// decideOn runs one decision as memstore does: counters and writes are kept
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

// authF is the standard fixture F on the fake source: A (owner-a, lease
// generation 1) and B (owner-b, 2), live for fixture.LeaseTTL, and the
// nodes NA and NB published directly.
type authF struct {
	t      *testing.T
	src    *authSource
	A, B   location.OwnerToken
	NA, NB location.MeshNodeDescriptor
}

// authOpt varies the fixture: F[NA spots=1] is withLimits("NA", …).
type authOpt func(na, nb *location.MeshNodeDescriptor)

// withLimits sets a node's limits ("NA" or "NB").
func withLimits(node string, l fixture.Limits) authOpt {
	return func(na, nb *location.MeshNodeDescriptor) {
		d := na
		if node == "NB" {
			d = nb
		}
		d.PopulationCapacity = fixture.Population(l)
	}
}

func newAuthF(t *testing.T, opts ...authOpt) *authF {
	f := &authF{t: t, src: newAuthSource()}
	f.A = f.claim("owner-a", 1)
	f.B = f.claim("owner-b", 2)
	na := fixture.Node("node-a", f.A, fixture.DefaultLimits(), "")
	nb := fixture.Node("node-b", f.B, fixture.DefaultLimits(), "")
	for _, o := range opts {
		o(&na, &nb)
	}
	f.publish(na)
	f.publish(nb)
	f.NA, f.NB = na, nb
	return f
}

// claim gives ownerID a live lease of the generation for fixture.LeaseTTL.
func (f *authF) claim(ownerID string, generation int64) location.OwnerToken {
	f.src.leases[ownerID] = authLease{generation: generation, expiresAt: f.src.now.Add(fixture.LeaseTTL)}
	return fixture.Token(ownerID, generation)
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

// decided runs a decision that must not fail.
func decided[R any](f *authF, run func(*rules.Tx) (R, error)) R {
	f.t.Helper()
	res, err := decideOn(f.src, run)
	require.NoError(f.t, err)
	return res
}

// RS reserves user spot id (stable type room) on the target.
func (f *authF) RS(id string, T location.CreationTarget) location.ReserveResult {
	f.t.Helper()
	req := fixture.SpotRequest(location.ObjectUserSpot, id, T, "room")
	res := decided(f, func(tx *rules.Tx) (location.ReserveResult, error) { return rules.Reserve(tx, req) })
	require.Equal(f.t, location.KindReserved, res.Kind, "RS(%s)", id)
	return res
}

// RA reserves actor id on the target.
func (f *authF) RA(id string, T location.CreationTarget) location.ReserveResult {
	f.t.Helper()
	req := fixture.ActorRequest(id, T)
	res := decided(f, func(tx *rules.Tx) (location.ReserveResult, error) { return rules.Reserve(tx, req) })
	require.Equal(f.t, location.KindReserved, res.Kind, "RA(%s)", id)
	return res
}

// AS reserves and commits user spot id on the target.
func (f *authF) AS(id string, T location.CreationTarget) *location.AuthoritySnapshot {
	f.t.Helper()
	req := fixture.CommitRequest(id, f.RS(id, T), T)
	res := decided(f, func(tx *rules.Tx) (location.CommitResult, error) { return rules.Commit(tx, req) })
	require.Equal(f.t, location.KindCommitted, res.Kind, "AS(%s)", id)
	return res.Ready
}

// AA reserves actor id on the target and completes it created with OP(n)
// due at T0 + 60 s.
func (f *authF) AA(id string, T location.CreationTarget, n uint64) location.CompleteCreationResult {
	f.t.Helper()
	req := fixture.CompleteRequest(id, f.RA(id, T), T, location.TerminalCreated, fixture.P(fixture.OP(n), fixture.T0().Add(time.Minute)))
	res := decided(f, func(tx *rules.Tx) (location.CompleteCreationResult, error) { return rules.CompleteCreation(tx, req) })
	require.Equal(f.t, location.KindCreated, res.Kind, "AA(%s)", id)
	return res
}

// REL reserves relocation capacity VS(room) for the row at snapshot S from
// NA to NB.
func (f *authF) REL(rid string, key location.AuthorityKey, S *location.AuthoritySnapshot) {
	f.t.Helper()
	req := fixture.RelRequest(rid, key, S, f.NA, f.NB, fixture.VS("room"))
	res := decided(f, func(tx *rules.Tx) (location.RelocationReserveResult, error) {
		return rules.ReserveRelocationCapacity(tx, req)
	})
	require.Equal(f.t, location.KindReserved, res.Kind, "REL(%s)", rid)
}

// prepared prepares the aggregate and requires prepared.
func (f *authF) prepared(req location.AggregatePrepareRequest) {
	f.t.Helper()
	res := decided(f, func(tx *rules.Tx) (location.AggregatePrepareResult, error) { return rules.PrepareAggregate(tx, req) })
	require.Equal(f.t, location.KindPrepared, res.Kind, "AGG(%s)", req.AggregateID)
}

// read reads an authority key.
func (f *authF) read(k location.AuthorityKey) location.AuthorityReadResult {
	f.t.Helper()
	return decided(f, func(tx *rules.Tx) (location.AuthorityReadResult, error) { return rules.ReadAuthority(tx, k), nil })
}

// unchanged asserts that fn leaves the whole fake state as it was.
func (f *authF) unchanged(fn func()) {
	f.t.Helper()
	before := f.src.state()
	fn()
	require.Equal(f.t, before, f.src.state(), "state changed")
}

// authUsage is U(node): the ledger usage of a node's current incarnation.
type authUsage struct {
	Actors, Spots, Room, Hall, Shard rules.LedgerEntry
}

// U reads a node's ledger usage.
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

// bucketKey is the ledger key of a node incarnation's bucket.
func bucketKey(d location.MeshNodeDescriptor, name, stableType string) string {
	return rules.Bucket{Descriptor: d.Key(), Lifecycle: d.LifecycleGeneration, Name: name, StableType: stableType}.Key()
}

// storedValue reads a stored value of the fake source.
func storedValue[T any](f *authF, t rules.Table, key string) T {
	f.t.Helper()
	rec, ok := f.src.Get(t, key)
	require.True(f.t, ok, "%s %q", t, key)
	v, ok := rec.Value.(T)
	require.True(f.t, ok, "%s %q holds %T", t, key, rec.Value)
	return v
}
