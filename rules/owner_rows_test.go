package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// lsOwnerRowTable adapts the peer or the route table to the matrix tests.
type lsOwnerRowTable struct {
	name   string
	table  Table
	key    string
	row    func(owner string, generation int64) any
	write  func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error)
	remove func(tx *Tx, owner location.OwnerToken) (location.WriteResult, error)
	stamps []StampCounter
}

// rowGeneration returns the Generation field of a peer or route value.
func (ot lsOwnerRowTable) rowGeneration(v any) int64 {
	if p, ok := v.(location.PeerLocation); ok {
		return p.Generation
	}
	return v.(location.RouteLocation).Generation
}

func lsOwnerRowTables() []lsOwnerRowTable {
	pk := fixture.PeerKey()
	rk := fixture.RouteKey()
	return []lsOwnerRowTable{
		{
			name: "peers", table: location.TablePeers, key: PeerKey(pk),
			row: func(owner string, g int64) any { return fixture.PEER(owner, g) },
			write: func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error) {
				return UpdatePeer(tx, row.(location.PeerLocation), intent)
			},
			remove: func(tx *Tx, owner location.OwnerToken) (location.WriteResult, error) {
				return RemovePeer(tx, pk, owner)
			},
			stamps: []StampCounter{lsStamp(location.LocationPeer, "play"), lsStamp(location.LocationPeer, "")},
		},
		{
			name: "routes", table: location.TableRoutes, key: RouteKey(rk),
			row: func(owner string, g int64) any { return fixture.ROUTE(owner, g) },
			write: func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error) {
				return UpdateRoute(tx, row.(location.RouteLocation), intent)
			},
			remove: func(tx *Tx, owner location.OwnerToken) (location.WriteResult, error) {
				return RemoveRoute(tx, rk, owner)
			},
			stamps: []StampCounter{lsStamp(location.LocationRoute, "")},
		},
	}
}

// lsStoredRow returns a peer or route value with generation and updatedAt.
func lsStoredRow(v any, generation int64, at time.Time) any {
	switch r := v.(type) {
	case location.PeerLocation:
		r = r.Clone()
		r.Generation, r.UpdatedAt = generation, at
		return r
	case location.RouteLocation:
		r = r.Clone()
		r.Generation, r.UpdatedAt = generation, at
		return r
	}
	panic("not a peer or route")
}

