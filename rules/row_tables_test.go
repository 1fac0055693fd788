package rules

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// lsRowTable adapts the spot, actor, peer or route table to the outcome
// matrix tests; S is what its remove returns (a status for the lease rows,
// a result for the owner rows).
type lsRowTable[S any] struct {
	name   string
	table  Table
	key    string
	row    func(owner string, generation int64) any
	write  func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error)
	remove func(tx *Tx, owner location.OwnerToken) (S, error)
	stamps []StampCounter
}

// lsRowTableOf returns the adapter of table, its rows of type R made by row,
// written by write, and removed under k (table key tableKey(k)) by remove;
// a change moves stamps.
func lsRowTableOf[R, K, S any](name string, table Table, k K, tableKey func(K) string, row func(string, int64) R,
	write func(*Tx, R, location.WriteIntent) (location.WriteResult, error),
	remove func(*Tx, K, location.OwnerToken) (S, error), stamps ...StampCounter,
) lsRowTable[S] {
	return lsRowTable[S]{
		name: name, table: table, key: tableKey(k), stamps: stamps,
		row: func(owner string, g int64) any { return row(owner, g) },
		write: func(tx *Tx, r any, intent location.WriteIntent) (location.WriteResult, error) {
			return write(tx, r.(R), intent)
		},
		remove: func(tx *Tx, owner location.OwnerToken) (S, error) { return remove(tx, k, owner) },
	}
}

// lsOutcome is the expected outcome of a write in the outcome matrices.
type lsOutcome string

const (
	outcomeClaim    lsOutcome = "claim"    // Stored(6, now), generation 6 written
	outcomeRenew    lsOutcome = "renew"    // Stored(5, now), generation 5 kept
	outcomeStale    lsOutcome = "stale"    // IgnoredStale, nothing planned
	outcomeConflict lsOutcome = "conflict" // RejectedConflict, nothing planned
)

// matrixSource is the source of one outcome-matrix cell, a minute after
// T0, where b holds lease 2: the table's key holds stored under row
// generation 5, its owner holding lease (ownerGen, ownerLive); or, with
// stored nil, no row and the key's generation counter at 5.
func (rt lsRowTable[S]) matrixSource(stored any, owner string, ownerGen int64, ownerLive bool) *lsSource {
	src := newLSSource()
	src.now = fixture.T0().Add(time.Minute)
	src.lease("b", 2, true)
	if stored != nil {
		src.put(rt.table, rt.key, stored, 5)
		src.lease(owner, ownerGen, ownerLive)
	} else {
		src.gens[rt.table] = map[string]int64{rt.key: 5}
	}
	return src
}

// requireMatrixWrite writes written under intent on src and checks the
// result and the plan: nothing when stale or in conflict; otherwise
// stored(g), the row as stored(written, g) under its generation g, written
// under the table's key, the table's stamps and no mesh-node stamp.
func (rt lsRowTable[S]) requireMatrixWrite(t *testing.T, src *lsSource, written any, intent location.WriteIntent, want lsOutcome, stored func(written any, g int64) any) {
	t.Helper()
	tx := NewTx(src)
	res, err := rt.write(tx, written, intent)
	require.NoError(t, err)
	now := src.now
	var g int64
	switch want {
	case outcomeStale:
		require.Equal(t, lsStale(), res)
		require.True(t, tx.Plan().Empty())
		return
	case outcomeConflict:
		require.Equal(t, lsConflict(), res)
		require.True(t, tx.Plan().Empty())
		return
	case outcomeClaim:
		g = 6
	case outcomeRenew:
		g = 5 // A-01 fixed for owner rows: the stored generation is kept
	}
	require.Equal(t, lsStored(g, now), res)
	require.Equal(t, []Write{{Table: rt.table, Key: rt.key, Value: stored(written, g), Generation: g, Owned: true}}, tx.Plan().Writes)
	require.Equal(t, rt.stamps, tx.Plan().Stamps)
	require.Empty(t, tx.Plan().MeshNodeStamps)
}

// lsRemoveCase is one cell of a remove test: the owner token a remove
// passes, whether the key holds a row, and the answer.
type lsRemoveCase[S any] struct {
	name  string
	row   bool
	owner location.OwnerToken
	want  S
}

