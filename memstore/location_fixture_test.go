package memstore

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// lsT0 is the catalogue's start time, 2026-07-03T00:00:00Z.
func lsT0() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }

// lsFix is one scenario's store: an empty Store on a manual clock at T0,
// with the catalogue's shorthand (03-… §3 of the scenario catalogue).
type lsFix struct {
	t   *testing.T
	ctx context.Context
	s   *Store
	clk *clock.Manual
	tok map[string]location.OwnerToken
}

func newLSFix(t *testing.T) *lsFix {
	clk := clock.NewManual(lsT0())
	return &lsFix{t: t, ctx: t.Context(), s: New(Options{Clock: clk.Now}), clk: clk, tok: map[string]location.OwnerToken{}}
}

// claim is claim(x): a 30 s lease that must be granted.
func (f *lsFix) claim(owner string) location.OwnerToken {
	f.t.Helper()
	res, err := f.s.ClaimOwnerLease(f.ctx, owner, 30*time.Second)
	require.NoError(f.t, err)
	require.Equal(f.t, location.KindClaimed, res.Kind)
	f.tok[owner] = res.Token
	return res.Token
}

// gen is gen(x); an owner never claimed has generation 1.
func (f *lsFix) gen(owner string) int64 {
	if t, ok := f.tok[owner]; ok {
		return t.LeaseGeneration
	}
	return 1
}

// expire is expire(x).
func (f *lsFix) expire(owner string) {
	f.t.Helper()
	require.NoError(f.t, f.s.ExpireOwnerLease(f.ctx, owner))
}

// stamp reads stamp(K, m); mesh "" reads the global counter.
func (f *lsFix) stamp(kind location.LocationKind, mesh string) int64 {
	f.t.Helper()
	scope := location.ChangeStampScope{Kind: kind.Scope()}
	if mesh != "" {
		scope.MeshName = &mesh
	}
	v, err := f.s.GetChangeStamp(f.ctx, scope)
	require.NoError(f.t, err)
	return v
}

// lsState is the store's whole state, for "no effect" checks.
type lsState struct {
	tables       map[rules.Table]map[string]rules.Record
	gens         map[rules.Table]map[string]int64
	leases       map[string]ownerLease
	leaseCounter int64
	stamps       map[rules.StampCounter]int64
	meshStamps   map[string]int64
}

// state copies the store's state (row values are never modified in place,
// so sharing them is safe).
func (f *lsFix) state() lsState {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	st := lsState{
		tables:       map[rules.Table]map[string]rules.Record{},
		gens:         map[rules.Table]map[string]int64{},
		leases:       maps.Clone(f.s.leases),
		leaseCounter: f.s.leaseCounter,
		stamps:       maps.Clone(f.s.stamps),
		meshStamps:   maps.Clone(f.s.meshNodeStamps),
	}
	for t, rows := range f.s.tables {
		if len(rows) > 0 {
			st.tables[t] = maps.Clone(rows)
		}
	}
	for t, g := range f.s.gens {
		st.gens[t] = maps.Clone(g)
	}
	return st
}

// noEffect runs op and requires that the store's state did not change.
func (f *lsFix) noEffect(op func()) {
	f.t.Helper()
	before := f.state()
	op()
	require.Equal(f.t, before, f.state(), "the call changed the store")
}

// write results.
func lsStored(g int64, at time.Time) location.WriteResult {
	return location.WriteResult{Status: location.Stored, Generation: g, UpdatedAt: at}
}

func lsStale() location.WriteResult {
	return location.WriteResult{Status: location.IgnoredStale, UpdatedAt: location.Epoch()}
}

func lsConflict() location.WriteResult {
	return location.WriteResult{Status: location.RejectedConflict, UpdatedAt: location.Epoch()}
}

func lsPtr[T any](v T) *T { return &v }

// requireInputError requires an InputError of the class.
func requireInputError(t *testing.T, err error, class location.ErrorClass) {
	t.Helper()
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	ie, ok := location.AsInputError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, class, ie.Class, "%v", err)
}

// Catalogue rows (scenario catalogue §3).

