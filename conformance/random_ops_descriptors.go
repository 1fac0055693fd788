package conformance

import (
	"context"
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Random operations on the descriptor tables: mesh nodes, client servers
// and fanout publishers.

// Paging modes of a list operation.
const (
	pageAll   = iota // follow every continuation token
	pageFirst        // read the first page only
	pageBogus        // start from a token no store issued
)

// pageModeName names a paging mode.
func pageModeName(mode int) string {
	switch mode {
	case pageAll:
		return "all pages"
	case pageFirst:
		return "first page"
	default:
		return "bogus token"
	}
}

// pageSpec is how a list operation pages.
type pageSpec struct {
	size int
	mode int
}

// String renders the paging.
func (p pageSpec) String() string {
	return fmt.Sprintf("page size %d, %s", p.size, pageModeName(p.mode))
}

// pageSpec draws small pages so that continuation tokens are exercised.
func (g *generator) pageSpec() pageSpec {
	p := pageSpec{size: pick(g, 0, 1, 1, 2, 2, 3, -1)}
	switch w := g.n(10); {
	case w < 7:
		p.mode = pageAll
	case w < 9:
		p.mode = pageFirst
	default:
		p.mode = pageBogus
	}
	return p
}

// listPages reads a list page by page on both stores, following each
// store's own tokens right after the page that gave them (so that no write
// comes between pages: stores may pin a token to a snapshot or to an
// offset), and compares the items with item.
func listPages[T any](x *runState, p pageSpec, list func(sd side, req location.PageRequest) (location.Page[T], error), item func(path string, m, s T)) {
	mTok, sTok := "", ""
	if p.mode == pageBogus {
		mTok, sTok = randomBogusToken, randomBogusToken
	}
	for page := 1; page <= 64; page++ {
		m, s, ok := both(x, func(sd side) (location.Page[T], error) {
			tok := mTok
			if sd.isStore {
				tok = sTok
			}
			return list(sd, location.PageRequest{PageSize: p.size, ContinuationToken: tok})
		})
		if !ok {
			return
		}
		path := fmt.Sprintf("page %d", page)
		if !x.count(path+".Items", len(m.Items), len(s.Items)) {
			return
		}
		for i := range m.Items {
			item(fmt.Sprintf("%s.Items[%d]", path, i), m.Items[i], s.Items[i])
		}
		x.token(path+".ContinuationToken", m.ContinuationToken, s.ContinuationToken)
		if !x.ok() || m.ContinuationToken == "" || p.mode == pageFirst {
			return
		}
		mTok, sTok = m.ContinuationToken, s.ContinuationToken
	}
}

// meshNodeSpec is a symbolic mesh-node descriptor.
type meshNodeSpec struct {
	node                int
	token               tokenRef
	lifecycle, revision int64
	client, draining    bool
	// entry: 0 no entry spot, 1 "g1" (an authority object's id), 2 "e2".
	entry int
	// limits selects a population preset (meshNodeLimits).
	limits   int
	endpoint int
	// corrupt > 0 makes the descriptor invalid in one way.
	corrupt int
}

// String renders the spec.
func (s meshNodeSpec) String() string {
	k := randomNodeKeys()[s.node]
	role, state := "server", "serving"
	if s.client {
		role = "client"
	}
	if s.draining {
		state = "draining"
	}
	out := fmt.Sprintf("MN{%s/%s owner=%s lc=%d rev=%d %s %s limits=L%d ep=%d", k.MeshName, k.RID, s.token, s.lifecycle, s.revision, role, state, s.limits, s.endpoint)
	if s.entry > 0 {
		out += " entry=" + meshNodeEntry(s.entry)
	}
	return out + invalidMark(s.corrupt) + "}"
}

// meshNodeEntry is the entry spot id of an entry choice.
func meshNodeEntry(entry int) string { return []string{"", "g1", "e2"}[entry] }

// meshNodeLimits are population presets: actors, spots, room, hall, shard
// limits (0 = unlimited); preset 3 offers no hall.
func meshNodeLimits(preset int) (actors, spots, room, hall, shard int64, offersHall bool) {
	switch preset {
	case 0:
		return 0, 0, 0, 0, 0, true
	case 1:
		return 2, 2, 1, 1, 1, true
	case 2:
		return 1, 3, 2, 0, 2, true
	default:
		return 5, 1, 1, 0, 1, false
	}
}

// meshNodeSpec draws a descriptor spec.
func (g *generator) meshNodeSpec() meshNodeSpec {
	s := meshNodeSpec{
		node:      g.n(len(randomNodeKeys())),
		token:     g.tokenRef(),
		lifecycle: pick[int64](g, 1, 1, 1, 2),
		revision:  pick[int64](g, 1, 1, 2, 3),
		client:    g.chance(0.1),
		draining:  g.chance(0.1),
		limits:    g.n(4),
		endpoint:  g.n(2),
	}
	if !s.client && g.chance(0.2) {
		s.entry = 1 + g.n(2)
	}
	if g.bad() {
		s.corrupt = 1 + g.n(5)
	}
	return s
}

// build returns the model-side descriptor.
func (s meshNodeSpec) build(k *knowledge) location.MeshNodeDescriptor {
	key := randomNodeKeys()[s.node]
	tok := s.token.resolve(k)
	actors, spots, room, hall, shard, offersHall := meshNodeLimits(s.limits)
	types := []location.SpotTypeCapacity{
		{ObjectKind: location.ObjectUserSpot, StableType: "room", PopulationCapacity: location.PopulationCapacity{Limit: room}},
	}
	if offersHall {
		types = append(types, location.SpotTypeCapacity{ObjectKind: location.ObjectUserSpot, StableType: "hall", PopulationCapacity: location.PopulationCapacity{Limit: hall}})
	}
	types = append(types, location.SpotTypeCapacity{ObjectKind: location.ObjectInstanceSpot, StableType: "shard", PopulationCapacity: location.PopulationCapacity{Limit: shard}})
	d := location.MeshNodeDescriptor{
		MeshName:            key.MeshName,
		RID:                 key.RID,
		LifecycleGeneration: s.lifecycle,
		DescriptorRevision:  s.revision,
		Endpoint:            fmt.Sprintf("tcp://10.0.%d.1:7300", s.endpoint),
		ObjectRole:          location.RoleServer,
		PlacementWeight:     100,
		PopulationCapacity: location.Population{
			Actors:    location.PopulationCapacity{Limit: actors},
			Spots:     location.PopulationCapacity{Limit: spots},
			SpotTypes: types,
		},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights:        map[string]int64{"c1": 10},
		ApplicationVersion:    1,
		SpotTypes:             []string{"room", "shard"},
		ObjectCapabilities: []location.ObjectCapability{
			{ObjectKind: location.ObjectInstanceSpot, StableType: "shard", Policy: location.PolicyRecreate},
		},
		State:            drawnState(s.draining),
		SecurityIdentity: "cluster-a",
		OwnerID:          tok.OwnerID,
		LeaseGeneration:  tok.LeaseGeneration,
	}
	if s.client {
		d.ObjectRole = location.RoleClient
		d.ObjectCapabilities = nil
	}
	if s.entry > 0 {
		e := meshNodeEntry(s.entry)
		d.EntrySpotID = &e
	}
	switch s.corrupt {
	case 1:
		d.LifecycleGeneration = 0
	case 2:
		d.MeshName = ""
	case 3:
		d.ObjectRole = location.RoleClient
		d.ObjectCapabilities = nil
		e := "g1"
		d.EntrySpotID = &e
	case 4:
		d.PopulationCapacity.Actors.Limit = -1
	case 5:
		d.ObjectCapabilities = append(d.ObjectCapabilities, d.ObjectCapabilities...)
	}
	return d
}

// meshNodeTable is the mesh-node table. Its writes are their own
// (meshNodeOp): the model restarts a key's generations after a removal, so
// each incarnation of a key has its own namespace.
func meshNodeTable() rowTable[location.MeshNodeDescriptor, location.MeshNodeKey] {
	return rowTable[location.MeshNodeDescriptor, location.MeshNodeKey]{name: "MeshNode", key: (*location.MeshNodeDescriptor).Key,
		owner: func(d *location.MeshNodeDescriptor) (*string, *int64) { return &d.OwnerID, &d.LeaseGeneration }}
}

func genUpdateMeshNode(g *generator) randomOp { return meshNodeOp(g.meshNodeSpec(), g.intent()) }

// meshNodeOp is UpdateMeshNode(descriptor, intent).
func meshNodeOp(spec meshNodeSpec, intent location.WriteIntent) randomOp {
	return randomOp{name: "UpdateMeshNode", args: func() string { return fmt.Sprintf("%s, %s", spec, intent) }, run: func(x *runState) {
		d := spec.build(x.know)
		x.inputs(d, intent)
		m, s, ok := both(x, func(sd side) (location.WriteResult, error) {
			return sd.store.UpdateMeshNode(x.ctx, meshNodeTable().pass(sd, d), intent)
		})
		if !ok {
			return
		}
		key := d.Key()
		x.know.meshNodeWriting(key)
		x.writeResult("", x.know.meshNodeNS(key), m, s)
		if x.ok() && m.Status == location.Stored {
			x.know.nodes[key] = d
			x.know.nodeLive[key] = true
		}
	}}
}

func genRemoveMeshNode(g *generator) randomOp {
	return removeMeshNodeOp(g.n(len(randomNodeKeys())), g.tokenRef(), g.chance(0.5))
}

// removeMeshNodeOp is RemoveMeshNode(key, token); stored uses the token the
// node was last stored with.
func removeMeshNodeOp(node int, t tokenRef, stored bool) randomOp {
	key := randomNodeKeys()[node]
	args := fmt.Sprintf("%s/%s, %s", key.MeshName, key.RID, t)
	if stored {
		args = fmt.Sprintf("%s/%s, its stored owner, else %s", key.MeshName, key.RID, t)
	}
	return randomOp{name: "RemoveMeshNode", args: func() string { return args }, run: func(x *runState) {
		tok := t.resolve(x.know)
		if d, ok := x.know.nodes[key]; stored && ok {
			tok = d.Owner()
		}
		x.inputs(key, tok)
		m, s, ok := both(x, func(sd side) (location.WriteStatus, error) {
			return sd.store.RemoveMeshNode(x.ctx, key, sd.token(tok))
		})
		if !ok {
			return
		}
		x.kind("", m, s)
		if x.ok() && m == location.Stored {
			x.know.nodeLive[key] = false
		}
	}}
}

func genListMeshNodes(g *generator) randomOp {
	mesh := pick(g, "m1", "m1", "m2", "zz")
	return listOp(meshNodeTable(), fmt.Sprintf("%q", mesh), func() string { return mesh }, g.pageSpec(), location.Store.ListMeshNodes)
}

// channelSpec is a symbolic client-server or fanout descriptor.
type channelSpec struct {
	channel, rid        int
	token               tokenRef
	lifecycle, revision int64
	weight              int64
	endpoint            int
	draining            bool
	corrupt             int
}

// String renders the spec.
func (s channelSpec) String() string {
	out := fmt.Sprintf("{%s/#%d owner=%s lc=%d rev=%d weight=%d ep=%d", randomChannels()[s.channel], s.rid, s.token, s.lifecycle, s.revision, s.weight, s.endpoint)
	if s.draining {
		out += " draining"
	}
	return out + invalidMark(s.corrupt) + "}"
}

// channelSpec draws a descriptor spec.
func (g *generator) channelSpec() channelSpec {
	s := channelSpec{
		channel:   g.n(2),
		rid:       g.n(2),
		token:     g.tokenRef(),
		lifecycle: pick[int64](g, 1, 1, 2),
		revision:  pick[int64](g, 1, 1, 2, 3),
		weight:    pick[int64](g, 0, 50, 100),
		endpoint:  g.n(2),
		draining:  g.chance(0.1),
	}
	if g.bad() {
		s.corrupt = 1 + g.n(3)
	}
	return s
}

// drawnState is the runtime state of a drawn descriptor: serving, or
// draining.
func drawnState(draining bool) location.RuntimeState {
	if draining {
		return location.StateDraining
	}
	return location.StateServing
}

// clientServerSpec is a channelSpec of a client-server descriptor.
type clientServerSpec struct{ channelSpec }

// key is the drawn descriptor's key.
func (s clientServerSpec) key() location.ClientServerKey {
	return location.ClientServerKey{ChannelName: randomChannels()[s.channel], ServerRID: location.RoutingID([]string{"srv-a", "srv-b"}[s.rid])}
}

// String renders the spec.
func (s clientServerSpec) String() string { return "CS" + s.channelSpec.String() }

// build returns the model-side client-server descriptor.
func (s clientServerSpec) build(k *knowledge) location.ClientServerDescriptor {
	tok, key := s.token.resolve(k), s.key()
	d := location.ClientServerDescriptor{
		ChannelName:         key.ChannelName,
		ServerRID:           key.ServerRID,
		LifecycleGeneration: s.lifecycle,
		DescriptorRevision:  s.revision,
		Endpoint:            fmt.Sprintf("tcp://10.0.%d.1:7400", s.endpoint),
		Weight:              s.weight,
		State:               drawnState(s.draining),
		SecurityIdentity:    "cluster-a",
		OwnerID:             tok.OwnerID,
		LeaseGeneration:     tok.LeaseGeneration,
	}
	switch s.corrupt {
	case 1:
		d.Weight = 20000
	case 2:
		d.ChannelName = ""
	case 3:
		d.DescriptorRevision = 0
	}
	return d
}

// fanoutSpec is a channelSpec of a fanout publisher descriptor.
type fanoutSpec struct{ channelSpec }

// key is the drawn descriptor's key.
func (s fanoutSpec) key() location.FanoutPublisherKey {
	return location.FanoutPublisherKey{ChannelName: randomChannels()[s.channel], PublisherRID: location.RoutingID([]string{"pub-a", "pub-\x01"}[s.rid])}
}

// String renders the spec.
func (s fanoutSpec) String() string { return "FP" + s.channelSpec.String() }

// build returns the model-side fanout publisher descriptor.
func (s fanoutSpec) build(k *knowledge) location.FanoutPublisherDescriptor {
	tok, key := s.token.resolve(k), s.key()
	d := location.FanoutPublisherDescriptor{
		ChannelName:         key.ChannelName,
		PublisherRID:        key.PublisherRID,
		LifecycleGeneration: s.lifecycle,
		DescriptorRevision:  s.revision,
		Endpoint:            fmt.Sprintf("tcp://10.0.%d.1:9501", s.endpoint),
		State:               drawnState(s.draining),
		SecurityIdentity:    "cluster-a",
		OwnerID:             tok.OwnerID,
		LeaseGeneration:     tok.LeaseGeneration,
	}
	switch s.corrupt {
	case 1:
		d.PublisherRID = ""
	case 2:
		d.SecurityIdentity = "\xff"
	case 3:
		d.LifecycleGeneration = -1
	}
	return d
}

// channelTable is a channel-keyed descriptor table (client servers, fanout
// publishers) as the random operations draw it; its update, remove and
// list operations are written once (genUpdate, genRemove, genList).
type channelTable[R, K any] struct {
	rows rowTable[R, K]
	// spec is the table's spec of a drawn channelSpec.
	spec func(channelSpec) channelRowSpec[R, K]
	// parts are a key's channel name and routing id.
	parts  func(K) (string, location.RoutingID)
	remove func(location.Store, context.Context, K, location.OwnerToken) (location.WriteStatus, error)
	list   func(location.Store, context.Context, string, location.PageRequest) (location.Page[R], error)
	// channels are the channel names a list names.
	channels []string
}

// channelRowSpec is the spec of a channel-keyed descriptor.
type channelRowSpec[R, K any] interface {
	rowSpec[R]
	key() K
}

// genUpdate is Update<table>(descriptor, intent).
func (t channelTable[R, K]) genUpdate(g *generator) randomOp {
	return t.rows.updateOp(t.spec(g.channelSpec()), g.intent())
}

// genRemove is Remove<table>(key, token).
func (t channelTable[R, K]) genRemove(g *generator) randomOp {
	spec, tok := g.channelSpec(), g.tokenRef()
	key := t.spec(spec).key()
	channel, rid := t.parts(key)
	args := func() string { return fmt.Sprintf("%s/%s, %s", channel, rid, tok) }
	return t.rows.removeOp(key, tok, g.chance(0.5), args, t.remove)
}

// genList is List<table>s(channel, page).
func (t channelTable[R, K]) genList(g *generator) randomOp {
	channel := pick(g, t.channels...)
	return listOp(t.rows, fmt.Sprintf("%q", channel), func() string { return channel }, g.pageSpec(), t.list)
}

// clientServerNS is the generation namespace of a client-server descriptor.
func clientServerNS(k location.ClientServerKey) string {
	return NSRowGeneration("clientServers", k.ChannelName+"/"+string(k.ServerRID))
}

// clientServerTable is the client-server descriptor table.
func clientServerTable() channelTable[location.ClientServerDescriptor, location.ClientServerKey] {
	return channelTable[location.ClientServerDescriptor, location.ClientServerKey]{
		rows: rowTable[location.ClientServerDescriptor, location.ClientServerKey]{name: "ClientServer", key: (*location.ClientServerDescriptor).Key,
			ns:    clientServerNS,
			owner: func(d *location.ClientServerDescriptor) (*string, *int64) { return &d.OwnerID, &d.LeaseGeneration },
			last:  func(k *knowledge) **location.ClientServerDescriptor { return &k.lastCS }, update: location.Store.UpdateClientServer},
		spec: func(s channelSpec) channelRowSpec[location.ClientServerDescriptor, location.ClientServerKey] {
			return clientServerSpec{s}
		},
		parts:  func(k location.ClientServerKey) (string, location.RoutingID) { return k.ChannelName, k.ServerRID },
		remove: location.Store.RemoveClientServer, list: location.Store.ListClientServers,
		channels: []string{"c1", "c2", "m1"},
	}
}

// fanoutNS is the generation namespace of a fanout publisher descriptor.
func fanoutNS(k location.FanoutPublisherKey) string {
	return NSRowGeneration("fanoutPublishers", k.ChannelName+"/"+string(k.PublisherRID))
}

// fanoutTable is the fanout publisher descriptor table.
func fanoutTable() channelTable[location.FanoutPublisherDescriptor, location.FanoutPublisherKey] {
	return channelTable[location.FanoutPublisherDescriptor, location.FanoutPublisherKey]{
		rows: rowTable[location.FanoutPublisherDescriptor, location.FanoutPublisherKey]{name: "FanoutPublisher", key: (*location.FanoutPublisherDescriptor).Key,
			ns:    fanoutNS,
			owner: func(d *location.FanoutPublisherDescriptor) (*string, *int64) { return &d.OwnerID, &d.LeaseGeneration },
			last:  func(k *knowledge) **location.FanoutPublisherDescriptor { return &k.lastFP }, update: location.Store.UpdateFanoutPublisher},
		spec: func(s channelSpec) channelRowSpec[location.FanoutPublisherDescriptor, location.FanoutPublisherKey] {
			return fanoutSpec{s}
		},
		parts:  func(k location.FanoutPublisherKey) (string, location.RoutingID) { return k.ChannelName, k.PublisherRID },
		remove: location.Store.RemoveFanoutPublisher, list: location.Store.ListFanoutPublishers,
		channels: []string{"c1", "c2"},
	}
}