// requireMatrixRemove removes the table's key by owner, the key holding
// stored under row generation 5 (nothing when stored is nil), and checks the
// answer, want, and the plan: the row deleted and the table's stamps moved
// when removed, nothing otherwise.
func (rt lsRowTable[S]) requireMatrixRemove(t *testing.T, stored any, owner location.OwnerToken, want S, removed bool) {
	t.Helper()
	src := newLSSource()
	if stored != nil {
		src.put(rt.table, rt.key, stored, 5)
	}
	tx := NewTx(src)
	got, err := rt.remove(tx, owner)
	require.NoError(t, err)
	require.Equal(t, want, got)
	if !removed {
		require.True(t, tx.Plan().Empty())
		return
	}
	require.Equal(t, []Write{{Table: rt.table, Key: rt.key}}, tx.Plan().Writes)
	require.Equal(t, rt.stamps, tx.Plan().Stamps)
}

// lsAt returns a deep copy (the type's Clone) of a location row value with
// UpdatedAt = at.
func lsAt(v any, at time.Time) any { return lsWith(v, "UpdatedAt", at) }

// lsStoredRow returns a deep copy of a peer or route value with Generation =
// generation and UpdatedAt = at.
func lsStoredRow(v any, generation int64, at time.Time) any {
	return lsWith(lsAt(v, at), "Generation", generation)
}

// lsRowGeneration returns the Generation field of a peer or route value.
func lsRowGeneration(v any) int64 { return reflect.ValueOf(v).FieldByName("Generation").Int() }

// lsWith returns a deep copy (the type's Clone) of a row value with one
// field set. It panics on a value without that field: a broken test.
func lsWith(v any, field string, value any) any {
	c := reflect.New(reflect.TypeOf(v)).Elem()
	c.Set(reflect.ValueOf(v).MethodByName("Clone").Call(nil)[0])
	c.FieldByName(field).Set(reflect.ValueOf(value))
	return c.Interface()
}

// lsLeaseRowTables are the spot and the actor table.
func lsLeaseRowTables() []lsRowTable[location.WriteStatus] {
	return []lsRowTable[location.WriteStatus]{
		lsRowTableOf("spots", location.TableSpots, fixture.SpotKey(), SpotKey, fixture.SPOT, UpdateSpot, RemoveSpot,
			lsStamp(location.LocationSpot, "play"), lsStamp(location.LocationSpot, "")),
		lsRowTableOf("actors", location.TableActors, fixture.ActorKey(), ActorKey, fixture.ACTOR, UpdateActor, RemoveActor,
			lsStamp(location.LocationActor, "play"), lsStamp(location.LocationActor, "")),
	}
}

