package rules

import "github.com/zlink-systems/zlink-etcd/location"

// Typed reads of the location tables for stores and other decisions. Each
// returns a deep copy of the row (made from the shared value,
// Tx.GetShared), its row generation, and whether the row exists; a value of
// the wrong type reads as absent. Keys are the canonical table keys
// (MeshNodeKey, PeerKey, …).

// GetMeshNode reads a mesh-node descriptor.
func GetMeshNode(tx *Tx, key string) (location.MeshNodeDescriptor, int64, bool) {
	d, rec, ok, err := peekRow[location.MeshNodeDescriptor](tx, location.TableMeshNodes, key)
	if err != nil || !ok {
		return location.MeshNodeDescriptor{}, 0, false
	}
	return d.Clone(), rec.Generation, true
}

// GetClientServer reads a client-server descriptor.
func GetClientServer(tx *Tx, key string) (location.ClientServerDescriptor, int64, bool) {
	d, rec, ok, err := peekRow[location.ClientServerDescriptor](tx, location.TableClientServers, key)
	if err != nil || !ok {
		return location.ClientServerDescriptor{}, 0, false
	}
	return d.Clone(), rec.Generation, true
}

// GetFanoutPublisher reads a fanout publisher descriptor.
func GetFanoutPublisher(tx *Tx, key string) (location.FanoutPublisherDescriptor, int64, bool) {
	d, rec, ok, err := peekRow[location.FanoutPublisherDescriptor](tx, location.TableFanoutPublishers, key)
	if err != nil || !ok {
		return location.FanoutPublisherDescriptor{}, 0, false
	}
	return d.Clone(), rec.Generation, true
}

// GetPeer reads a peer row.
func GetPeer(tx *Tx, key string) (location.PeerLocation, int64, bool) {
	p, rec, ok, err := peekRow[location.PeerLocation](tx, location.TablePeers, key)
	if err != nil || !ok {
		return location.PeerLocation{}, 0, false
	}
	return p.Clone(), rec.Generation, true
}

// GetSpot reads a spot row.
func GetSpot(tx *Tx, key string) (location.SpotLocation, int64, bool) {
	s, rec, ok, err := peekRow[location.SpotLocation](tx, location.TableSpots, key)
	if err != nil || !ok {
		return location.SpotLocation{}, 0, false
	}
	return s.Clone(), rec.Generation, true
}

// GetActor reads an actor row.
func GetActor(tx *Tx, key string) (location.ActorLocation, int64, bool) {
	a, rec, ok, err := peekRow[location.ActorLocation](tx, location.TableActors, key)
	if err != nil || !ok {
		return location.ActorLocation{}, 0, false
	}
	return a.Clone(), rec.Generation, true
}

// GetRoute reads a route row.
func GetRoute(tx *Tx, key string) (location.RouteLocation, int64, bool) {
	r, rec, ok, err := peekRow[location.RouteLocation](tx, location.TableRoutes, key)
	if err != nil || !ok {
		return location.RouteLocation{}, 0, false
	}
	return r.Clone(), rec.Generation, true
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
