package conformance

import (
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
	if s.corrupt > 0 {
		out += fmt.Sprintf(" INVALID#%d", s.corrupt)
	}
	return out + "}"
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
		rid := location.RoutingID([]string{"node-1", "node-2"}[s.identity])
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

func genUpdatePeer(g *generator) randomOp { return peerOp(g.peerSpec(), g.intent()) }

// peerOp is UpdatePeer(row, intent).
func peerOp(spec peerSpec, intent location.WriteIntent) randomOp {
	return randomOp{name: "UpdatePeer", args: func() string { return fmt.Sprintf("%s, %s", spec, intent) }, run: func(x *runState) {
		p := spec.build(x.know)
		ns := peerNS(p.Key())
		x.inputs(p, intent)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			c := p
			c.Generation = sd.rowGen(ns, c.Generation)
			return sd.store.UpdatePeer(x.ctx, c, intent)
		})
		if !ok {
			return
		}
		x.writeResult("", ns, m, s)
		if x.ok() && m.Status == location.Stored {
			x.know.learnRowGen(ns, m.Generation)
			c := p
			c.Generation = m.Generation
			x.know.lastPeer = &c
		}
	}}
}

func genRemovePeer(g *generator) randomOp {
	spec := g.peerSpec()
	spec.owner = g.ownerIndex()
	return removePeerOp(spec, g.chance(0.5))
}

// lastArgs renders the arguments of an operation that may name the row
// last written instead of its own.
func lastArgs(last bool, own string) string {
	if last {
		return "last written, else " + own
	}
	return own
}

// removePeerOp is RemovePeer(key, {owner, row generation}); last names the
// peer last written, with its owner and generation.
func removePeerOp(spec peerSpec, last bool) randomOp {
	return randomOp{name: "RemovePeer", args: func() string { return lastArgs(last, fmt.Sprintf("key of %s", spec)) }, run: func(x *runState) {
		key := spec.key()
		ns := peerNS(key)
		owner := location.OwnerToken{OwnerID: randomOwners()[spec.owner], LeaseGeneration: spec.gen.resolve(x.know, ns)}
		if p := x.know.lastPeer; last && p != nil {
			key, ns = p.Key(), peerNS(p.Key())
			owner = location.OwnerToken{OwnerID: p.OwnerID, LeaseGeneration: p.Generation}
		}
		x.inputs(key, owner)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			o := owner
			o.LeaseGeneration = sd.rowGen(ns, o.LeaseGeneration)
			return sd.store.RemovePeer(x.ctx, key, o)
		})
		if ok {
			x.writeResult("", ns, m, s)
		}
	}}
}

// peerFilterSpec is a symbolic peer filter; -1 leaves a field out.
type peerFilterSpec struct{ typ, mesh, role, rid, endpoint int }

// String renders the filter.
func (f peerFilterSpec) String() string {
	return fmt.Sprintf("filter{type=%d mesh=%d role=%d rid=%d ep=%d}", f.typ, f.mesh, f.role, f.rid, f.endpoint)
}

// build returns the filter.
func (f peerFilterSpec) build() location.PeerFilter {
	var out location.PeerFilter
	if f.typ >= 0 {
		t := location.AutoConnectType(1 + f.typ)
		out.AutoConnectType = &t
	}
	if f.mesh >= 0 {
		m := randomMeshes()[f.mesh]
		out.MeshName = &m
	}
	if f.role >= 0 {
		r := peerRole(f.role)
		out.Role = &r
	}
	if f.rid >= 0 {
		r := location.RoutingID([]string{"node-1", "node-2"}[f.rid])
		out.NodeRID = &r
	}
	if f.endpoint >= 0 {
		e := fmt.Sprintf("tcp://10.1.%d.0:5001", 2+f.endpoint)
		out.Endpoint = &e
	}
	return out
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
			x.peer(fmt.Sprintf("[%d]", i), m[i], s[i])
			x.know.learnRowGen(peerNS(m[i].Key()), m[i].Generation)
		}
	}}
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
	out := fmt.Sprintf("SPOT{%s/%s type=%d node=%d kind=%s sgen=%d owner=%s", k.MeshName, k.SpotID, s.typ, s.node, spotKinds()[s.kind], s.spotGen, s.token)
	if s.corrupt > 0 {
		out += fmt.Sprintf(" INVALID#%d", s.corrupt)
	}
	return out + "}"
}

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
		OwnerNodeRID:        location.RoutingID([]string{"node-1", "node-2"}[s.node]),
		OwnerNodeGeneration: 1,
		SpotKind:            spotKinds()[s.kind],
		OwnerID:             tok.OwnerID,
		LeaseGeneration:     tok.LeaseGeneration,
	}
}