// TestLeaseRowOutcomeMatrix checks 02 §4.5 for spots and actors: the stored
// row was written by (a, lease 1) under row generation 5; the writer's own
// lease is never consulted.
func TestLeaseRowOutcomeMatrix(t *testing.T) {
	cases := []struct {
		name      string
		row       bool
		ownerLive bool
		ownerGen  int64 // a's lease generation (1 = the row's)
		writer    string
		writerLG  int64
		intent    location.WriteIntent
		want      lsOutcome
	}{
		{name: "absent/NewClaim", writer: "a", writerLG: 1, intent: location.IntentNewClaim, want: outcomeClaim},
		{name: "absent/Renew", writer: "a", writerLG: 1, intent: location.IntentRenew, want: outcomeStale},
		{name: "absent/Takeover", writer: "a", writerLG: 1, intent: location.IntentTakeover, want: outcomeClaim},
		{name: "absent/NewClaim by a writer without a lease", writer: "ghost", writerLG: 1, intent: location.IntentNewClaim, want: outcomeClaim},
		{name: "live other owner/NewClaim", row: true, ownerLive: true, ownerGen: 1, writer: "b", writerLG: 2, intent: location.IntentNewClaim, want: outcomeConflict},
		{name: "own live row/NewClaim", row: true, ownerLive: true, ownerGen: 1, writer: "a", writerLG: 1, intent: location.IntentNewClaim, want: outcomeConflict},
		{name: "restarted owner/NewClaim", row: true, ownerLive: true, ownerGen: 3, writer: "a", writerLG: 3, intent: location.IntentNewClaim, want: outcomeConflict},
		{name: "restarted owner/Takeover", row: true, ownerLive: true, ownerGen: 3, writer: "a", writerLG: 3, intent: location.IntentTakeover, want: outcomeClaim},
		{name: "live owner/Renew", row: true, ownerLive: true, ownerGen: 1, writer: "a", writerLG: 1, intent: location.IntentRenew, want: outcomeRenew},
		{name: "live owner/Renew with another lease generation", row: true, ownerLive: true, ownerGen: 1, writer: "a", writerLG: 2, intent: location.IntentRenew, want: outcomeStale},
		{name: "live owner/Renew by another owner", row: true, ownerLive: true, ownerGen: 1, writer: "b", writerLG: 1, intent: location.IntentRenew, want: outcomeStale},
		{name: "live owner/Takeover by another owner", row: true, ownerLive: true, ownerGen: 1, writer: "b", writerLG: 2, intent: location.IntentTakeover, want: outcomeClaim},
		{name: "dead owner/NewClaim by a writer without a lease", row: true, ownerGen: 1, writer: "ghost", writerLG: 5, intent: location.IntentNewClaim, want: outcomeClaim},
		{name: "dead owner/Renew by the owner", row: true, ownerGen: 1, writer: "a", writerLG: 1, intent: location.IntentRenew, want: outcomeRenew},
		{name: "dead owner/Takeover", row: true, ownerGen: 1, writer: "b", writerLG: 2, intent: location.IntentTakeover, want: outcomeClaim},
		{name: "unknown intent/absent row is created", writer: "a", writerLG: 1, intent: 4, want: outcomeClaim},
		{name: "unknown intent/existing row is rejected", row: true, ownerGen: 1, writer: "a", writerLG: 1, intent: 0, want: outcomeConflict},
	}
	for _, lt := range lsLeaseRowTables() {
		for _, c := range cases {
			t.Run(lt.name+"/"+c.name, func(t *testing.T) {
				var stored any
				if c.row {
					stored = lsAt(lt.row("a", 1), fixture.T0())
				}
				src := lt.matrixSource(stored, "a", c.ownerGen, c.ownerLive)
				lt.requireMatrixWrite(t, src, lt.row(c.writer, c.writerLG), c.intent, c.want,
					func(written any, _ int64) any { return lsAt(written, src.now) })
			})
		}
	}
}

// TestLeaseRowRemove checks 02 §4.2: owner id and the row's lease
// generation must match; no liveness.
func TestLeaseRowRemove(t *testing.T) {
	for _, lt := range lsLeaseRowTables() {
		for _, c := range []lsRemoveCase[location.WriteStatus]{
			{name: "absent row", owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 1}, want: location.IgnoredStale},
			{name: "other owner", row: true, owner: location.OwnerToken{OwnerID: "b", LeaseGeneration: 1}, want: location.IgnoredStale},
			{name: "the row generation instead of the lease generation", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 5}, want: location.IgnoredStale},
			{name: "the row's lease generation, owner dead", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 1}, want: location.Stored},
		} {
			t.Run(lt.name+"/"+c.name, func(t *testing.T) {
				var stored any
				if c.row {
					stored = lsAt(lt.row("a", 1), fixture.T0())
				}
				lt.requireMatrixRemove(t, stored, c.owner, c.want, c.want == location.Stored)
			})
		}
	}
}

// TestEmptyMeshBumpsGlobalOnce checks the rule behind LS-197 (A-39 fixed): a
// row with an empty mesh name moves the kind's global counter once.
func TestEmptyMeshBumpsGlobalOnce(t *testing.T) {
	src := newLSSource()
	s := fixture.SPOT("a", 1)
	s.MeshName = ""
	_, plan := lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateSpot(tx, s, location.IntentNewClaim) })
	require.Equal(t, []StampCounter{lsStamp(location.LocationSpot, "")}, plan.Stamps)
}