func (f *lsFix) mn(owner string) location.MeshNodeDescriptor {
	return location.MeshNodeDescriptor{
		MeshName:            "game",
		RID:                 "node-a",
		LifecycleGeneration: 7,
		DescriptorRevision:  3,
		Endpoint:            "tcp://10.0.0.1:7300",
		ObjectRole:          location.RoleServer,
		PlacementWeight:     100,
		PopulationCapacity: location.Population{
			Actors: location.PopulationCapacity{Limit: 100},
			Spots:  location.PopulationCapacity{Limit: 100},
			SpotTypes: []location.SpotTypeCapacity{
				{ObjectKind: location.ObjectInstanceSpot, StableType: "room", PopulationCapacity: location.PopulationCapacity{Limit: 100}},
			},
		},
		ActivationConcurrency: location.ActivationConcurrency{Limit: 100},
		ChannelWeights:        map[string]int64{"orders": 100, "world": 50},
		ApplicationVersion:    1,
		SpotTypes:             []string{"room"},
		ObjectCapabilities: []location.ObjectCapability{
			{ObjectKind: location.ObjectInstanceSpot, StableType: "room", Policy: location.PolicyRecreate, Limit: 100},
		},
		State:            location.StateServing,
		SecurityIdentity: "cluster-a",
		OwnerID:          owner,
		LeaseGeneration:  f.gen(owner),
	}
}

func (f *lsFix) mne(owner string) location.MeshNodeDescriptor {
	d := f.mn(owner)
	d.EntrySpotID = lsPtr("entry-1")
	return d
}

func (f *lsFix) cs(owner string) location.ClientServerDescriptor {
	return location.ClientServerDescriptor{
		ChannelName: "orders", ServerRID: "srv-a", LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:7400", Weight: 100, State: location.StateServing,
		SecurityIdentity: "cluster-a", OwnerID: owner, LeaseGeneration: f.gen(owner),
	}
}

func (f *lsFix) fp(owner string) location.FanoutPublisherDescriptor {
	return location.FanoutPublisherDescriptor{
		ChannelName: "events", PublisherRID: "pub-a", LifecycleGeneration: 7, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:9501", State: location.StateServing,
		SecurityIdentity: "cluster-a", OwnerID: owner, LeaseGeneration: f.gen(owner),
	}
}

func lsPeer(owner string, generation int64) location.PeerLocation {
	return location.PeerLocation{
		AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", NodeRID: lsPtr(location.RoutingID("node-1")),
		Role: location.PeerRoleRouter, Endpoint: "tcp://127.0.0.1:5001", Weight: 100, Value: 7,
		Metadata: map[string]string{"route-endpoint": "tcp://127.0.0.1:6001"}, Capabilities: []string{"router"},
		OwnerID: owner, Generation: generation,
	}
}

func (f *lsFix) spot(owner string) location.SpotLocation { return lsSpotRow(owner, f.gen(owner)) }

func lsSpotRow(owner string, leaseGeneration int64) location.SpotLocation {
	return location.SpotLocation{
		MeshName: "play", SpotID: "spot-1", SpotGeneration: 1, SpotType: "game", OwnerNodeRID: "node-1",
		OwnerNodeGeneration: 1, SpotKind: location.SpotUser, OwnerID: owner, LeaseGeneration: leaseGeneration,
	}
}

func (f *lsFix) actor(owner string) location.ActorLocation { return lsActorRow(owner, f.gen(owner)) }

func lsActorRow(owner string, leaseGeneration int64) location.ActorLocation {
	return location.ActorLocation{
		MeshName: "play", ActorID: "actor-1", ActorType: "player",
		ActorRef:     location.ActorRef{ActorID: "actor-1", ObjectGeneration: 1, MeshName: "play", NodeRID: "node-1"},
		OwnerNodeRID: "node-1", OwnerNodeGeneration: 1, SpotKind: location.SpotEntry, SpotID: "node-1",
		SpotGeneration: 1, MembershipEpoch: 1, OwnerID: owner, LeaseGeneration: leaseGeneration,
	}
}

func lsRoute(owner string, generation int64) location.RouteLocation {
	return location.RouteLocation{
		RouteKind: location.RouteActorSession, RouteKey: "route-1", OwnerNodeRID: "node-1",
		OwnerID: owner, Generation: generation, Value: []byte{1, 2, 3, 4},
	}
}

