package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateFanoutPublisher writes a fanout publisher descriptor
// (rules.UpdateFanoutPublisher).
func (s *Store) UpdateFanoutPublisher(ctx context.Context, d location.FanoutPublisherDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	validate := func() error { return location.ValidateFanoutPublisher(d, intent) }
	return decide(ctx, s, "UpdateFanoutPublisher", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.UpdateFanoutPublisher(tx, d, intent)
	})
}

// RemoveFanoutPublisher removes a fanout publisher descriptor
// (rules.RemoveFanoutPublisher).
func (s *Store) RemoveFanoutPublisher(ctx context.Context, k location.FanoutPublisherKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveFanoutPublisher", nil, func(tx *rules.Tx) (location.WriteStatus, error) {
		return rules.RemoveFanoutPublisher(tx, k, owner)
	})
}

// ListFanoutPublishers lists the channel's descriptors whose owner id holds a
// live lease of any generation (anomaly A-16, reproduced: the row's own
// lease generation is not compared), in key order, paged over the live rows
// only.
func (s *Store) ListFanoutPublishers(ctx context.Context, channelName string, p location.PageRequest) (location.Page[location.FanoutPublisherDescriptor], error) {
	return decide(ctx, s, "ListFanoutPublishers", nil, func(tx *rules.Tx) (location.Page[location.FanoutPublisherDescriptor], error) {
		rows := rowsOf(s, location.TableFanoutPublishers, func(d *location.FanoutPublisherDescriptor) bool {
			if d.ChannelName != channelName {
				return false
			}
			_, live := tx.Source().LiveLease(d.OwnerID)
			return live
		})
		return pageOf(rows, p, location.FanoutPublisherDescriptor.Clone), nil
	})
}
