package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

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
				lt.requireWrite(t, tx, res, c.want, src.now, func(int64) any { return lsAt(written, src.now) })
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
				lt.requireRemove(t, tx, got == location.Stored)
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
