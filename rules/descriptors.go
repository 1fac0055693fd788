package rules

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// The descriptor family (02 §2): mesh nodes, client-server servers and fanout
// publishers share one write procedure and one remove procedure; the tables
// differ in their fingerprints, stamps and (mesh nodes only) entry-spot
// claims.

// descriptorTable describes one descriptor table to the shared procedures.
// Its functions take rows by value: a row passed by pointer to a function
// value would escape, and the write would allocate its copies of the
// caller's row and of the stored one on the heap.
type descriptorTable[D location.Cloner[D]] struct {
	ownedTable[D]
	// facts returns a row's owner token and ordering fields.
	facts func(D) descriptorFacts
	// withUpdatedAt returns d with UpdatedAt = now.
	withUpdatedAt func(d D, now time.Time) D
	// equal and equalImmutable compare full and immutable fingerprints.
	equal          func(a, b D) bool
	equalImmutable func(a, b D) bool
	// bump plans the change stamps of a changed row.
	bump func(tx *Tx, d D)
	// claim takes the create path's entry-spot claim (nil: none).
	claim func(tx *Tx, next D) (bool, error)
	// replace moves claims on the takeover path (nil: none).
	replace func(tx *Tx, cur, next D) (bool, error)
	// copyOver makes the copy a write stores (nil: d's Clone).
	copyOver rowCopier[D]
}

// descriptorFacts are the fields of a descriptor the shared write orders
// and reports by.
type descriptorFacts struct {
	owner               location.OwnerToken
	lifecycle, revision int64
	updatedAt           time.Time
}

// meshNodeTable is the mesh-node descriptor table: Peer-kind stamps plus the
// mesh-node stamp (00-decisions), entry-spot claims.
func meshNodeTable() descriptorTable[location.MeshNodeDescriptor] {
	type row = location.MeshNodeDescriptor
	return descriptorTable[row]{
		ownedTable: ownedTable[row]{table: location.TableMeshNodes, token: func(d row) location.OwnerToken { return d.Owner() }},
		facts: func(d row) descriptorFacts {
			return descriptorFacts{owner: d.Owner(), lifecycle: d.LifecycleGeneration, revision: d.DescriptorRevision, updatedAt: d.UpdatedAt}
		},
		withUpdatedAt: func(d row, now time.Time) row {
			d.UpdatedAt = now
			return d
		},
		equal:          func(a, b row) bool { return EqualMeshNode(&a, &b) },
		equalImmutable: func(a, b row) bool { return EqualMeshNodeImmutable(&a, &b) },
		bump:           func(tx *Tx, d row) { bumpMeshNode(tx, d.MeshName) },
		claim:          func(tx *Tx, next row) (bool, error) { return claimEntrySpot(tx, &next) },
		replace:        func(tx *Tx, cur, next row) (bool, error) { return replaceEntrySpot(tx, &cur, &next) },
		copyOver: func(d, cur row, stored bool) row {
			if !stored {
				return d.Clone()
			}
			return meshNodeCopy(&d, &cur)
		},
	}
}

// clientServerTable is the client-server table: ClientServer-kind stamps with
// the channel name in the mesh slot (anomaly A-06, reproduced).
func clientServerTable() descriptorTable[location.ClientServerDescriptor] {
	type row = location.ClientServerDescriptor
	return descriptorTable[row]{
		ownedTable: ownedTable[row]{table: location.TableClientServers, token: func(d row) location.OwnerToken { return d.Owner() }},
		facts: func(d row) descriptorFacts {
			return descriptorFacts{owner: d.Owner(), lifecycle: d.LifecycleGeneration, revision: d.DescriptorRevision, updatedAt: d.UpdatedAt}
		},
		withUpdatedAt: func(d row, now time.Time) row {
			d.UpdatedAt = now
			return d
		},
		equal:          func(a, b row) bool { return EqualClientServer(&a, &b) },
		equalImmutable: func(a, b row) bool { return EqualClientServerImmutable(&a, &b) },
		bump:           func(tx *Tx, d row) { tx.Bump(location.LocationClientServer, &d.ChannelName) },
	}
}

// fanoutPublisherTable is the fanout publisher table: no stamps at all
// (anomaly A-07, reproduced).
func fanoutPublisherTable() descriptorTable[location.FanoutPublisherDescriptor] {
	type row = location.FanoutPublisherDescriptor
	return descriptorTable[row]{
		ownedTable: ownedTable[row]{table: location.TableFanoutPublishers, token: func(d row) location.OwnerToken { return d.Owner() }},
		facts: func(d row) descriptorFacts {
			return descriptorFacts{owner: d.Owner(), lifecycle: d.LifecycleGeneration, revision: d.DescriptorRevision, updatedAt: d.UpdatedAt}
		},
		withUpdatedAt: func(d row, now time.Time) row {
			d.UpdatedAt = now
			return d
		},
		equal:          func(a, b row) bool { return EqualFanoutPublisher(&a, &b) },
		equalImmutable: func(a, b row) bool { return EqualFanoutPublisherImmutable(&a, &b) },
		bump:           func(*Tx, row) {},
	}
}

// bumpMeshNode plans the stamps of a changed mesh-node row: the Peer kind
// (anomaly A-05, reproduced) and the mesh-node change stamp.
func bumpMeshNode(tx *Tx, mesh string) {
	tx.Bump(location.LocationPeer, &mesh)
	tx.BumpMeshNodeStamp(mesh)
}

