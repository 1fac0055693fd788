package storecore

import (
	"context"
	"strconv"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// The location tables (02): a write, a removal, a resolve and a list each,
// every one a decision of package rules or a list of one table.

// rowWrite is the write of one location row: the row, the intent, and the
// table's validation, read set and decision (plain functions, so that the
// write's input and its call take one allocation: decideOn's input).
type rowWrite[T any] struct {
	row      T
	intent   location.WriteIntent
	validate func(T, location.WriteIntent) error
	reads    func(*T, location.WriteIntent, *ReadSet)
	run      func(*rules.Tx, T, location.WriteIntent) (location.WriteResult, error)
}

// writeRow runs a location row's write.
func writeRow[T any](ctx context.Context, s *Store, op Op, w rowWrite[T]) (location.WriteResult, error) {
	return decideOn[location.WriteResult](ctx, s, op, w)
}

func (w *rowWrite[T]) check() error { return w.validate(w.row, w.intent) }

func (w *rowWrite[T]) readSet(_ Peek, rs *ReadSet) bool {
	w.reads(&w.row, w.intent, rs)
	return true
}

func (w *rowWrite[T]) decide(tx *rules.Tx) (location.WriteResult, error) {
	return w.run(tx, w.row, w.intent)
}

// UpdateMeshNode writes a mesh-node descriptor (rules.UpdateMeshNode). It
// implements location.MeshNodeStore.
func (s *Store) UpdateMeshNode(ctx context.Context, d location.MeshNodeDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	return writeRow(ctx, s, Op{"UpdateMeshNode", location.TableMeshNodes}, rowWrite[location.MeshNodeDescriptor]{
		row: d, intent: intent, validate: location.ValidateMeshNode, reads: meshNodeReads, run: rules.UpdateMeshNode})
}

// RemoveMeshNode removes a mesh-node descriptor (rules.RemoveMeshNode). No
// validation, as the reference. It implements location.MeshNodeStore.
func (s *Store) RemoveMeshNode(ctx context.Context, k location.MeshNodeKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, Op{"RemoveMeshNode", location.TableMeshNodes}, nil,
		rowReads(location.TableMeshNodes, rules.MeshNodeKey(k)),
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveMeshNode(tx, k, owner) })
}

// ListMeshNodes lists the mesh's descriptors (any owner, live or not) in
// key order, paged, with active and reserved capacity replaced by the
// authority ledgers' usage at the rows' point in time
// (rules.ProjectMeshNode). It implements location.MeshNodeStore.
func (s *Store) ListMeshNodes(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	return list[location.MeshNodeDescriptor](ctx, s, meshNodesQuery(meshName, p, false))
}

// ListMeshNodesShared is ListMeshNodes for a caller that only reads the
// descriptors: they may share their maps, slices and pointers with the
// store's cache (ListQuery.Shared), so the caller must not modify them or
// what they reference. A follower that maps every descriptor of a mesh on
// each change (package autoconnect's MeshNodeSource) lists them without a
// deep copy each.
func (s *Store) ListMeshNodesShared(ctx context.Context, meshName string, p location.PageRequest) (location.Page[location.MeshNodeDescriptor], error) {
	return list[location.MeshNodeDescriptor](ctx, s, meshNodesQuery(meshName, p, true))
}

// meshNodesQuery is the query of ListMeshNodes (shared: ListMeshNodesShared).
func meshNodesQuery(meshName string, p location.PageRequest, shared bool) *ListQuery {
	q := listQuery(Op{"ListMeshNodes", location.TableMeshNodes}, keys.Segments(meshName), meshName,
		func(d *location.MeshNodeDescriptor) bool { return d.MeshName == meshName }, p)
	q.Project = func(tx *rules.Tx, row any) any { return rules.ProjectMeshNode(tx, row.(location.MeshNodeDescriptor)) }
	q.ProjectReads = func(row any) []Ref {
		d := row.(location.MeshNodeDescriptor)
		return projectionReads(&d)
	}
	q.Shared = shared
	return q
}

// UpdateClientServer writes a client-server descriptor
// (rules.UpdateClientServer). It implements location.ClientServerStore.
func (s *Store) UpdateClientServer(ctx context.Context, d location.ClientServerDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	return writeRow(ctx, s, Op{"UpdateClientServer", location.TableClientServers}, rowWrite[location.ClientServerDescriptor]{
		row: d, intent: intent, validate: location.ValidateClientServer, run: rules.UpdateClientServer,
		reads: func(d *location.ClientServerDescriptor, _ location.WriteIntent, rs *ReadSet) {
			rowAndOwner(rs, location.TableClientServers, rules.ClientServerKey(d.Key()), d.OwnerID)
		}})
}

