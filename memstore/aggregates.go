package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// PrepareAggregate prepares an aggregate move. It implements
// location.AggregateStore.
func (s *Store) PrepareAggregate(ctx context.Context, r location.AggregatePrepareRequest) (location.AggregatePrepareResult, error) {
	return decide(ctx, s, "PrepareAggregate",
		func() error { return location.ValidatePrepareAggregate(r) },
		func(tx *rules.Tx) (location.AggregatePrepareResult, error) { return rules.PrepareAggregate(tx, r) })
}

// CommitAggregate commits a prepared aggregate. It implements
// location.AggregateStore.
func (s *Store) CommitAggregate(ctx context.Context, f location.AggregateFence) (location.ResultKind, error) {
	return decide(ctx, s, "CommitAggregate", nil,
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.CommitAggregate(tx, f) })
}

// AbortAggregate aborts a prepared aggregate. It implements
// location.AggregateStore.
func (s *Store) AbortAggregate(ctx context.Context, f location.AggregateFence) (location.ResultKind, error) {
	return decide(ctx, s, "AbortAggregate", nil,
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortAggregate(tx, f) })
}
