package rules

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Generic owner rows (02 §3): peers and routes share one write and one
// remove procedure. Their rows carry the row generation; the owner is an id
// without a lease generation, and the writer's own lease is never checked
// (anomaly A-11, reproduced).

// ownerRowTable describes the peer or the route table to the shared
// procedures.
type ownerRowTable[R location.Cloner[R]] struct {
	table Table
	// owner returns the row's owner id; generation its row generation.
	// These functions take rows by value: a row passed by pointer to a
	// function value would escape to the heap.
	owner      func(R) string
	generation func(R) int64
	// withStamp returns r with the given row generation and UpdatedAt = now.
	withStamp func(r R, generation int64, now time.Time) R
	// bump plans the change stamps of a changed row.
	bump func(tx *Tx, r R)
	// copyOver makes the copy a write stores (nil: r's Clone).
	copyOver rowCopier[R]
}

// peerTable is the peer table: (Peer, mesh) stamps.
func peerTable() ownerRowTable[location.PeerLocation] {
	return ownerRowTable[location.PeerLocation]{
		table:      location.TablePeers,
		owner:      func(p location.PeerLocation) string { return p.OwnerID },
		generation: func(p location.PeerLocation) int64 { return p.Generation },
		withStamp: func(p location.PeerLocation, g int64, now time.Time) location.PeerLocation {
			p.Generation, p.UpdatedAt = g, now
			return p
		},
		bump: func(tx *Tx, p location.PeerLocation) { tx.Bump(location.LocationPeer, &p.MeshName) },
		copyOver: func(p, cur location.PeerLocation, stored bool) location.PeerLocation {
			if !stored {
				return p.Clone()
			}
			return peerCopy(&p, &cur)
		},
	}
}

// routeTable is the route table: the global Route stamp only (anomaly A-09,
// reproduced).
func routeTable() ownerRowTable[location.RouteLocation] {
	return ownerRowTable[location.RouteLocation]{
		table:      location.TableRoutes,
		owner:      func(r location.RouteLocation) string { return r.OwnerID },
		generation: func(r location.RouteLocation) int64 { return r.Generation },
		withStamp: func(r location.RouteLocation, g int64, now time.Time) location.RouteLocation {
			r.Generation, r.UpdatedAt = g, now
			return r
		},
		bump: func(tx *Tx, _ location.RouteLocation) { tx.Bump(location.LocationRoute, nil) },
	}
}

// UpdatePeer is updatePeer (02 §3.1). NewClaim over a row whose owner id is
// live is RejectedConflict (even one's own row, anomaly A-13); NewClaim and
// Takeover otherwise store the row under a new generation; Renew (and any
// other intent) refreshes the row when the owner id matches and the caller's
// generation is 0 or the row's — the stored generation is kept (anomaly A-01
// fixed); anything else is IgnoredStale.
func UpdatePeer(tx *Tx, p location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeOwnerRow(tx, peerTable(), PeerKey(p.Key()), &p, intent)
}

// RemovePeer deletes the row when owner.OwnerID owns it and
// owner.LeaseGeneration equals the row generation (anomaly A-14: callers
// pass the generation a write returned); the result carries that
// generation. No liveness check.
func RemovePeer(tx *Tx, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	return removeOwnerRow(tx, peerTable(), PeerKey(k), owner)
}

// UpdateRoute is updateRoute: UpdatePeer's procedure on the route table.
func UpdateRoute(tx *Tx, r location.RouteLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeOwnerRow(tx, routeTable(), RouteKey(r.Key()), &r, intent)
}

// RemoveRoute is removeRoute: RemovePeer's procedure on the route table.
func RemoveRoute(tx *Tx, k location.RouteKey, owner location.OwnerToken) (location.WriteResult, error) {
	return removeOwnerRow(tx, routeTable(), RouteKey(k), owner)
}

// writeOwnerRow is the shared write (02 §3.1, rules 1–4).
func writeOwnerRow[R location.Cloner[R]](tx *Tx, ot ownerRowTable[R], key string, r *R, intent location.WriteIntent) (location.WriteResult, error) {
	now := tx.Now()
	cur, rec, exists, err := peekRow[R](tx, ot.table, key)
	if err != nil {
		return location.WriteResult{}, err
	}
	if intent == location.IntentNewClaim && exists && ownerIDLive(tx, ot.owner(cur)) {
		return rejectedConflictResult(), nil
	}
	if intent == location.IntentNewClaim || intent == location.IntentTakeover {
		g := tx.Source().NextGeneration(ot.table, key)
		tx.PutOwned(ot.table, key, ot.withStamp(ot.copyOver.copy(r, &cur, exists), g, now), g)
		ot.bump(tx, *r)
		return storedResult(g, now), nil
	}
	want := ot.generation(*r)
	if exists && ot.owner(cur) == ot.owner(*r) && (want == 0 || ot.generation(cur) == want) {
		// Anomaly A-01 fixed: the row keeps its generation (the reference
		// would store the caller's value, 0 for the wildcard).
		tx.PutOwned(ot.table, key, ot.withStamp(ot.copyOver.copy(r, &cur, true), rec.Generation, now), rec.Generation)
		ot.bump(tx, *r)
		return storedResult(rec.Generation, now), nil
	}
	return ignoredStaleResult(), nil
}

// removeOwnerRow is the shared remove (02 §3.2).
func removeOwnerRow[R location.Cloner[R]](tx *Tx, ot ownerRowTable[R], key string, owner location.OwnerToken) (location.WriteResult, error) {
	cur, _, exists, err := readRow[R](tx, ot.table, key)
	if err != nil {
		return location.WriteResult{}, err
	}
	if !exists || ot.owner(cur) != owner.OwnerID || ot.generation(cur) != owner.LeaseGeneration {
		return ignoredStaleResult(), nil
	}
	if err := RemoveLocationRow(tx, ot.table, key); err != nil {
		return location.WriteResult{}, err
	}
	return storedResult(owner.LeaseGeneration, tx.Now()), nil
}