// Keys of the catalogue rows.
func lsKA() location.MeshNodeKey { return location.MeshNodeKey{MeshName: "game", RID: "node-a"} }
func lsPK() location.PeerKey {
	return location.PeerKey{AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", Role: location.PeerRoleRouter, NodeRID: lsPtr(location.RoutingID("node-1"))}
}
func lsSpotKey() location.SpotKey   { return location.SpotKey{MeshName: "play", SpotID: "spot-1"} }
func lsActorKey() location.ActorKey { return location.ActorKey{MeshName: "play", ActorID: "actor-1"} }
func lsRouteKey() location.RouteKey {
	return location.RouteKey{RouteKind: location.RouteActorSession, RouteKey: "route-1"}
}

// Writes that must not fail with an error.

func (f *lsFix) updateMN(d location.MeshNodeDescriptor, intent location.WriteIntent) location.WriteResult {
	f.t.Helper()
	res, err := f.s.UpdateMeshNode(f.ctx, d, intent)
	require.NoError(f.t, err)
	return res
}

func (f *lsFix) updateCS(d location.ClientServerDescriptor, intent location.WriteIntent) location.WriteResult {
	f.t.Helper()
	res, err := f.s.UpdateClientServer(f.ctx, d, intent)
	require.NoError(f.t, err)
	return res
}

func (f *lsFix) updateFP(d location.FanoutPublisherDescriptor, intent location.WriteIntent) location.WriteResult {
	f.t.Helper()
	res, err := f.s.UpdateFanoutPublisher(f.ctx, d, intent)
	require.NoError(f.t, err)
	return res
}

func (f *lsFix) updatePeer(p location.PeerLocation, intent location.WriteIntent) location.WriteResult {
	f.t.Helper()
	res, err := f.s.UpdatePeer(f.ctx, p, intent)
	require.NoError(f.t, err)
	return res
}

func (f *lsFix) updateSpot(s location.SpotLocation, intent location.WriteIntent) location.WriteResult {
	f.t.Helper()
	res, err := f.s.UpdateSpot(f.ctx, s, intent)
	require.NoError(f.t, err)
	return res
}

func (f *lsFix) updateActor(a location.ActorLocation, intent location.WriteIntent) location.WriteResult {
	f.t.Helper()
	res, err := f.s.UpdateActor(f.ctx, a, intent)
	require.NoError(f.t, err)
	return res
}

func (f *lsFix) updateRoute(r location.RouteLocation, intent location.WriteIntent) location.WriteResult {
	f.t.Helper()
	res, err := f.s.UpdateRoute(f.ctx, r, intent)
	require.NoError(f.t, err)
	return res
}

// Reads that must not fail.

func (f *lsFix) meshNodes(mesh string) []location.MeshNodeDescriptor {
	f.t.Helper()
	p, err := f.s.ListMeshNodes(f.ctx, mesh, location.PageRequest{})
	require.NoError(f.t, err)
	require.Empty(f.t, p.ContinuationToken)
	return p.Items
}

func (f *lsFix) clientServers(channel string) []location.ClientServerDescriptor {
	f.t.Helper()
	p, err := f.s.ListClientServers(f.ctx, channel, location.PageRequest{})
	require.NoError(f.t, err)
	return p.Items
}

func (f *lsFix) fanouts(channel string) []location.FanoutPublisherDescriptor {
	f.t.Helper()
	p, err := f.s.ListFanoutPublishers(f.ctx, channel, location.PageRequest{})
	require.NoError(f.t, err)
	return p.Items
}

func (f *lsFix) peers(filter location.PeerFilter) []location.PeerLocation {
	f.t.Helper()
	p, err := f.s.ListPeers(f.ctx, filter)
	require.NoError(f.t, err)
	return p
}

func (f *lsFix) resolveSpot(k location.SpotKey) *location.SpotLocation {
	f.t.Helper()
	s, err := f.s.ResolveSpot(f.ctx, k)
	require.NoError(f.t, err)
	return s
}

func (f *lsFix) resolveActor(k location.ActorKey) *location.ActorLocation {
	f.t.Helper()
	a, err := f.s.ResolveActor(f.ctx, k)
	require.NoError(f.t, err)
	return a
}

func (f *lsFix) resolveRoute(k location.RouteKey) *location.RouteLocation {
	f.t.Helper()
	r, err := f.s.ResolveRoute(f.ctx, k)
	require.NoError(f.t, err)
	return r
}

func (f *lsFix) readLease(owner string) location.OwnerLeaseReadResult {
	f.t.Helper()
	r, err := f.s.ReadOwnerLease(f.ctx, owner)
	require.NoError(f.t, err)
	return r
}

// mnAt returns d with UpdatedAt set, as a list shows it.
func mnAt(d location.MeshNodeDescriptor, ts time.Time) location.MeshNodeDescriptor {
	d.UpdatedAt = ts
	return d
}
