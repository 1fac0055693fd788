package conformance

import (
	"context"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Random operations on the row tables: peers, spots, actors and routes.

// peerNS is the generation namespace of a peer row: its identity is the
// node RID when present, else the endpoint.
func peerNS(k location.PeerKey) string {
	identity := ""
	switch {
	case k.NodeRID != nil:
		identity = "rid:" + k.NodeRID.Hex()
	case k.Endpoint != nil:
		identity = "endpoint:" + *k.Endpoint
	}
	return NSRowGeneration("peers", fmt.Sprintf("%d/%s/%d/%s", k.AutoConnectType, k.MeshName, k.Role, identity))
}

// routeNS is the generation namespace of a route row.
func routeNS(k location.RouteKey) string {
	return NSRowGeneration("routes", fmt.Sprintf("%d/%s", k.RouteKind, k.RouteKey))
}

// spotNS is the generation namespace of a spot row.
func spotNS(k location.SpotKey) string { return NSRowGeneration("spots", k.MeshName+"/"+k.SpotID) }

// actorNS is the generation namespace of an actor row.
func actorNS(k location.ActorKey) string { return NSRowGeneration("actors", k.MeshName+"/"+k.ActorID) }

// peerSpec is a symbolic peer row.
type peerSpec struct {
	typ, mesh, role int
	// identity: 0, 1 node RIDs; 2, 3 endpoints without a RID.
	identity int
	endpoint int
	weight   int64
	draining bool
	owner    int
	gen      rowGenRef
	corrupt  int
}

// String renders the spec.
func (s peerSpec) String() string {
	out := fmt.Sprintf("PEER{type=%d mesh=%s role=%s id=%d ep=%d weight=%d owner=%s gen=%s", s.typ, randomMeshes()[s.mesh], peerRole(s.role), s.identity, s.endpoint, s.weight, randomOwners()[s.owner], s.gen)
	if s.draining {
		out += " draining"
	}
	return out + invalidMark(s.corrupt) + "}"
}

// peerRole is the role of a role choice.
func peerRole(i int) location.PeerRole {
	return []location.PeerRole{location.PeerRoleRouter, location.PeerRoleDealer, location.PeerRolePub}[i]
}

// peerSpec draws a peer spec.
func (g *generator) peerSpec() peerSpec {
	s := peerSpec{
		typ:      1 + g.n(2),
		mesh:     g.n(2),
		role:     g.n(3),
		identity: g.n(4),
		endpoint: g.n(2),
		weight:   pick[int64](g, 0, 100),
		draining: g.chance(0.2),
		owner:    g.ownerIndex(),
		gen:      g.rowGenRef(),
	}
	if g.bad() {
		s.corrupt = 1 + g.n(3)
	}
	return s
}

// key returns the model-side key (corrupted like the row).
func (s peerSpec) key() location.PeerKey {
	k := location.PeerKey{AutoConnectType: location.AutoConnectType(s.typ), MeshName: randomMeshes()[s.mesh], Role: peerRole(s.role)}
	if s.identity < 2 {
		rid := randomNodeRIDs()[s.identity]
		k.NodeRID = &rid
	}
	ep := fmt.Sprintf("tcp://10.1.%d.%d:5001", s.identity, s.endpoint)
	if s.identity >= 2 {
		ep = fmt.Sprintf("tcp://10.1.%d.0:5001", s.identity)
	}
	k.Endpoint = &ep
	switch s.corrupt {
	case 1:
		k.AutoConnectType = 0
	case 2:
		k.Role = 1
	case 3:
		empty := location.RoutingID("")
		k.NodeRID = &empty
	}
	return k
}

// build returns the model-side row with the generation resolved.
func (s peerSpec) build(k *knowledge) location.PeerLocation {
	key := s.key()
	p := location.PeerLocation{
		AutoConnectType: key.AutoConnectType,
		MeshName:        key.MeshName,
		NodeRID:         key.NodeRID,
		Role:            key.Role,
		Endpoint:        *key.Endpoint,
		Weight:          s.weight,
		Draining:        s.draining,
		Value:           7,
		Metadata:        map[string]string{"route-endpoint": "tcp://127.0.0.1:6001"},
		Capabilities:    []string{"router"},
		OwnerID:         randomOwners()[s.owner],
	}
	p.Generation = s.gen.resolve(k, peerNS(p.Key()))
	return p
}

// peerTable is the peer table.
func peerTable() rowTable[location.PeerLocation, location.PeerKey] {
	return rowTable[location.PeerLocation, location.PeerKey]{name: "Peer", key: (*location.PeerLocation).Key, ns: peerNS, rowGen: true,
		owner: func(r *location.PeerLocation) (*string, *int64) { return &r.OwnerID, &r.Generation },
		last:  func(k *knowledge) **location.PeerLocation { return &k.lastPeer }, update: location.Store.UpdatePeer}
}

func genUpdatePeer(g *generator) randomOp { return peerTable().updateOp(g.peerSpec(), g.intent()) }

func genRemovePeer(g *generator) randomOp {
	spec := g.peerSpec()
	spec.owner = g.ownerIndex()
	return peerTable().removeGenOp(spec.key(), spec.owner, spec.gen, g.chance(0.5), func() string { return fmt.Sprintf("key of %s", spec) }, location.Store.RemovePeer)
}

// peerFilterSpec is a symbolic peer filter; -1 leaves a field out.
type peerFilterSpec struct{ typ, mesh, role, rid, endpoint int }

// String renders the filter.
func (f peerFilterSpec) String() string {
	return fmt.Sprintf("filter{type=%d mesh=%d role=%d rid=%d ep=%d}", f.typ, f.mesh, f.role, f.rid, f.endpoint)
}

// build returns the filter.
func (f peerFilterSpec) build() location.PeerFilter {
	return location.PeerFilter{
		AutoConnectType: optionalPick[location.AutoConnectType](f.typ, 1, 2),
		MeshName:        optionalPick(f.mesh, randomMeshes()...),
		Role:            optionalPick(f.role, location.PeerRoleRouter, location.PeerRoleDealer, location.PeerRolePub),
		NodeRID:         optionalPick(f.rid, randomNodeRIDs()...),
		Endpoint:        optionalPick(f.endpoint, "tcp://10.1.2.0:5001", "tcp://10.1.3.0:5001"),
	}
}

// optIndex draws -1 (absent) most of the time, else 0..n-1.
func (g *generator) optIndex(n int, pAbsent float64) int {
	if g.chance(pAbsent) {
		return -1
	}
	return g.n(n)
}

func genListPeers(g *generator) randomOp {
	return listPeersOp(peerFilterSpec{typ: g.optIndex(2, 0.7), mesh: g.optIndex(2, 0.6), role: g.optIndex(3, 0.8), rid: g.optIndex(2, 0.85), endpoint: g.optIndex(2, 0.9)})
}

// listPeersOp is ListPeers(filter): every row, in key order.
func listPeersOp(f peerFilterSpec) randomOp {
	return randomOp{name: "ListPeers", args: func() string { return f.String() }, run: func(x *runState) {
		filter := f.build()
		x.inputs(filter)
		m, s, ok := both(x, func(sd side) ([]location.PeerLocation, error) { return sd.store.ListPeers(x.ctx, filter) })
		if !ok || !x.count("rows", len(m), len(s)) {
			return
		}
		for i := range m {
			peerTable().compare(x, fmt.Sprintf("[%d]", i), m[i], s[i])
		}
	}}
}

// leasedTable is a row table whose rows carry their owner's lease token
// and resolve by key (spots, actors): its update, remove and resolve
// operations are written once (genUpdate, genRemove, genResolve).
type leasedTable[R, K any, S leasedSpec[R, K]] struct {
	rows rowTable[R, K]
	// draw draws a spec.
	draw    func(*generator) S
	remove  func(location.Store, context.Context, K, location.OwnerToken) (location.WriteStatus, error)
	resolve func(location.Store, context.Context, K) (*R, error)
}

// leasedSpec is the spec of a row of a leasedTable.
type leasedSpec[R, K any] interface {
	rowSpec[R]
	key() K
	owner() tokenRef
}

// genUpdate is Update<table>(row, intent).
func (t leasedTable[R, K, S]) genUpdate(g *generator) randomOp {
	return t.rows.updateOp(t.draw(g), g.intent())
}

// genRemove is Remove<table>(key, token).
func (t leasedTable[R, K, S]) genRemove(g *generator) randomOp {
	spec := t.draw(g)
	args := func() string { return fmt.Sprintf("key of %s, %s", spec, spec.owner()) }
	return t.rows.removeOp(spec.key(), spec.owner(), g.chance(0.5), args, t.remove)
}

// genResolve is Resolve<table>(key).
func (t leasedTable[R, K, S]) genResolve(g *generator) randomOp {
	spec := t.draw(g)
	return t.rows.resolveOp(spec.key(), g.chance(0.5), func() string { return fmt.Sprintf("key of %s", spec) }, t.resolve)
}

// spotSpec is a symbolic spot row.
type spotSpec struct {
	mesh, id, typ, node, kind int
	spotGen                   int64
	token                     tokenRef
	corrupt                   int
}

// String renders the spec.
func (s spotSpec) String() string {
	k := s.key()
	return fmt.Sprintf("SPOT{%s/%s type=%d node=%d kind=%s sgen=%d owner=%s%s}", k.MeshName, k.SpotID, s.typ, s.node, spotKinds()[s.kind], s.spotGen, s.token, invalidMark(s.corrupt))
}

// randomNodeRIDs are the node RIDs rows name.
func randomNodeRIDs() []location.RoutingID { return []location.RoutingID{"node-1", "node-2"} }

// spotKinds are the spot kinds rows carry.
func spotKinds() []location.SpotKind {
	return []location.SpotKind{location.SpotUser, location.SpotInstance, location.SpotEntry}
}

// spotSpec draws a spot spec.
func (g *generator) spotSpec() spotSpec {
	s := spotSpec{mesh: g.n(2), id: g.n(3), typ: g.n(2), node: g.n(2), kind: g.n(3), spotGen: pick[int64](g, 1, 2), token: g.tokenRef()}
	if g.bad() {
		s.corrupt = 1 + g.n(2)
	}
	return s
}

// key returns the model-side key (corrupted like the row).
func (s spotSpec) key() location.SpotKey {
	k := location.SpotKey{MeshName: randomMeshes()[s.mesh], SpotID: []string{"s1", "s2", "S3"}[s.id]}
	switch s.corrupt {
	case 1:
		k.SpotID = ""
	case 2:
		k.MeshName = "\xff"
	}
	return k
}

// build returns the model-side row.
func (s spotSpec) build(k *knowledge) location.SpotLocation {
	key := s.key()
	tok := s.token.resolve(k)
	return location.SpotLocation{
		MeshName:            key.MeshName,
		SpotID:              key.SpotID,
		SpotGeneration:      s.spotGen,
		SpotType:            []string{"game", "lobby"}[s.typ],
		OwnerNodeRID:        randomNodeRIDs()[s.node],
		OwnerNodeGeneration: 1,
		SpotKind:            spotKinds()[s.kind],
		OwnerID:             tok.OwnerID,
		LeaseGeneration:     tok.LeaseGeneration,
	}
}

// owner is the spec's owner token.
func (s spotSpec) owner() tokenRef { return s.token }

// spotTable is the spot table.
func spotTable() leasedTable[location.SpotLocation, location.SpotKey, spotSpec] {
	return leasedTable[location.SpotLocation, location.SpotKey, spotSpec]{
		rows: rowTable[location.SpotLocation, location.SpotKey]{name: "Spot", key: (*location.SpotLocation).Key, ns: spotNS,
			owner: func(r *location.SpotLocation) (*string, *int64) { return &r.OwnerID, &r.LeaseGeneration },
			last:  func(k *knowledge) **location.SpotLocation { return &k.lastSpot }, update: location.Store.UpdateSpot},
		draw: (*generator).spotSpec, remove: location.Store.RemoveSpot, resolve: location.Store.ResolveSpot,
	}
}

// spotFilterSpec is a symbolic spot filter; -1 leaves a field out.
type spotFilterSpec struct{ mesh, typ, node, kind int }

// build returns the filter.
func (f spotFilterSpec) build() location.SpotFilter {
	return location.SpotFilter{
		MeshName: optionalPick(f.mesh, randomMeshes()...),
		SpotType: optionalPick(f.typ, "game", "lobby"),
		NodeRID:  optionalPick(f.node, randomNodeRIDs()...),
		SpotKind: optionalPick(f.kind, spotKinds()...),
	}
}

func genListSpots(g *generator) randomOp {
	f := spotFilterSpec{mesh: g.optIndex(2, 0.5), typ: g.optIndex(2, 0.8), node: g.optIndex(2, 0.8), kind: g.optIndex(3, 0.8)}
	return listOp(spotTable().rows, fmt.Sprintf("filter%+v", f), f.build, g.pageSpec(), location.Store.ListSpots)
}

// actorSpec is a symbolic actor row.
type actorSpec struct {
	mesh, id, typ, node, kind, spot int
	epoch                           int64
	token                           tokenRef
	corrupt                         int
}

// String renders the spec.
func (s actorSpec) String() string {
	k := s.key()
	return fmt.Sprintf("ACTOR{%s/%s type=%d node=%d kind=%s spot=%d epoch=%d owner=%s%s}", k.MeshName, k.ActorID, s.typ, s.node, spotKinds()[s.kind], s.spot, s.epoch, s.token, invalidMark(s.corrupt))
}

// actorSpec draws an actor spec.
func (g *generator) actorSpec() actorSpec {
	s := actorSpec{mesh: g.n(2), id: g.n(3), typ: g.n(2), node: g.n(2), kind: g.n(3), spot: g.n(2), epoch: pick[int64](g, 1, 2), token: g.tokenRef()}
	if g.bad() {
		s.corrupt = 1
	}
	return s
}

// key returns the model-side key (corrupted like the row).
func (s actorSpec) key() location.ActorKey {
	k := location.ActorKey{MeshName: randomMeshes()[s.mesh], ActorID: []string{"x1", "x2", "x3"}[s.id]}
	if s.corrupt == 1 {
		k.ActorID = "x\xff"
	}
	return k
}

// build returns the model-side row.
func (s actorSpec) build(k *knowledge) location.ActorLocation {
	key := s.key()
	tok := s.token.resolve(k)
	node := randomNodeRIDs()[s.node]
	return location.ActorLocation{
		MeshName:            key.MeshName,
		ActorID:             key.ActorID,
		ActorType:           []string{"player", "npc"}[s.typ],
		ActorRef:            location.ActorRef{ActorID: key.ActorID, ObjectGeneration: s.epoch, MeshName: key.MeshName, NodeRID: node},
		OwnerNodeRID:        node,
		OwnerNodeGeneration: 1,
		SpotKind:            spotKinds()[s.kind],
		SpotID:              []string{"s1", "node-1"}[s.spot],
		SpotGeneration:      1,
		MembershipEpoch:     s.epoch,
		OwnerID:             tok.OwnerID,
		LeaseGeneration:     tok.LeaseGeneration,
	}
}

// owner is the spec's owner token.
func (s actorSpec) owner() tokenRef { return s.token }

// actorTable is the actor table.
func actorTable() leasedTable[location.ActorLocation, location.ActorKey, actorSpec] {
	return leasedTable[location.ActorLocation, location.ActorKey, actorSpec]{
		rows: rowTable[location.ActorLocation, location.ActorKey]{name: "Actor", key: (*location.ActorLocation).Key, ns: actorNS,
			owner: func(r *location.ActorLocation) (*string, *int64) { return &r.OwnerID, &r.LeaseGeneration },
			last:  func(k *knowledge) **location.ActorLocation { return &k.lastActor }, update: location.Store.UpdateActor},
		draw: (*generator).actorSpec, remove: location.Store.RemoveActor, resolve: location.Store.ResolveActor,
	}
}

// actorFilterSpec is a symbolic actor filter; -1 leaves a field out.
type actorFilterSpec struct{ typ, node, spot, kind int }

// build returns the filter.
func (f actorFilterSpec) build() location.ActorFilter {
	return location.ActorFilter{
		ActorType:    optionalPick(f.typ, "player", "npc"),
		NodeRID:      optionalPick(f.node, randomNodeRIDs()...),
		SpotID:       optionalPick(f.spot, "s1", "node-1"),
		LocationKind: optionalPick(f.kind, spotKinds()...),
	}
}

func genListActors(g *generator) randomOp {
	f := actorFilterSpec{typ: g.optIndex(2, 0.7), node: g.optIndex(2, 0.8), spot: g.optIndex(2, 0.8), kind: g.optIndex(3, 0.8)}
	return listOp(actorTable().rows, fmt.Sprintf("filter%+v", f), f.build, g.pageSpec(), location.Store.ListActors)
}

// routeSpec is a symbolic route row.
type routeSpec struct {
	kind, key, node, owner, value int
	gen                           rowGenRef
	corrupt                       int
}

// String renders the spec.
func (s routeSpec) String() string {
	k := s.routeKey()
	return fmt.Sprintf("ROUTE{%d/%s node=%d owner=%s value=%d gen=%s%s}", k.RouteKind, k.RouteKey, s.node, randomOwners()[s.owner], s.value, s.gen, invalidMark(s.corrupt))
}

// routeSpec draws a route spec.
func (g *generator) routeSpec() routeSpec {
	s := routeSpec{kind: g.n(3), key: g.n(2), node: g.n(2), owner: g.ownerIndex(), value: g.n(2), gen: g.rowGenRef()}
	if g.bad() {
		s.corrupt = 1
	}
	return s
}

// routeKey returns the model-side key (corrupted like the row).
func (s routeSpec) routeKey() location.RouteKey {
	k := location.RouteKey{RouteKind: location.RouteKind(1 + s.kind), RouteKey: []string{"r1", "r2"}[s.key]}
	if s.corrupt == 1 {
		k.RouteKey = "r\xff"
	}
	return k
}

// build returns the model-side row with the generation resolved.
func (s routeSpec) build(k *knowledge) location.RouteLocation {
	key := s.routeKey()
	r := location.RouteLocation{
		RouteKind:    key.RouteKind,
		RouteKey:     key.RouteKey,
		OwnerNodeRID: randomNodeRIDs()[s.node],
		OwnerID:      randomOwners()[s.owner],
		Value:        [][]byte{{1, 2, 3, 4}, {9}}[s.value],
	}
	r.Generation = s.gen.resolve(k, routeNS(key))
	return r
}

// routeTable is the route table.
func routeTable() rowTable[location.RouteLocation, location.RouteKey] {
	return rowTable[location.RouteLocation, location.RouteKey]{name: "Route", key: (*location.RouteLocation).Key, ns: routeNS, rowGen: true,
		owner: func(r *location.RouteLocation) (*string, *int64) { return &r.OwnerID, &r.Generation },
		last:  func(k *knowledge) **location.RouteLocation { return &k.lastRoute }, update: location.Store.UpdateRoute}
}

func genUpdateRoute(g *generator) randomOp { return routeTable().updateOp(g.routeSpec(), g.intent()) }

func genRemoveRoute(g *generator) randomOp {
	spec := g.routeSpec()
	return routeTable().removeGenOp(spec.routeKey(), spec.owner, spec.gen, g.chance(0.5), func() string { return fmt.Sprintf("key of %s", spec) }, location.Store.RemoveRoute)
}

func genResolveRoute(g *generator) randomOp {
	spec := g.routeSpec()
	return routeTable().resolveOp(spec.routeKey(), g.chance(0.5), func() string { return fmt.Sprintf("key of %s", spec) }, location.Store.ResolveRoute)
}

// routeFilterSpec is a symbolic route filter; -1 leaves a field out.
type routeFilterSpec struct{ kind, node, owner int }

// build returns the filter.
func (f routeFilterSpec) build() location.RouteFilter {
	return location.RouteFilter{
		RouteKind:    optionalPick[location.RouteKind](f.kind, 1, 2, 3),
		OwnerNodeRID: optionalPick(f.node, randomNodeRIDs()...),
		OwnerID:      optionalPick(f.owner, randomOwners()...),
	}
}

func genListRoutes(g *generator) randomOp {
	f := routeFilterSpec{kind: g.optIndex(3, 0.6), node: g.optIndex(2, 0.8), owner: g.optIndex(3, 0.8)}
	return listOp(routeTable(), fmt.Sprintf("filter%+v", f), f.build, g.pageSpec(), location.Store.ListRoutes)
}
