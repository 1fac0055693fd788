package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateFanoutPublisher writes a fanout publisher descriptor
// (rules.UpdateFanoutPublisher). It implements location.FanoutPublisherStore.
func (s *Store) UpdateFanoutPublisher(ctx context.Context, d location.FanoutPublisherDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	prefetch := []string{s.tableKey(location.TableFanoutPublishers, rules.FanoutPublisherKey(d.Key())), s.layout.OwnerKey(d.OwnerID)}
	return decide(ctx, s, "UpdateFanoutPublisher", func() error { return location.ValidateFanoutPublisher(d, intent) }, prefetch,
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.UpdateFanoutPublisher(tx, d, intent) })
}

// RemoveFanoutPublisher removes a fanout publisher descriptor
// (rules.RemoveFanoutPublisher). It implements location.FanoutPublisherStore.
func (s *Store) RemoveFanoutPublisher(ctx context.Context, k location.FanoutPublisherKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveFanoutPublisher", nil, []string{s.tableKey(location.TableFanoutPublishers, rules.FanoutPublisherKey(k))},
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveFanoutPublisher(tx, k, owner) })
}

// ListFanoutPublishers lists the channel's descriptors whose owner id holds
// a live lease of any generation (anomaly A-16, reproduced), in key order,
// paged over the live rows only. Owner keys are read at the same revision as
// the rows (03b E-13). It implements location.FanoutPublisherStore.
func (s *Store) ListFanoutPublishers(ctx context.Context, channelName string, p location.PageRequest) (location.Page[location.FanoutPublisherDescriptor], error) {
	const op = "ListFanoutPublishers"
	if err := checkContext(ctx, op); err != nil {
		return location.Page[location.FanoutPublisherDescriptor]{}, err
	}
	page, err := list(ctx, s, listQuery[location.FanoutPublisherDescriptor]{
		op: op, table: location.TableFanoutPublishers, narrow: keys.Segments(channelName), filter: channelName,
		match:     func(d *location.FanoutPublisherDescriptor) bool { return d.ChannelName == channelName },
		ownerLive: func(d *location.FanoutPublisherDescriptor) string { return d.OwnerID },
	}, p)
	return pageItems(page, err)
}

// pageItems turns a list page into the public page.
func pageItems[T any](page listPage[T], err error) (location.Page[T], error) {
	if err != nil {
		return location.Page[T]{}, err
	}
	items := make([]T, 0, len(page.rows))
	for _, r := range page.rows {
		items = append(items, r.row)
	}
	return location.Page[T]{Items: items, ContinuationToken: page.token}, nil
}