// RemoveClientServer removes a client-server descriptor
// (rules.RemoveClientServer). No validation, as the reference. It
// implements location.ClientServerStore.
func (s *Store) RemoveClientServer(ctx context.Context, k location.ClientServerKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, Op{"RemoveClientServer", location.TableClientServers}, nil,
		rowReads(location.TableClientServers, rules.ClientServerKey(k)),
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveClientServer(tx, k, owner) })
}

// ListClientServers lists the channel's descriptors (any owner, live or
// not) in key order, paged. It implements location.ClientServerStore.
func (s *Store) ListClientServers(ctx context.Context, channelName string, p location.PageRequest) (location.Page[location.ClientServerDescriptor], error) {
	return list[location.ClientServerDescriptor](ctx, s, listQuery(Op{"ListClientServers", location.TableClientServers},
		keys.Segments(channelName), channelName,
		func(d *location.ClientServerDescriptor) bool { return d.ChannelName == channelName }, p))
}

// UpdateFanoutPublisher writes a fanout publisher descriptor
// (rules.UpdateFanoutPublisher). It implements location.FanoutPublisherStore.
func (s *Store) UpdateFanoutPublisher(ctx context.Context, d location.FanoutPublisherDescriptor, intent location.WriteIntent) (location.WriteResult, error) {
	return writeRow(ctx, s, Op{"UpdateFanoutPublisher", location.TableFanoutPublishers}, rowWrite[location.FanoutPublisherDescriptor]{
		row: d, intent: intent, validate: location.ValidateFanoutPublisher, run: rules.UpdateFanoutPublisher,
		reads: func(d *location.FanoutPublisherDescriptor, _ location.WriteIntent, rs *ReadSet) {
			rowAndOwner(rs, location.TableFanoutPublishers, rules.FanoutPublisherKey(d.Key()), d.OwnerID)
		}})
}

// RemoveFanoutPublisher removes a fanout publisher descriptor
// (rules.RemoveFanoutPublisher). No validation, as the reference. It
// implements location.FanoutPublisherStore.
func (s *Store) RemoveFanoutPublisher(ctx context.Context, k location.FanoutPublisherKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, Op{"RemoveFanoutPublisher", location.TableFanoutPublishers}, nil,
		rowReads(location.TableFanoutPublishers, rules.FanoutPublisherKey(k)),
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveFanoutPublisher(tx, k, owner) })
}

// ListFanoutPublishers lists the channel's descriptors whose owner id holds
// a live lease of any generation (anomaly A-16, reproduced: the row's own
// lease generation is not compared), in key order, paged over the live rows
// only; liveness is read at the rows' point in time (03b E-13). It
// implements location.FanoutPublisherStore.
func (s *Store) ListFanoutPublishers(ctx context.Context, channelName string, p location.PageRequest) (location.Page[location.FanoutPublisherDescriptor], error) {
	q := listQuery(Op{"ListFanoutPublishers", location.TableFanoutPublishers}, keys.Segments(channelName), channelName,
		func(d *location.FanoutPublisherDescriptor) bool { return d.ChannelName == channelName }, p)
	q.LiveOwner = func(row any) string { return row.(location.FanoutPublisherDescriptor).OwnerID }
	return list[location.FanoutPublisherDescriptor](ctx, s, q)
}

// UpdatePeer writes a peer row (rules.UpdatePeer). It implements
// location.PeerStore.
func (s *Store) UpdatePeer(ctx context.Context, p location.PeerLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeRow(ctx, s, Op{"UpdatePeer", location.TablePeers}, rowWrite[location.PeerLocation]{
		row: p, intent: intent, validate: location.ValidatePeer, run: rules.UpdatePeer,
		reads: func(p *location.PeerLocation, intent location.WriteIntent, rs *ReadSet) {
			ownerRow(rs, location.TablePeers, rules.PeerKey(p.Key()), p.OwnerID, intent)
		}})
}

// RemovePeer removes a peer row (rules.RemovePeer). It implements
// location.PeerStore.
func (s *Store) RemovePeer(ctx context.Context, k location.PeerKey, owner location.OwnerToken) (location.WriteResult, error) {
	return decide(ctx, s, Op{"RemovePeer", location.TablePeers},
		func() error { return location.ValidatePeerKey(k) },
		rowReads(location.TablePeers, rules.PeerKey(k)),
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.RemovePeer(tx, k, owner) })
}