// TestOwnerRowOutcomeMatrix checks 02 §3.5 for peers and routes: the stored
// row has generation 5 (the key's counter); the writer's own lease is never
// consulted.
func TestOwnerRowOutcomeMatrix(t *testing.T) {
	const (
		claim    = "claim"    // Stored(6, now), generation 6 written
		renew    = "renew"    // Stored(5, now), generation 5 kept
		stale    = "stale"    // IgnoredStale
		conflict = "conflict" // RejectedConflict
	)
	cases := []struct {
		name      string
		rowOwner  string // "" = no row
		ownerLive bool
		writer    string
		writerGen int64
		intent    location.WriteIntent
		want      string
	}{
		{name: "absent/NewClaim", writer: "a", intent: location.IntentNewClaim, want: claim},
		{name: "absent/Renew", writer: "a", writerGen: 5, intent: location.IntentRenew, want: stale},
		{name: "absent/Takeover", writer: "a", intent: location.IntentTakeover, want: claim},
		{name: "live other owner/NewClaim", rowOwner: "a", ownerLive: true, writer: "b", intent: location.IntentNewClaim, want: conflict},
		{name: "own live row/NewClaim", rowOwner: "a", ownerLive: true, writer: "a", intent: location.IntentNewClaim, want: conflict},
		{name: "live owner/Renew with the row generation", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 5, intent: location.IntentRenew, want: renew},
		{name: "live owner/Renew with the wildcard 0", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 0, intent: location.IntentRenew, want: renew},
		{name: "live owner/Renew with another generation", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 6, intent: location.IntentRenew, want: stale},
		{name: "live owner/Renew by another owner", rowOwner: "a", ownerLive: true, writer: "b", writerGen: 5, intent: location.IntentRenew, want: stale},
		{name: "live owner/Takeover by another owner", rowOwner: "a", ownerLive: true, writer: "b", intent: location.IntentTakeover, want: claim},
		{name: "dead owner/NewClaim by another owner", rowOwner: "a", writer: "b", intent: location.IntentNewClaim, want: claim},
		{name: "dead owner/Renew by the owner", rowOwner: "a", writer: "a", writerGen: 5, intent: location.IntentRenew, want: renew},
		{name: "dead owner/Renew by another owner", rowOwner: "a", writer: "b", writerGen: 5, intent: location.IntentRenew, want: stale},
		{name: "dead owner/Takeover", rowOwner: "a", writer: "ghost", intent: location.IntentTakeover, want: claim},
		{name: "unknown intent acts as Renew", rowOwner: "a", ownerLive: true, writer: "a", writerGen: 5, intent: 4, want: renew},
		{name: "unknown intent on an absent row", writer: "a", intent: 0, want: stale},
	}
	for _, ot := range lsOwnerRowTables() {
		for _, c := range cases {
			t.Run(ot.name+"/"+c.name, func(t *testing.T) {
				src := newLSSource()
				src.now = fixture.T0().Add(time.Minute)
				src.lease("b", 2, true)
				if c.rowOwner != "" {
					src.put(ot.table, ot.key, lsStoredRow(ot.row(c.rowOwner, 5), 5, fixture.T0()), 5)
					src.lease(c.rowOwner, 1, c.ownerLive)
				} else {
					src.gens[ot.table] = map[string]int64{ot.key: 5}
				}
				written := ot.row(c.writer, c.writerGen)
				tx := NewTx(src)
				res, err := ot.write(tx, written, c.intent)
				require.NoError(t, err)
				var g int64
				switch c.want {
				case stale:
					require.Equal(t, lsStale(), res)
					require.True(t, tx.Plan().Empty())
					return
				case conflict:
					require.Equal(t, lsConflict(), res)
					require.True(t, tx.Plan().Empty())
					return
				case claim:
					g = 6
				case renew:
					g = 5 // A-01 fixed: the stored generation is kept
				}
				require.Equal(t, lsStored(g, src.now), res)
				require.Equal(t, []Write{{Table: ot.table, Key: ot.key, Value: lsStoredRow(written, g, src.now), Generation: g}}, tx.Plan().Writes)
				require.Equal(t, ot.stamps, tx.Plan().Stamps)
				require.Empty(t, tx.Plan().MeshNodeStamps)
			})
		}
	}
}

// TestOwnerRowRemove checks 02 §3.2: the token's generation is compared with
// the row generation; no liveness; the result carries that generation.
func TestOwnerRowRemove(t *testing.T) {
	for _, ot := range lsOwnerRowTables() {
		for _, c := range []struct {
			name  string
			row   bool
			owner location.OwnerToken
			want  location.WriteResult
		}{
			{name: "absent row", owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 5}, want: lsStale()},
			{name: "other owner", row: true, owner: location.OwnerToken{OwnerID: "b", LeaseGeneration: 5}, want: lsStale()},
			{name: "an older row generation", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 4}, want: lsStale()},
			{name: "the row generation, owner dead", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 5}, want: lsStored(5, fixture.T0())},
		} {
			t.Run(ot.name+"/"+c.name, func(t *testing.T) {
				src := newLSSource()
				if c.row {
					src.put(ot.table, ot.key, lsStoredRow(ot.row("a", 5), 5, fixture.T0()), 5)
				}
				tx := NewTx(src)
				res, err := ot.remove(tx, c.owner)
				require.NoError(t, err)
				require.Equal(t, c.want, res)
				if c.want.Status != location.Stored {
					require.True(t, tx.Plan().Empty())
					return
				}
				require.Equal(t, []Write{{Table: ot.table, Key: ot.key}}, tx.Plan().Writes)
				require.Equal(t, ot.stamps, tx.Plan().Stamps)
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
			require.Equal(t, int64(1), ot.rowGeneration(rec.Value))
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
