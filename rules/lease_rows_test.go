package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// lsLeaseRowTable adapts the spot or the actor table to the matrix tests.
type lsLeaseRowTable struct {
	name   string
	table  Table
	key    string
	row    func(owner string, lg int64) any
	write  func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error)
	remove func(tx *Tx, owner location.OwnerToken) (location.WriteStatus, error)
	stamps []StampCounter
}

func lsLeaseRowTables() []lsLeaseRowTable {
	sk := fixture.SpotKey()
	ak := fixture.ActorKey()
	return []lsLeaseRowTable{
		{
			name: "spots", table: location.TableSpots, key: SpotKey(sk),
			row: func(owner string, lg int64) any { return fixture.SPOT(owner, lg) },
			write: func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error) {
				return UpdateSpot(tx, row.(location.SpotLocation), intent)
			},
			remove: func(tx *Tx, owner location.OwnerToken) (location.WriteStatus, error) {
				return RemoveSpot(tx, sk, owner)
			},
			stamps: []StampCounter{lsStamp(location.LocationSpot, "play"), lsStamp(location.LocationSpot, "")},
		},
		{
			name: "actors", table: location.TableActors, key: ActorKey(ak),
			row: func(owner string, lg int64) any { return fixture.ACTOR(owner, lg) },
			write: func(tx *Tx, row any, intent location.WriteIntent) (location.WriteResult, error) {
				return UpdateActor(tx, row.(location.ActorLocation), intent)
			},
			remove: func(tx *Tx, owner location.OwnerToken) (location.WriteStatus, error) {
				return RemoveActor(tx, ak, owner)
			},
			stamps: []StampCounter{lsStamp(location.LocationActor, "play"), lsStamp(location.LocationActor, "")},
		},
	}
}

// lsAt returns a spot or actor value with UpdatedAt set.
func lsAt(v any, at time.Time) any {
	switch r := v.(type) {
	case location.SpotLocation:
		r.UpdatedAt = at
		return r
	case location.ActorLocation:
		r.UpdatedAt = at
		return r
	}
	panic("not a spot or actor")
}

