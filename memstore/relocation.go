package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// ReserveRelocationCapacity reserves capacity on a relocation target. It
// implements location.RelocationCapacityStore.
func (s *Store) ReserveRelocationCapacity(ctx context.Context, r location.RelocationReservationRequest) (location.RelocationReserveResult, error) {
	return decide(ctx, s, "ReserveRelocationCapacity",
		func() error { return location.ValidateRelocationReservation(r) },
		func(tx *rules.Tx) (location.RelocationReserveResult, error) {
			return rules.ReserveRelocationCapacity(tx, r)
		})
}

// AbortRelocationCapacity releases a relocation reservation. It implements
// location.RelocationCapacityStore.
func (s *Store) AbortRelocationCapacity(ctx context.Context, fence location.RelocationFence) (location.ResultKind, error) {
	return decide(ctx, s, "AbortRelocationCapacity", nil,
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortRelocationCapacity(tx, fence) })
}
