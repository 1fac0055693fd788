package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// ReserveRelocationCapacity reserves target capacity for a relocation
// (rules.ReserveRelocationCapacity): the authority record is compared, not
// written, so that the later newOwner exchange presents the same version.
// It implements location.RelocationCapacityStore.
func (s *Store) ReserveRelocationCapacity(ctx context.Context, r location.RelocationReservationRequest) (location.RelocationReserveResult, error) {
	prefetch := []string{
		s.tableKey(rules.TableRelocations, r.ReservationID),
		s.authKey(r.AuthorityKey),
		s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(r.TargetDescriptor)),
		s.layout.OwnerKey(r.TargetOwner.OwnerID),
	}
	return decide(ctx, s, "ReserveRelocationCapacity", func() error { return location.ValidateRelocationReservation(r) }, prefetch,
		func(tx *rules.Tx) (location.RelocationReserveResult, error) {
			return rules.ReserveRelocationCapacity(tx, r)
		})
}

// AbortRelocationCapacity releases a relocation reservation
// (rules.AbortRelocationCapacity). It implements
// location.RelocationCapacityStore.
func (s *Store) AbortRelocationCapacity(ctx context.Context, fence location.RelocationFence) (location.ResultKind, error) {
	return decide(ctx, s, "AbortRelocationCapacity", nil, []string{s.tableKey(rules.TableRelocations, string(fence))},
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortRelocationCapacity(tx, fence) })
}