// TestLeaseRowOutcomeMatrix checks 02 §4.5 for spots and actors: the stored
// row was written by (a, lease 1) under row generation 5; the writer's own
// lease is never consulted.
func TestLeaseRowOutcomeMatrix(t *testing.T) {
	const (
		claim    = "claim" // Stored(6, now)
		renew    = "renew" // Stored(5, now)
		stale    = "stale"
		conflict = "conflict"
	)
	cases := []struct {
		name      string
		row       bool
		ownerLive bool
		ownerGen  int64 // a's lease generation (1 = the row's)
		writer    string
		writerLG  int64
		intent    location.WriteIntent
		want      string
	}{
		{name: "absent/NewClaim", writer: "a", writerLG: 1, intent: location.IntentNewClaim, want: claim},
		{name: "absent/Renew", writer: "a", writerLG: 1, intent: location.IntentRenew, want: stale},
		{name: "absent/Takeover", writer: "a", writerLG: 1, intent: location.IntentTakeover, want: claim},
		{name: "absent/NewClaim by a writer without a lease", writer: "ghost", writerLG: 1, intent: location.IntentNewClaim, want: claim},
		{name: "live other owner/NewClaim", row: true, ownerLive: true, ownerGen: 1, writer: "b", writerLG: 2, intent: location.IntentNewClaim, want: conflict},
		{name: "own live row/NewClaim", row: true, ownerLive: true, ownerGen: 1, writer: "a", writerLG: 1, intent: location.IntentNewClaim, want: conflict},
		{name: "restarted owner/NewClaim", row: true, ownerLive: true, ownerGen: 3, writer: "a", writerLG: 3, intent: location.IntentNewClaim, want: conflict},
		{name: "restarted owner/Takeover", row: true, ownerLive: true, ownerGen: 3, writer: "a", writerLG: 3, intent: location.IntentTakeover, want: claim},
		{name: "live owner/Renew", row: true, ownerLive: true, ownerGen: 1, writer: "a", writerLG: 1, intent: location.IntentRenew, want: renew},
		{name: "live owner/Renew with another lease generation", row: true, ownerLive: true, ownerGen: 1, writer: "a", writerLG: 2, intent: location.IntentRenew, want: stale},
		{name: "live owner/Renew by another owner", row: true, ownerLive: true, ownerGen: 1, writer: "b", writerLG: 1, intent: location.IntentRenew, want: stale},
		{name: "live owner/Takeover by another owner", row: true, ownerLive: true, ownerGen: 1, writer: "b", writerLG: 2, intent: location.IntentTakeover, want: claim},
		{name: "dead owner/NewClaim by a writer without a lease", row: true, ownerGen: 1, writer: "ghost", writerLG: 5, intent: location.IntentNewClaim, want: claim},
		{name: "dead owner/Renew by the owner", row: true, ownerGen: 1, writer: "a", writerLG: 1, intent: location.IntentRenew, want: renew},
		{name: "dead owner/Takeover", row: true, ownerGen: 1, writer: "b", writerLG: 2, intent: location.IntentTakeover, want: claim},
		{name: "unknown intent/absent row is created", writer: "a", writerLG: 1, intent: 4, want: claim},
		{name: "unknown intent/existing row is rejected", row: true, ownerGen: 1, writer: "a", writerLG: 1, intent: 0, want: conflict},
	}
	for _, lt := range lsLeaseRowTables() {
		for _, c := range cases {
			t.Run(lt.name+"/"+c.name, func(t *testing.T) {
				src := newLSSource()
				src.now = fixture.T0().Add(time.Minute)
				src.lease("b", 2, true)
				if c.row {
					src.put(lt.table, lt.key, lsAt(lt.row("a", 1), fixture.T0()), 5)
					src.lease("a", c.ownerGen, c.ownerLive)
				} else {
					src.gens[lt.table] = map[string]int64{lt.key: 5}
				}
				written := lt.row(c.writer, c.writerLG)
				tx := NewTx(src)
				res, err := lt.write(tx, written, c.intent)
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
					g = 5
				}
				require.Equal(t, lsStored(g, src.now), res)
				require.Equal(t, []Write{{Table: lt.table, Key: lt.key, Value: lsAt(written, src.now), Generation: g}}, tx.Plan().Writes)
				require.Equal(t, lt.stamps, tx.Plan().Stamps)
			})
		}
	}
}

// TestLeaseRowRemove checks 02 §4.2: owner id and the row's lease
// generation must match; no liveness.
func TestLeaseRowRemove(t *testing.T) {
	for _, lt := range lsLeaseRowTables() {
		for _, c := range []struct {
			name  string
			row   bool
			owner location.OwnerToken
			want  location.WriteStatus
		}{
			{name: "absent row", owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 1}, want: location.IgnoredStale},
			{name: "other owner", row: true, owner: location.OwnerToken{OwnerID: "b", LeaseGeneration: 1}, want: location.IgnoredStale},
			{name: "the row generation instead of the lease generation", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 5}, want: location.IgnoredStale},
			{name: "the row's lease generation, owner dead", row: true, owner: location.OwnerToken{OwnerID: "a", LeaseGeneration: 1}, want: location.Stored},
		} {
			t.Run(lt.name+"/"+c.name, func(t *testing.T) {
				src := newLSSource()
				if c.row {
					src.put(lt.table, lt.key, lsAt(lt.row("a", 1), fixture.T0()), 5)
				}
				tx := NewTx(src)
				got, err := lt.remove(tx, c.owner)
				require.NoError(t, err)
				require.Equal(t, c.want, got)
				if got != location.Stored {
					require.True(t, tx.Plan().Empty())
					return
				}
				require.Equal(t, []Write{{Table: lt.table, Key: lt.key}}, tx.Plan().Writes)
				require.Equal(t, lt.stamps, tx.Plan().Stamps)
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
