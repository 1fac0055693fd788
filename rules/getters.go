package rules

import "github.com/zlink-systems/zlink-etcd/location"

// Typed reads of the location tables for stores and other decisions. Each
// returns a deep copy of the row (made from the shared value,
// Tx.GetShared), its row generation, and whether the row exists; a value of
// the wrong type reads as absent. Keys are the canonical table keys
// (MeshNodeKey, PeerKey, …).

// getRow is the shared typed read: a deep copy of the row of table t at
// key, its row generation, and whether it exists.
func getRow[R location.Cloner[R]](tx *Tx, t Table, key string) (R, int64, bool) {
	r, rec, ok, err := peekRow[R](tx, t, key)
	if err != nil || !ok {
		var zero R
		return zero, 0, false
	}
	return r.Clone(), rec.Generation, true
}

// GetMeshNode reads a mesh-node descriptor.
func GetMeshNode(tx *Tx, key string) (location.MeshNodeDescriptor, int64, bool) {
	return getRow[location.MeshNodeDescriptor](tx, location.TableMeshNodes, key)
}

// GetClientServer reads a client-server descriptor.
func GetClientServer(tx *Tx, key string) (location.ClientServerDescriptor, int64, bool) {
	return getRow[location.ClientServerDescriptor](tx, location.TableClientServers, key)
}

// GetFanoutPublisher reads a fanout publisher descriptor.
func GetFanoutPublisher(tx *Tx, key string) (location.FanoutPublisherDescriptor, int64, bool) {
	return getRow[location.FanoutPublisherDescriptor](tx, location.TableFanoutPublishers, key)
}

// GetPeer reads a peer row.
func GetPeer(tx *Tx, key string) (location.PeerLocation, int64, bool) {
	return getRow[location.PeerLocation](tx, location.TablePeers, key)
}

// GetSpot reads a spot row.
func GetSpot(tx *Tx, key string) (location.SpotLocation, int64, bool) {
	return getRow[location.SpotLocation](tx, location.TableSpots, key)
}

// GetActor reads an actor row.
func GetActor(tx *Tx, key string) (location.ActorLocation, int64, bool) {
	return getRow[location.ActorLocation](tx, location.TableActors, key)
}

// GetRoute reads a route row.
func GetRoute(tx *Tx, key string) (location.RouteLocation, int64, bool) {
	return getRow[location.RouteLocation](tx, location.TableRoutes, key)
}

// ProjectMeshNode returns a copy of a stored mesh-node descriptor as
// listMeshNodes shows it (02 §2.4): the limits, kinds and stable types of
// its actor, spot and spot-type capacities are the published ones, while
// their active and reserved counts are the authority ledgers' usage at the
// row's lifecycle generation (0 where a ledger bucket is absent). Every other
// field is as stored.
func ProjectMeshNode(tx *Tx, d location.MeshNodeDescriptor) location.MeshNodeDescriptor {
	p := d.Clone()
	node := d.Key()
	usage := func(name, stableType string) LedgerEntry {
		b := Bucket{Descriptor: node, Lifecycle: d.LifecycleGeneration, Name: name, StableType: stableType}
		e, _, _, _ := readRow[LedgerEntry](tx, TableLedger, b.Key())
		return e
	}
	project := func(c *location.PopulationCapacity, u LedgerEntry) { c.Active, c.Reserved = u.Active, u.Reserved }
	project(&p.PopulationCapacity.Actors, usage(BucketActor, ""))
	project(&p.PopulationCapacity.Spots, usage(BucketSpot, ""))
	for i := range p.PopulationCapacity.SpotTypes {
		t := &p.PopulationCapacity.SpotTypes[i]
		project(&t.PopulationCapacity, usage(string(t.ObjectKind), t.StableType))
	}
	return p
}