func genUpdateSpot(g *generator) randomOp { return spotOp(g.spotSpec(), g.intent()) }

// spotOp is UpdateSpot(row, intent).
func spotOp(spec spotSpec, intent location.WriteIntent) randomOp {
	return randomOp{name: "UpdateSpot", args: func() string { return fmt.Sprintf("%s, %s", spec, intent) }, run: func(x *runState) {
		row := spec.build(x.know)
		x.inputs(row, intent)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			c := row
			c.LeaseGeneration = sd.lease(c.LeaseGeneration)
			return sd.store.UpdateSpot(x.ctx, c, intent)
		})
		if !ok {
			return
		}
		x.writeResult("", spotNS(row.Key()), m, s)
		if x.ok() && m.Status == location.Stored {
			x.know.lastSpot = &row
		}
	}}
}

func genRemoveSpot(g *generator) randomOp { return removeSpotOp(g.spotSpec(), g.chance(0.5)) }

// removeSpotOp is RemoveSpot(key, token); last names the spot last
// written and its owner token.
func removeSpotOp(spec spotSpec, last bool) randomOp {
	return randomOp{name: "RemoveSpot", args: func() string { return lastArgs(last, fmt.Sprintf("key of %s, %s", spec, spec.token)) }, run: func(x *runState) {
		key := spec.key()
		tok := spec.token.resolve(x.know)
		if r := x.know.lastSpot; last && r != nil {
			key, tok = r.Key(), location.OwnerToken{OwnerID: r.OwnerID, LeaseGeneration: r.LeaseGeneration}
		}
		x.inputs(key, tok)
		m, s, ok := both(x, func(sd side) (location.WriteStatus, error) {
			return sd.store.RemoveSpot(x.ctx, key, sd.token(tok))
		})
		if ok {
			x.kind("", m, s)
		}
	}}
}

func genResolveSpot(g *generator) randomOp { return resolveSpotOp(g.spotSpec(), g.chance(0.5)) }

// resolveSpotOp is ResolveSpot(key); last names the spot last written.
func resolveSpotOp(spec spotSpec, last bool) randomOp {
	return randomOp{name: "ResolveSpot", args: func() string { return lastArgs(last, fmt.Sprintf("key of %s", spec)) }, run: func(x *runState) {
		key := spec.key()
		if r := x.know.lastSpot; last && r != nil {
			key = r.Key()
		}
		x.inputs(key)
		m, s, ok := both(x, func(sd side) (*location.SpotLocation, error) { return sd.store.ResolveSpot(x.ctx, key) })
		if ok && x.present("row", m == nil, s == nil) {
			x.spot("row", *m, *s)
		}
	}}
}

// spotFilterSpec is a symbolic spot filter; -1 leaves a field out.
type spotFilterSpec struct{ mesh, typ, node, kind int }

// build returns the filter.
func (f spotFilterSpec) build() location.SpotFilter {
	var out location.SpotFilter
	if f.mesh >= 0 {
		m := randomMeshes()[f.mesh]
		out.MeshName = &m
	}
	if f.typ >= 0 {
		t := []string{"game", "lobby"}[f.typ]
		out.SpotType = &t
	}
	if f.node >= 0 {
		r := location.RoutingID([]string{"node-1", "node-2"}[f.node])
		out.NodeRID = &r
	}
	if f.kind >= 0 {
		k := spotKinds()[f.kind]
		out.SpotKind = &k
	}
	return out
}

func genListSpots(g *generator) randomOp {
	f := spotFilterSpec{mesh: g.optIndex(2, 0.5), typ: g.optIndex(2, 0.8), node: g.optIndex(2, 0.8), kind: g.optIndex(3, 0.8)}
	return listSpotsOp(f, g.pageSpec())
}

// listSpotsOp is ListSpots(filter, pages).
func listSpotsOp(f spotFilterSpec, p pageSpec) randomOp {
	return randomOp{name: "ListSpots", args: func() string { return fmt.Sprintf("filter%+v, %s", f, p) }, run: func(x *runState) {
		filter := f.build()
		x.inputs(filter, p)
		listPages(x, p, func(sd side, req location.PageRequest) (location.Page[location.SpotLocation], error) {
			return sd.store.ListSpots(x.ctx, filter, req)
		}, x.spot)
	}}
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
	out := fmt.Sprintf("ACTOR{%s/%s type=%d node=%d kind=%s spot=%d epoch=%d owner=%s", k.MeshName, k.ActorID, s.typ, s.node, spotKinds()[s.kind], s.spot, s.epoch, s.token)
	if s.corrupt > 0 {
		out += fmt.Sprintf(" INVALID#%d", s.corrupt)
	}
	return out + "}"
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
	node := location.RoutingID([]string{"node-1", "node-2"}[s.node])
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

func genUpdateActor(g *generator) randomOp { return actorOp(g.actorSpec(), g.intent()) }

// actorOp is UpdateActor(row, intent).
func actorOp(spec actorSpec, intent location.WriteIntent) randomOp {
	return randomOp{name: "UpdateActor", args: func() string { return fmt.Sprintf("%s, %s", spec, intent) }, run: func(x *runState) {
		row := spec.build(x.know)
		x.inputs(row, intent)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			c := row
			c.LeaseGeneration = sd.lease(c.LeaseGeneration)
			return sd.store.UpdateActor(x.ctx, c, intent)
		})
		if !ok {
			return
		}
		x.writeResult("", actorNS(row.Key()), m, s)
		if x.ok() && m.Status == location.Stored {
			x.know.lastActor = &row
		}
	}}
}