// ListPeers returns every peer row matching f (any owner, live or not),
// unpaged, in key order. A filter that fixes the auto-connect type (then
// the mesh, then the role) narrows the key range. It implements
// location.PeerStore.
func (s *Store) ListPeers(ctx context.Context, f location.PeerFilter) ([]location.PeerLocation, error) {
	page, err := list[location.PeerLocation](ctx, s, listQuery(Op{"ListPeers", location.TablePeers}, peerNarrow(&f), f,
		func(p *location.PeerLocation) bool { return rules.MatchPeer(p, &f) }, location.PageRequest{}))
	return page.Items, err
}

// peerNarrow is the key prefix a peer filter fixes: the canonical type name,
// then the mesh, then the canonical role name, then the routing id's hex
// (rules.PeerKey), as far as they are given. The rid narrows to one key: a
// row matches a filter's rid only when it has that rid, and a row with a
// rid is keyed by it (a row without one, keyed by its endpoint, never
// matches).
func peerNarrow(f *location.PeerFilter) string {
	if f.AutoConnectType == nil {
		return ""
	}
	typeName, err := f.AutoConnectType.CanonicalName()
	if err != nil {
		return ""
	}
	narrow := keys.Segments(typeName)
	if f.MeshName == nil {
		return narrow
	}
	narrow += keys.Segments(*f.MeshName)
	if f.Role == nil {
		return narrow
	}
	role, err := f.Role.CanonicalName()
	if err != nil {
		return narrow
	}
	narrow += keys.Segments(role)
	if f.NodeRID == nil {
		return narrow
	}
	return narrow + keys.Segments(f.NodeRID.Hex())
}

// UpdateSpot writes a spot row (rules.UpdateSpot). It implements
// location.SpotStore.
func (s *Store) UpdateSpot(ctx context.Context, row location.SpotLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeRow(ctx, s, Op{"UpdateSpot", location.TableSpots}, rowWrite[location.SpotLocation]{
		row: row, intent: intent, validate: location.ValidateSpot, run: rules.UpdateSpot,
		reads: func(r *location.SpotLocation, _ location.WriteIntent, rs *ReadSet) {
			rowAndOwner(rs, location.TableSpots, rules.SpotKey(r.Key()), r.OwnerID)
		}})
}

// RemoveSpot removes a spot row (rules.RemoveSpot). It implements
// location.SpotStore.
func (s *Store) RemoveSpot(ctx context.Context, k location.SpotKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, Op{"RemoveSpot", location.TableSpots},
		func() error { return location.ValidateSpotKey(k) },
		rowReads(location.TableSpots, rules.SpotKey(k)),
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveSpot(tx, k, owner) })
}

// ResolveSpot returns a copy of the spot row (any owner, live or not), or
// nil. It implements location.SpotStore.
func (s *Store) ResolveSpot(ctx context.Context, k location.SpotKey) (*location.SpotLocation, error) {
	return decide(ctx, s, Op{"ResolveSpot", location.TableSpots},
		func() error { return location.ValidateSpotKey(k) },
		rowReads(location.TableSpots, rules.SpotKey(k)),
		func(tx *rules.Tx) (*location.SpotLocation, error) {
			return resolved(rules.GetSpot(tx, rules.SpotKey(k))), nil
		})
}

// ListSpots lists the spot rows matching f (any owner, live or not) in key
// order, paged; a mesh in the filter narrows the key range. It implements
// location.SpotStore.
func (s *Store) ListSpots(ctx context.Context, f location.SpotFilter, p location.PageRequest) (location.Page[location.SpotLocation], error) {
	narrow := ""
	if f.MeshName != nil {
		narrow = keys.Segments(*f.MeshName)
	}
	return list[location.SpotLocation](ctx, s, listQuery(Op{"ListSpots", location.TableSpots}, narrow, f,
		func(row *location.SpotLocation) bool { return rules.MatchSpot(row, &f) }, p))
}

// UpdateActor writes an actor row (rules.UpdateActor). It implements
// location.ActorStore.
func (s *Store) UpdateActor(ctx context.Context, a location.ActorLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeRow(ctx, s, Op{"UpdateActor", location.TableActors}, rowWrite[location.ActorLocation]{
		row: a, intent: intent, validate: location.ValidateActor, run: rules.UpdateActor,
		reads: func(a *location.ActorLocation, _ location.WriteIntent, rs *ReadSet) {
			rowAndOwner(rs, location.TableActors, rules.ActorKey(a.Key()), a.OwnerID)
		}})
}