// lsOwnerRowTables are the peer and the route table.
func lsOwnerRowTables() []lsRowTable[location.WriteResult] {
	return []lsRowTable[location.WriteResult]{
		lsRowTableOf("peers", location.TablePeers, fixture.PeerKey(), PeerKey, fixture.PEER, UpdatePeer, RemovePeer,
			lsStamp(location.LocationPeer, "play"), lsStamp(location.LocationPeer, "")),
		lsRowTableOf("routes", location.TableRoutes, fixture.RouteKey(), RouteKey, fixture.ROUTE, UpdateRoute, RemoveRoute,
			lsStamp(location.LocationRoute, "")),
	}
}

// TestOwnerRowOutcomeMatrix checks 02 §3.5 for peers and routes: the stored
// row has generation 5 (the key's counter); the writer's own lease is never
// consulted.
func TestOwnerRowOutcomeMatrix(t *testing.T) {
	cases := []struct {
		name      string
		rowOwner  string // "" = no row
		ownerLive bool
		writer    string
		writerGen int64
		intent    location.WriteIntent
		want      lsOutcome
	}{
		{name: "absent/NewClaim", writer: "a", intent: location.IntentNewClaim, want: outcomeClaim},
		{name: "absent/Renew", writer: "a", writerGen: 5, intent: location.IntentRenew, want: outcomeStale},
		{name: "absent/Takeover", writer: "a", intent: location.IntentTakeover, want: outcomeClaim},
		{name: "live other owner/NewClaim", rowOwner: "a", ownerLive: true, writer: "b", intent: location.IntentNewClaim, want: outcomeConflict},
		{name: "own live row/NewClaim", rowOwner: "a", ownerLive: true, writer: "a", intent: location.IntentNewClaim, want: outcomeConflict},
		{name: "live owner/Renew with the row generation", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 5, intent: location.IntentRenew, want: outcomeRenew},
		{name: "live owner/Renew with the wildcard 0", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 0, intent: location.IntentRenew, want: outcomeRenew},
		{name: "live owner/Renew with another generation", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 6, intent: location.IntentRenew, want: outcomeStale},
		{name: "live owner/Renew by another owner", rowOwner: "a", ownerLive: true, writer: "b", writerGen: 5, intent: location.IntentRenew, want: outcomeStale},
		{name: "live owner/Takeover by another owner", rowOwner: "a", ownerLive: true, writer: "b", intent: location.IntentTakeover, want: outcomeClaim},
		{name: "dead owner/NewClaim by another owner", rowOwner: "a", writer: "b", intent: location.IntentNewClaim, want: outcomeClaim},
		{name: "dead owner/Renew by the owner", rowOwner: "a", writer: "a", writerGen: 5, intent: location.IntentRenew, want: outcomeRenew},
		{name: "dead owner/Renew by another owner", rowOwner: "a", writer: "b", writerGen: 5, intent: location.IntentRenew, want: outcomeStale},
		{name: "dead owner/Takeover", rowOwner: "a", writer: "ghost", intent: location.IntentTakeover, want: outcomeClaim},
		{name: "unknown intent acts as Renew", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 5, intent: 4, want: outcomeRenew},
		{name: "unknown intent on an absent row", writer: "a", intent: 0, want: outcomeStale},
	}
	for _, ot := range lsOwnerRowTables() {
		for _, c := range cases {
			t.Run(ot.name+"/"+c.name, func(t *testing.T) {
				var stored any
				if c.rowOwner != "" {
					stored = lsStoredRow(ot.row(c.rowOwner, 5), 5, fixture.T0())
				}
				src := ot.matrixSource(stored, c.rowOwner, 1, c.ownerLive)
				ot.requireMatrixWrite(t, src, ot.row(c.writer, c.writerGen), c.intent, c.want,
					func(written any, g int64) any { return lsStoredRow(written, g, src.now) })
			})
		}
	}
}

// TestOwnerRowRemove checks 02 §3.2: the token's generation is compared with
// the row generation; no liveness; the result carries that generation.
func TestOwnerRowRemove(t *testing.T) {
	for _, ot := range lsOwnerRowTables() {
		for _, c := range []lsRemoveCase[location.WriteResult]{
			{name: "absent row", owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 5}, want: lsStale()},
			{name: "other owner", row: true, owner: location.OwnerToken{OwnerID: "b", LeaseGeneration: 5}, want: lsStale()},
			{name: "an older row generation", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 4}, want: lsStale()},
			{name: "the row generation, owner dead", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 5}, want: lsStored(5, fixture.T0())},
		} {
			t.Run(ot.name+"/"+c.name, func(t *testing.T) {
				var stored any
				if c.row {
					stored = lsStoredRow(ot.row("a", 5), 5, fixture.T0())
				}
				ot.requireMatrixRemove(t, stored, c.owner, c.want, c.want.Status == location.Stored)
			})
		}
	}
}

