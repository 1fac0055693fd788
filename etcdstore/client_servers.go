package etcdstore

import (
	"context"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// UpdateClientServer writes a client-server descriptor
// (rules.UpdateClientServer). It implements location.ClientServerStore.
func (s *Store) UpdateClientServer(ctx context.Context, d location.ClientServerDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	prefetch := []string{s.tableKey(location.TableClientServers, rules.ClientServerKey(d.Key())), s.layout.OwnerKey(d.OwnerID)}
	return decide(ctx, s, "UpdateClientServer", func() error { return location.ValidateClientServer(d, intent) }, prefetch,
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.UpdateClientServer(tx, d, intent) })
}

// RemoveClientServer removes a client-server descriptor
// (rules.RemoveClientServer). It implements location.ClientServerStore.
func (s *Store) RemoveClientServer(ctx context.Context, k location.ClientServerKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, "RemoveClientServer", nil, []string{s.tableKey(location.TableClientServers, rules.ClientServerKey(k))},
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveClientServer(tx, k, owner) })
}

// ListClientServers lists the channel's descriptors (any owner) in key
// order, paged. It implements location.ClientServerStore.
func (s *Store) ListClientServers(ctx context.Context, channelName string, p location.PageRequest) (location.Page[location.ClientServerDescriptor], error) {
	const op = "ListClientServers"
	if err := checkContext(ctx, op); err != nil {
		return location.Page[location.ClientServerDescriptor]{}, err
	}
	page, err := list(ctx, s, listQuery[location.ClientServerDescriptor]{
		op: op, table: location.TableClientServers, narrow: keys.Segments(channelName), filter: channelName,
		match: func(d *location.ClientServerDescriptor) bool { return d.ChannelName == channelName },
	}, p)
	return pageItems(page, err)
}