// RemoveActor removes an actor row (rules.RemoveActor). It implements
// location.ActorStore.
func (s *Store) RemoveActor(ctx context.Context, k location.ActorKey, owner location.OwnerToken) (location.WriteStatus, error) {
	return decide(ctx, s, Op{"RemoveActor", location.TableActors},
		func() error { return location.ValidateActorKey(k) },
		rowReads(location.TableActors, rules.ActorKey(k)),
		func(tx *rules.Tx) (location.WriteStatus, error) { return rules.RemoveActor(tx, k, owner) })
}

// ResolveActor returns a copy of the actor row (any owner, live or not), or
// nil. It implements location.ActorStore.
func (s *Store) ResolveActor(ctx context.Context, k location.ActorKey) (*location.ActorLocation, error) {
	return decide(ctx, s, Op{"ResolveActor", location.TableActors},
		func() error { return location.ValidateActorKey(k) },
		rowReads(location.TableActors, rules.ActorKey(k)),
		func(tx *rules.Tx) (*location.ActorLocation, error) {
			return resolved(rules.GetActor(tx, rules.ActorKey(k))), nil
		})
}

// ListActors lists the actor rows of every mesh matching f (any owner, live
// or not) in key order, paged (the filter has no mesh: the whole table is
// read, 03b E-12). It implements location.ActorStore.
func (s *Store) ListActors(ctx context.Context, f location.ActorFilter, p location.PageRequest) (location.Page[location.ActorLocation], error) {
	return list[location.ActorLocation](ctx, s, listQuery(Op{"ListActors", location.TableActors}, "", f,
		func(a *location.ActorLocation) bool { return rules.MatchActor(a, &f) }, p))
}

// UpdateRoute writes a route row (rules.UpdateRoute). It implements
// location.RouteStore.
func (s *Store) UpdateRoute(ctx context.Context, r location.RouteLocation, intent location.WriteIntent) (location.WriteResult, error) {
	return writeRow(ctx, s, Op{"UpdateRoute", location.TableRoutes}, rowWrite[location.RouteLocation]{
		row: r, intent: intent, validate: location.ValidateRoute, run: rules.UpdateRoute,
		reads: func(r *location.RouteLocation, intent location.WriteIntent, rs *ReadSet) {
			ownerRow(rs, location.TableRoutes, rules.RouteKey(r.Key()), r.OwnerID, intent)
		}})
}

// RemoveRoute removes a route row (rules.RemoveRoute). It implements
// location.RouteStore.
func (s *Store) RemoveRoute(ctx context.Context, k location.RouteKey, owner location.OwnerToken) (location.WriteResult, error) {
	return decide(ctx, s, Op{"RemoveRoute", location.TableRoutes},
		func() error { return location.ValidateRouteKey(k) },
		rowReads(location.TableRoutes, rules.RouteKey(k)),
		func(tx *rules.Tx) (location.WriteResult, error) { return rules.RemoveRoute(tx, k, owner) })
}

// ResolveRoute returns a copy of the route row (any owner, live or not), or
// nil. It implements location.RouteStore.
func (s *Store) ResolveRoute(ctx context.Context, k location.RouteKey) (*location.RouteLocation, error) {
	return decide(ctx, s, Op{"ResolveRoute", location.TableRoutes},
		func() error { return location.ValidateRouteKey(k) },
		rowReads(location.TableRoutes, rules.RouteKey(k)),
		func(tx *rules.Tx) (*location.RouteLocation, error) {
			return resolved(rules.GetRoute(tx, rules.RouteKey(k))), nil
		})
}

// ListRoutes lists the route rows matching f (any owner, live or not) in
// key order, paged; a route kind in the filter narrows the key range. It
// implements location.RouteStore.
func (s *Store) ListRoutes(ctx context.Context, f location.RouteFilter, p location.PageRequest) (location.Page[location.RouteLocation], error) {
	narrow := ""
	if f.RouteKind != nil {
		narrow = keys.Segments(strconv.Itoa(int(*f.RouteKind)))
	}
	return list[location.RouteLocation](ctx, s, listQuery(Op{"ListRoutes", location.TableRoutes}, narrow, f,
		func(r *location.RouteLocation) bool { return rules.MatchRoute(r, &f) }, p))
}