func genRemoveActor(g *generator) randomOp { return removeActorOp(g.actorSpec(), g.chance(0.5)) }

// removeActorOp is RemoveActor(key, token); last names the actor last
// written and its owner token.
func removeActorOp(spec actorSpec, last bool) randomOp {
	return randomOp{name: "RemoveActor", args: func() string { return lastArgs(last, fmt.Sprintf("key of %s, %s", spec, spec.token)) }, run: func(x *runState) {
		key := spec.key()
		tok := spec.token.resolve(x.know)
		if r := x.know.lastActor; last && r != nil {
			key, tok = r.Key(), location.OwnerToken{OwnerID: r.OwnerID, LeaseGeneration: r.LeaseGeneration}
		}
		x.inputs(key, tok)
		m, s, ok := both(x, func(sd side) (location.WriteStatus, error) {
			return sd.store.RemoveActor(x.ctx, key, sd.token(tok))
		})
		if ok {
			x.kind("", m, s)
		}
	}}
}

func genResolveActor(g *generator) randomOp { return resolveActorOp(g.actorSpec(), g.chance(0.5)) }

// resolveActorOp is ResolveActor(key); last names the actor last written.
func resolveActorOp(spec actorSpec, last bool) randomOp {
	return randomOp{name: "ResolveActor", args: func() string { return lastArgs(last, fmt.Sprintf("key of %s", spec)) }, run: func(x *runState) {
		key := spec.key()
		if r := x.know.lastActor; last && r != nil {
			key = r.Key()
		}
		x.inputs(key)
		m, s, ok := both(x, func(sd side) (*location.ActorLocation, error) { return sd.store.ResolveActor(x.ctx, key) })
		if ok && x.present("row", m == nil, s == nil) {
			x.actor("row", *m, *s)
		}
	}}
}

// actorFilterSpec is a symbolic actor filter; -1 leaves a field out.
type actorFilterSpec struct{ typ, node, spot, kind int }

// build returns the filter.
func (f actorFilterSpec) build() location.ActorFilter {
	var out location.ActorFilter
	if f.typ >= 0 {
		t := []string{"player", "npc"}[f.typ]
		out.ActorType = &t
	}
	if f.node >= 0 {
		r := location.RoutingID([]string{"node-1", "node-2"}[f.node])
		out.NodeRID = &r
	}
	if f.spot >= 0 {
		s := []string{"s1", "node-1"}[f.spot]
		out.SpotID = &s
	}
	if f.kind >= 0 {
		k := spotKinds()[f.kind]
		out.LocationKind = &k
	}
	return out
}

func genListActors(g *generator) randomOp {
	f := actorFilterSpec{typ: g.optIndex(2, 0.7), node: g.optIndex(2, 0.8), spot: g.optIndex(2, 0.8), kind: g.optIndex(3, 0.8)}
	return listActorsOp(f, g.pageSpec())
}

// listActorsOp is ListActors(filter, pages).
func listActorsOp(f actorFilterSpec, p pageSpec) randomOp {
	return randomOp{name: "ListActors", args: func() string { return fmt.Sprintf("filter%+v, %s", f, p) }, run: func(x *runState) {
		filter := f.build()
		x.inputs(filter, p)
		listPages(x, p, func(sd side, req location.PageRequest) (location.Page[location.ActorLocation], error) {
			return sd.store.ListActors(x.ctx, filter, req)
		}, x.actor)
	}}
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
	out := fmt.Sprintf("ROUTE{%d/%s node=%d owner=%s value=%d gen=%s", k.RouteKind, k.RouteKey, s.node, randomOwners()[s.owner], s.value, s.gen)
	if s.corrupt > 0 {
		out += fmt.Sprintf(" INVALID#%d", s.corrupt)
	}
	return out + "}"
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
		OwnerNodeRID: location.RoutingID([]string{"node-1", "node-2"}[s.node]),
		OwnerID:      randomOwners()[s.owner],
		Value:        [][]byte{{1, 2, 3, 4}, {9}}[s.value],
	}
	r.Generation = s.gen.resolve(k, routeNS(key))
	return r
}