// TestOwnerRowRenewKeepsGeneration checks the rule behind LS-109 (A-01
// fixed) as a sequence:
// after a wildcard Renew the row still carries its generation, so a remove
// with that generation succeeds.
func TestOwnerRowRenewKeepsGeneration(t *testing.T) {
	for _, ot := range lsOwnerRowTables() {
		t.Run(ot.name, func(t *testing.T) {
			src := newLSSource()
			src.lease("a", 1, true)
			res, _ := lsRun(t, src, func(tx *Tx) (location.WriteResult, error) {
				return ot.write(tx, ot.row("a", 0), location.IntentNewClaim)
			})
			require.Equal(t, lsStored(1, fixture.T0()), res)
			res, _ = lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return ot.write(tx, ot.row("a", 0), location.IntentRenew) })
			require.Equal(t, lsStored(1, fixture.T0()), res)
			rec, ok := src.Get(ot.table, ot.key)
			require.True(t, ok)
			require.Equal(t, int64(1), lsRowGeneration(rec.Value))
			require.Equal(t, int64(1), rec.Generation)
			res, _ = lsRun(t, src, func(tx *Tx) (location.WriteResult, error) {
				return ot.remove(tx, location.OwnerToken{OwnerID: "a", LeaseGeneration: 1})
			})
			require.Equal(t, lsStored(1, fixture.T0()), res)
		})
	}
}

// TestPeerIdentity checks the keys behind LS-110, LS-111 and LS-155: with a
// node RID the endpoint is not part of a peer's identity, without one it
// is, and a route's kind is part of its identity.
func TestPeerIdentity(t *testing.T) {
	withRID := fixture.PEER("a", 0)
	otherEndpoint := fixture.PEER("a", 0)
	otherEndpoint.Endpoint = "tcp://127.0.0.1:5999"
	require.Equal(t, PeerKey(withRID.Key()), PeerKey(otherEndpoint.Key()), "with a node RID the endpoint is not identity")
	e1, e2 := fixture.PEER("a", 0), fixture.PEER("a", 0)
	e1.NodeRID, e2.NodeRID = nil, nil
	e2.Endpoint = "tcp://127.0.0.1:5002"
	require.NotEqual(t, PeerKey(e1.Key()), PeerKey(e2.Key()), "without a node RID the endpoint is identity")
	rk := location.RouteKey{RouteKind: location.RouteSpotName, RouteKey: "route-1"}
	require.NotEqual(t, RouteKey(rk), RouteKey(fixture.RouteKey()), "the kind is part of a route's identity")
}

// TestOwnerRowWritesCopyInput checks that stored peer and route values do
// not share memory with the caller's (the rule behind LS-157).
func TestOwnerRowWritesCopyInput(t *testing.T) {
	src := newLSSource()
	p := fixture.PEER("a", 0)
	r := fixture.ROUTE("a", 0)
	lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdatePeer(tx, p, location.IntentNewClaim) })
	lsRun(t, src, func(tx *Tx) (location.WriteResult, error) { return UpdateRoute(tx, r, location.IntentNewClaim) })
	p.Metadata["route-endpoint"] = "x"
	p.Capabilities[0] = "x"
	*p.NodeRID = "x"
	r.Value[0] = 9
	gotP, _, ok := GetPeer(NewTx(src), PeerKey(fixture.PeerKey()))
	require.True(t, ok)
	require.Equal(t, lsStoredRow(fixture.PEER("a", 0), 1, fixture.T0()), gotP)
	gotR, _, ok := GetRoute(NewTx(src), RouteKey(r.Key()))
	require.True(t, ok)
	require.Equal(t, []byte{1, 2, 3, 4}, gotR.Value, "the route value was copied in")
}
