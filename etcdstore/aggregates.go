package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Aggregates (04 §2.11–2.13) are one transaction each; an aggregate whose
// transaction would exceed the cluster's limits is refused before anything
// is written, with an error wrapping location.ErrTooLarge (decisions E-8,
// Q4).

// PrepareAggregate prepares an aggregate (rules.PrepareAggregate). It
// implements location.AggregateStore.
func (s *Store) PrepareAggregate(ctx context.Context, r location.AggregatePrepareRequest) (location.AggregatePrepareResult, error) {
	prefetch := []string{
		s.tableKey(rules.TableAggregates, rules.AggregateKey(location.AggregateFence{AggregateID: r.AggregateID, AggregateGeneration: r.AggregateGeneration})),
		s.tableKey(location.TableMeshNodes, rules.MeshNodeKey(r.TargetDescriptor)),
		s.layout.OwnerKey(r.TargetOwner.OwnerID),
	}
	for _, p := range r.Participants {
		prefetch = append(prefetch, s.authKey(p.AuthorityKey))
	}
	return decide(ctx, s, "PrepareAggregate", func() error { return location.ValidatePrepareAggregate(r) }, prefetch,
		func(tx *rules.Tx) (location.AggregatePrepareResult, error) { return rules.PrepareAggregate(tx, r) })
}

// CommitAggregate commits a prepared aggregate (rules.CommitAggregate). It
// implements location.AggregateStore.
func (s *Store) CommitAggregate(ctx context.Context, f location.AggregateFence) (location.ResultKind, error) {
	return decide(ctx, s, "CommitAggregate", nil, []string{s.tableKey(rules.TableAggregates, rules.AggregateKey(f))},
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.CommitAggregate(tx, f) })
}

// AbortAggregate aborts a prepared aggregate (rules.AbortAggregate). It
// implements location.AggregateStore.
func (s *Store) AbortAggregate(ctx context.Context, f location.AggregateFence) (location.ResultKind, error) {
	return decide(ctx, s, "AbortAggregate", nil, []string{s.tableKey(rules.TableAggregates, rules.AggregateKey(f))},
		func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortAggregate(tx, f) })
}
