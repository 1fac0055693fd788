package memstore

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// The catalogue's scenarios run against memstore in TestConformance; the
// tests of this package check what only memstore has (its hooks, paging
// and scan-cursor encodings, internal tables, concurrency under -race).
// They build their rows and requests from package fixture.

// memFix is a fresh Store on a manual clock at fixture.T0.
type memFix struct {
	t   *testing.T
	ctx context.Context
	s   *Store
	clk *clock.Manual
	tok map[string]location.OwnerToken
}

// newMemFix returns an empty store.
func newMemFix(t *testing.T) *memFix {
	clk := clock.NewManual(fixture.T0())
	return &memFix{t: t, ctx: t.Context(), s: New(Options{Clock: clk.Now}), clk: clk, tok: map[string]location.OwnerToken{}}
}

// claim claims a 30 s owner lease that must be granted.
func (f *memFix) claim(owner string) location.OwnerToken {
	f.t.Helper()
	f.tok[owner] = storetest.Claim(f.t, f.ctx, f.s, owner, 30*time.Second)
	return f.tok[owner]
}

// expire ends owner's lease now (ExpireOwnerLease).
func (f *memFix) expire(owner string) {
	f.t.Helper()
	require.NoError(f.t, f.s.ExpireOwnerLease(f.ctx, owner))
}

// wrote requires a write without error and returns its result:
// f.wrote(f.s.UpdateSpot(…)).
func (f *memFix) wrote(res location.WriteResult, err error) location.WriteResult {
	f.t.Helper()
	require.NoError(f.t, err)
	return res
}

// stored requires a stored write.
func (f *memFix) stored(res location.WriteResult, err error) location.WriteResult {
	f.t.Helper()
	require.NoError(f.t, err)
	require.Equal(f.t, location.Stored, res.Status, "write result %+v", res)
	return res
}

// spotAt returns SPOT(owner) as spot id in mesh.
func spotAt(owner string, lg int64, mesh, id string) location.SpotLocation {
	s := fixture.SPOT(owner, lg)
	s.MeshName, s.SpotID = mesh, id
	return s
}

// state copies the store's state without its empty tables, for "no effect"
// checks.
func (f *memFix) state() state {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	st := f.s.state.clone()
	maps.DeleteFunc(st.tables, func(_ rules.Table, rows map[string]rules.Record) bool { return len(rows) == 0 })
	return st
}

// noEffect runs op and requires the store's state to be as before.
func (f *memFix) noEffect(op func()) {
	f.t.Helper()
	before := f.state()
	op()
	require.Equal(f.t, before, f.state(), "the call changed the store")
}

// requireInputError requires an invalid-argument error of the class.
func requireInputError(t *testing.T, err error, class location.ErrorClass) {
	t.Helper()
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	ie, ok := location.AsInputError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, class, ie.Class, "%v", err)
}

// authorityF claims the owner leases A and B and publishes the nodes NA
// and NB of the authority catalogue's fixture F; it returns NA and NB.
func (f *memFix) authorityF() (na, nb location.MeshNodeDescriptor) {
	f.t.Helper()
	a, b := f.claim("owner-a"), f.claim("owner-b")
	na = fixture.Node("node-a", a, fixture.DefaultLimits(), "")
	nb = fixture.Node("node-b", b, fixture.DefaultLimits(), "")
	f.stored(f.s.UpdateMeshNode(f.ctx, na, location.IntentNewClaim))
	f.stored(f.s.UpdateMeshNode(f.ctx, nb, location.IntentNewClaim))
	return na, nb
}

// reserved requires a reserve without error that answers reserved.
func (f *memFix) reserved(res location.ReserveResult, err error) location.ReserveResult {
	f.t.Helper()
	require.NoError(f.t, err)
	require.Equal(f.t, location.KindReserved, res.Kind)
	return res
}

// AS reserves and commits user spot id on the node (the catalogue's AS).
func (f *memFix) AS(id string, node location.MeshNodeDescriptor) *location.AuthoritySnapshot {
	f.t.Helper()
	T := fixture.Target(node)
	R := f.reserved(f.s.Reserve(f.ctx, fixture.SpotRequest(location.ObjectUserSpot, id, T, "room")))
	res, err := f.s.Commit(f.ctx, fixture.CommitRequest(id, R, T))
	require.NoError(f.t, err)
	require.Equal(f.t, location.KindCommitted, res.Kind)
	return res.Ready
}
