package rules

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Lease-generation rows (02 §4): spots and actors carry the lease generation
// of the owner that wrote them; their row generation lives only in the
// table. The writer's own lease is never checked (anomaly A-11, reproduced).

// leaseRowTable describes the spot or the actor table to the shared
// procedures.
type leaseRowTable[R location.Cloner[R]] struct {
	ownedTable[R]
	// withUpdatedAt returns r with UpdatedAt = now.
	withUpdatedAt func(r R, now time.Time) R
	// bump plans the change stamps of a changed row.
	bump func(tx *Tx, r R)
}

// spotTable is the spot table: (Spot, mesh) stamps.
func spotTable() leaseRowTable[location.SpotLocation] {
	return leaseRowTable[location.SpotLocation]{
		ownedTable: ownedTable[location.SpotLocation]{table: location.TableSpots,
			token: func(s location.SpotLocation) location.OwnerToken { return s.Owner() }},
		withUpdatedAt: func(s location.SpotLocation, now time.Time) location.SpotLocation {
			s.UpdatedAt = now
			return s
		},
		bump: func(tx *Tx, s location.SpotLocation) { tx.Bump(location.LocationSpot, &s.MeshName) },
	}
}

// actorTable is the actor table: (Actor, mesh) stamps.
func actorTable() leaseRowTable[location.ActorLocation] {
	return leaseRowTable[location.ActorLocation]{
		ownedTable: ownedTable[location.ActorLocation]{table: location.TableActors,
			token: func(a location.ActorLocation) location.OwnerToken { return a.Owner() }},
		withUpdatedAt: func(a location.ActorLocation, now time.Time) location.ActorLocation {
			a.UpdatedAt = now
			return a
		},
		bump: func(tx *Tx, a location.ActorLocation) { tx.Bump(location.LocationActor, &a.MeshName) },
	}
}

// UpdateSpot is updateSpot (02 §4.1). NewClaim over a row whose owner id is
// live is RejectedConflict (even one's own row or a newer incarnation's,
// anomalies ); Renew replaces every field of a row with the same
// owner id and lease generation, keeping its generation (IgnoredStale
// otherwise; the writer's lease may have expired, anomaly A-30); NewClaim
// and Takeover otherwise store the row under a new generation. An unknown
// intent creates a missing row and is rejected over an existing one.
func UpdateSpot(tx *Tx, s location.SpotLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeLeaseRow(tx, spotTable(), SpotKey(s.Key()), &s, intent)
}

// RemoveSpot deletes the row when owner equals its owner id and lease
// generation (no liveness check).
func RemoveSpot(tx *Tx, k location.SpotKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return removeOwnedRow(tx, spotTable().ownedTable, SpotKey(k), owner)
}

// UpdateActor is updateActor: UpdateSpot's procedure on the actor table.
func UpdateActor(tx *Tx, a location.ActorLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeLeaseRow(tx, actorTable(), ActorKey(a.Key()), &a, intent)
}

// RemoveActor is removeActor: RemoveSpot's procedure on the actor table.
func RemoveActor(tx *Tx, k location.ActorKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return removeOwnedRow(tx, actorTable().ownedTable, ActorKey(k), owner)
}

// writeLeaseRow is the shared write (02 §4.1, rules 1–4).
func writeLeaseRow[R location.Cloner[R]](tx *Tx, lt leaseRowTable[R], key string, r *R, intent location.WriteIntent) (location.WriteResult, error) {
	now := tx.Now()
	cur, rec, exists, err := peekRow[R](tx, lt.table, key)
	if err != nil {
		return location.WriteResult{}, err
	}
	var owner location.OwnerToken
	if exists {
		owner = lt.token(cur)
	}
	if intent == location.IntentNewClaim && exists && ownerIDLive(tx, owner.OwnerID) {
		return rejectedConflictResult(), nil
	}
	writer := lt.token(*r)
	if intent == location.IntentRenew {
		if !exists || owner != writer {
			return ignoredStaleResult(), nil
		}
		tx.PutOwned(lt.table, key, lt.withUpdatedAt((*r).Clone(), now), rec.Generation)
		lt.bump(tx, *r)
		return storedResult(rec.Generation, now), nil
	}
	if exists && !takeoverAllowed(tx, owner.OwnerID, owner.LeaseGeneration, writer.OwnerID, writer.LeaseGeneration, intent) {
		return rejectedConflictResult(), nil
	}
	g := tx.Source().NextGeneration(lt.table, key)
	tx.PutOwned(lt.table, key, lt.withUpdatedAt((*r).Clone(), now), g)
	lt.bump(tx, *r)
	return storedResult(g, now), nil
}