// UpdateMeshNode is the reference's updateMeshNode (02 §2.1): the writer's
// exact lease must be live; a missing row is created by NewClaim or Takeover
// (generation from the source: 1 in memory, anomaly A-04); an existing row
// is taken over when canTakeOver allows it, replayed when the full
// fingerprint is unchanged, updated when the revision grows and the
// immutable fingerprint is unchanged, and otherwise left alone
// (IgnoredStale). Creates and takeovers also take the entry-spot claim.
func UpdateMeshNode(tx *Tx, d location.MeshNodeDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	return writeDescriptor(tx, meshNodeTable(), MeshNodeKey(d.Key()), &d, intent)
}

// RemoveMeshNode deletes the row when owner is its exact owner token (no
// liveness check) and releases its entry-spot claim; IgnoredStale otherwise.
func RemoveMeshNode(tx *Tx, k location.MeshNodeKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return removeOwnedRow(tx, meshNodeTable().ownedTable, MeshNodeKey(k), owner)
}

// UpdateClientServer is updateClientServer (02 §2.5): UpdateMeshNode's
// procedure without entry-spot claims, with generations continuing after a
// removal and ClientServer stamps keyed by the channel name.
func UpdateClientServer(tx *Tx, d location.ClientServerDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	return writeDescriptor(tx, clientServerTable(), ClientServerKey(d.Key()), &d, intent)
}

// RemoveClientServer deletes the row when owner is its exact owner token.
func RemoveClientServer(tx *Tx, k location.ClientServerKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return removeOwnedRow(tx, clientServerTable().ownedTable, ClientServerKey(k), owner)
}

// UpdateFanoutPublisher is updateFanoutPublisher (02 §2.7): as
// UpdateClientServer, but no change stamp moves.
func UpdateFanoutPublisher(tx *Tx, d location.FanoutPublisherDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	return writeDescriptor(tx, fanoutPublisherTable(), FanoutPublisherKey(d.Key()), &d, intent)
}

// RemoveFanoutPublisher deletes the row when owner is its exact owner token.
func RemoveFanoutPublisher(tx *Tx, k location.FanoutPublisherKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return removeOwnedRow(tx, fanoutPublisherTable().ownedTable, FanoutPublisherKey(k), owner)
}

// writeDescriptor is the shared descriptor write (02 §2.1 decision
// procedure, rules 1–6).
func writeDescriptor[D location.Cloner[D]](tx *Tx, dt descriptorTable[D], key string, d *D, intent location.WriteIntent) (location.WriteResult, error) {
	now := tx.Now()
	next := dt.facts(*d)
	writer := next.owner
	// Rule 1: the writer's own exact lease must be live, whatever the intent.
	if !exactLeaseLive(tx, writer.OwnerID, writer.LeaseGeneration) {
		return rejectedConflictResult(), nil
	}
	cur, rec, exists, err := peekRow[D](tx, dt.table, key)
	if err != nil {
		return location.WriteResult{}, err
	}
	// Rule 2: create.
	if !exists {
		if intent != location.IntentNewClaim && intent != location.IntentTakeover {
			return ignoredStaleResult(), nil
		}
		if dt.claim != nil {
			ok, err := dt.claim(tx, *d)
			if err != nil {
				return location.WriteResult{}, err
			}
			if !ok {
				return rejectedConflictResult(), nil
			}
		}
		return putDescriptor(tx, dt, key, d, &cur, false, tx.Source().NextGeneration(dt.table, key), now), nil
	}
	// Rule 3: takeover (no fingerprint check: any field may change).
	stored := dt.facts(cur)
	owner := stored.owner
	if takeoverAllowed(tx, owner.OwnerID, owner.LeaseGeneration, writer.OwnerID, writer.LeaseGeneration, intent) {
		if dt.replace != nil {
			ok, err := dt.replace(tx, cur, *d)
			if err != nil {
				return location.WriteResult{}, err
			}
			if !ok {
				return rejectedConflictResult(), nil
			}
		}
		return putDescriptor(tx, dt, key, d, &cur, true, tx.Source().NextGeneration(dt.table, key), now), nil
	}
	// Rule 4: exact replay (the full fingerprint includes owner, lease,
	// lifecycle and revision): no write, the stored updatedAt.
	if dt.equal(cur, *d) {
		return storedResult(rec.Generation, stored.updatedAt), nil
	}
	// Rule 5: stale.
	if owner != writer ||
		stored.lifecycle != next.lifecycle ||
		next.revision <= stored.revision ||
		!dt.equalImmutable(cur, *d) {
		return ignoredStaleResult(), nil
	}
	// Rule 6: revision update, generation unchanged.
	return putDescriptor(tx, dt, key, d, &cur, true, rec.Generation, now), nil
}

// putDescriptor plans the write of a copy of d stamped with now under
// generation g, and its change stamps; when stored, cur is the stored row
// it replaces, whose parts equal to d's the copy shares (copyOver).
func putDescriptor[D location.Cloner[D]](tx *Tx, dt descriptorTable[D], key string, d, cur *D, stored bool, g int64, now time.Time) location.WriteResult {
	tx.PutOwned(dt.table, key, dt.withUpdatedAt(dt.copyOver.copy(d, cur, stored), now), g)
	dt.bump(tx, *d)
	return storedResult(g, now)
}
