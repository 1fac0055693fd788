package rules

import "github.com/zlink-systems/zlink-etcd/location"

// placementAvailable is the admission rule (04 §1.6.4) with the location
// store's capacity hook: the mesh-node descriptor (looked up by mesh and RID
// only, D-27) must exist, and for the overall actor and spot limits and, when
// the request has a spot type, the limit of the matching offered spot type,
// active + reserved + requested must not exceed the limit. A limit of 0 is
// unlimited for every limit (decision D-18 fixed); a spot type the node does
// not offer is refused.
func placementAvailable(tx *Tx, alloc location.PlacementAllocation) bool {
	desc, ok := valueAt[location.MeshNodeDescriptor](tx, location.TableMeshNodes, MeshNodeKey(alloc.Descriptor))
	if !ok {
		return false
	}
	d, lc, req := alloc.Descriptor, alloc.DescriptorLifecycleGeneration, alloc.Capacity
	pop := desc.PopulationCapacity
	actors := LedgerUsage(tx, Bucket{Descriptor: d, Lifecycle: lc, Name: BucketActor})
	spots := LedgerUsage(tx, Bucket{Descriptor: d, Lifecycle: lc, Name: BucketSpot})
	if !withinLimit(pop.Actors.Limit, actors, req.Actors) || !withinLimit(pop.Spots.Limit, spots, req.Spots) {
		return false
	}
	if req.SpotType == nil {
		return true
	}
	offered, ok := offeredSpotType(pop.SpotTypes, req.SpotType.ObjectKind, req.SpotType.StableType)
	if !ok {
		return false
	}
	typed := LedgerUsage(tx, typedBucket(d, lc, *req.SpotType))
	return withinLimit(offered.Limit, typed, req.SpotType.Count)
}

// withinLimit: limit 0 is unlimited (D-18 fixed); otherwise usage plus the
// request must fit.
func withinLimit(limit int64, used LedgerEntry, requested int64) bool {
	return limit == 0 || used.Active+used.Reserved+requested <= limit
}

// offeredSpotType finds the first spot-type capacity a node offers for the
// kind and stable type.
func offeredSpotType(types []location.SpotTypeCapacity, kind location.ObjectKind, stableType string) (location.SpotTypeCapacity, bool) {
	for _, t := range types {
		if t.ObjectKind == kind && t.StableType == stableType {
			return t, true
		}
	}
	return location.SpotTypeCapacity{}, false
}
