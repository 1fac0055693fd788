package memstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateClientServer writes a client-server descriptor
// (rules.UpdateClientServer).
func (s *Store) UpdateClientServer(ctx context.Context, d location.ClientServerDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	validate := func() error { return location.ValidateClientServer(d, intent) }
	return decide(ctx, s, "UpdateClientServer", validate, func(tx *rules.Tx) (location.WriteResult, error) {
		return rules.UpdateClientServer(tx, d, intent)
	})
}

// RemoveClientServer removes a client-server descriptor
// (rules.RemoveClientServer).
func (s *Store) RemoveClientServer(ctx context.Context, k location.ClientServerKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveClientServer", nil, func(tx *rules.Tx) (location.WriteStatus, error) {
		return rules.RemoveClientServer(tx, k, owner)
	})
}

// ListClientServers lists the channel's descriptors (any owner, live or not)
// in key order, paged.
func (s *Store) ListClientServers(ctx context.Context, channelName string, p location.PageRequest) (location.Page[location.ClientServerDescriptor], error) {
	return decide(ctx, s, "ListClientServers", nil, func(*rules.Tx) (location.Page[location.ClientServerDescriptor], error) {
		rows := rowsOf(s, location.TableClientServers, func(d *location.ClientServerDescriptor) bool { return d.ChannelName == channelName })
		return pageOf(rows, p, location.ClientServerDescriptor.Clone), nil
	})
}