func genUpdateRoute(g *generator) randomOp { return routeOp(g.routeSpec(), g.intent()) }

// routeOp is UpdateRoute(row, intent).
func routeOp(spec routeSpec, intent location.WriteIntent) randomOp {
	return randomOp{name: "UpdateRoute", args: func() string { return fmt.Sprintf("%s, %s", spec, intent) }, run: func(x *runState) {
		r := spec.build(x.know)
		ns := routeNS(r.Key())
		x.inputs(r, intent)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			c := r
			c.Generation = sd.rowGen(ns, c.Generation)
			return sd.store.UpdateRoute(x.ctx, c, intent)
		})
		if !ok {
			return
		}
		x.writeResult("", ns, m, s)
		if x.ok() && m.Status == location.Stored {
			x.know.learnRowGen(ns, m.Generation)
			c := r
			c.Generation = m.Generation
			x.know.lastRoute = &c
		}
	}}
}

func genRemoveRoute(g *generator) randomOp { return removeRouteOp(g.routeSpec(), g.chance(0.5)) }

// removeRouteOp is RemoveRoute(key, {owner, row generation}); last names
// the route last written, with its owner and generation.
func removeRouteOp(spec routeSpec, last bool) randomOp {
	return randomOp{name: "RemoveRoute", args: func() string { return lastArgs(last, fmt.Sprintf("key of %s", spec)) }, run: func(x *runState) {
		key := spec.routeKey()
		ns := routeNS(key)
		owner := location.OwnerToken{OwnerID: randomOwners()[spec.owner], LeaseGeneration: spec.gen.resolve(x.know, ns)}
		if r := x.know.lastRoute; last && r != nil {
			key, ns = r.Key(), routeNS(r.Key())
			owner = location.OwnerToken{OwnerID: r.OwnerID, LeaseGeneration: r.Generation}
		}
		x.inputs(key, owner)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			o := owner
			o.LeaseGeneration = sd.rowGen(ns, o.LeaseGeneration)
			return sd.store.RemoveRoute(x.ctx, key, o)
		})
		if ok {
			x.writeResult("", ns, m, s)
		}
	}}
}

func genResolveRoute(g *generator) randomOp { return resolveRouteOp(g.routeSpec(), g.chance(0.5)) }

// resolveRouteOp is ResolveRoute(key); last names the route last written.
func resolveRouteOp(spec routeSpec, last bool) randomOp {
	return randomOp{name: "ResolveRoute", args: func() string { return lastArgs(last, fmt.Sprintf("key of %s", spec)) }, run: func(x *runState) {
		key := spec.routeKey()
		if r := x.know.lastRoute; last && r != nil {
			key = r.Key()
		}
		x.inputs(key)
		m, s, ok := both(x, func(sd side) (*location.RouteLocation, error) { return sd.store.ResolveRoute(x.ctx, key) })
		if ok && x.present("row", m == nil, s == nil) {
			x.route("row", *m, *s)
			x.know.learnRowGen(routeNS(key), m.Generation)
		}
	}}
}

// routeFilterSpec is a symbolic route filter; -1 leaves a field out.
type routeFilterSpec struct{ kind, node, owner int }

// build returns the filter.
func (f routeFilterSpec) build() location.RouteFilter {
	var out location.RouteFilter
	if f.kind >= 0 {
		k := location.RouteKind(1 + f.kind)
		out.RouteKind = &k
	}
	if f.node >= 0 {
		r := location.RoutingID([]string{"node-1", "node-2"}[f.node])
		out.OwnerNodeRID = &r
	}
	if f.owner >= 0 {
		o := randomOwners()[f.owner]
		out.OwnerID = &o
	}
	return out
}

func genListRoutes(g *generator) randomOp {
	f := routeFilterSpec{kind: g.optIndex(3, 0.6), node: g.optIndex(2, 0.8), owner: g.optIndex(3, 0.8)}
	return listRoutesOp(f, g.pageSpec())
}

// listRoutesOp is ListRoutes(filter, pages).
func listRoutesOp(f routeFilterSpec, p pageSpec) randomOp {
	return randomOp{name: "ListRoutes", args: func() string { return fmt.Sprintf("filter%+v, %s", f, p) }, run: func(x *runState) {
		filter := f.build()
		x.inputs(filter, p)
		listPages(x, p, func(sd side, req location.PageRequest) (location.Page[location.RouteLocation], error) {
			return sd.store.ListRoutes(x.ctx, filter, req)
		}, func(path string, m, s location.RouteLocation) {
			x.route(path, m, s)
			x.know.learnRowGen(routeNS(m.Key()), m.Generation)
		})
	}}
}
