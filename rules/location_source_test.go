package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// lsT0 is the catalogue's start time, 2026-07-03T00:00:00Z.
func lsT0() time.Time { return time.Date(2026, 7, 3, 0, 0, 0, 0, time.UTC) }

// lsLease is one owner lease of an lsSource.
type lsLease struct {
	generation int64
	live       bool
}

// lsSource is a Source for the location-table decisions: rows, leases and
// the memstore generation rule (dense per key, mesh nodes restart at 1).
// apply makes a plan real so that tests can chain decisions.
type lsSource struct {
	now    time.Time
	rows   map[Table]map[string]Record
	gens   map[Table]map[string]int64
	leases map[string]lsLease
	stamps map[StampCounter]int64
	mesh   map[string]int64
}

func newLSSource() *lsSource {
	return &lsSource{
		now:    lsT0(),
		rows:   map[Table]map[string]Record{},
		gens:   map[Table]map[string]int64{},
		leases: map[string]lsLease{},
		stamps: map[StampCounter]int64{},
		mesh:   map[string]int64{},
	}
}

func (s *lsSource) Now() time.Time { return s.now }

func (s *lsSource) Get(t Table, key string) (Record, bool) {
	r, ok := s.rows[t][key]
	return r, ok
}

func (s *lsSource) LiveLease(ownerID string) (int64, bool) {
	l, ok := s.leases[ownerID]
	return l.generation, ok && l.live
}

func (s *lsSource) NextGeneration(t Table, key string) int64 {
	if _, exists := s.rows[t][key]; t == location.TableMeshNodes && !exists {
		return 1
	}
	return s.gens[t][key] + 1
}

func (s *lsSource) CanIssue(int64, int64, int64) bool                 { return true }
func (s *lsSource) IssueVersion() location.StoreVersion               { return "1" }
func (s *lsSource) IssueObjectGeneration(location.AuthorityKey) int64 { return 1 }
func (s *lsSource) IssueOwnerGeneration(location.AuthorityKey) int64  { return 1 }
func (s *lsSource) NewReservationID() string                          { return "00000000-0000-4000-8000-000000000000" }

// lease sets ownerID's lease.
func (s *lsSource) lease(ownerID string, generation int64, live bool) {
	s.leases[ownerID] = lsLease{generation: generation, live: live}
}

// put stores a row directly with a generation (also the key's counter).
func (s *lsSource) put(t Table, key string, v any, generation int64) {
	if s.rows[t] == nil {
		s.rows[t] = map[string]Record{}
	}
	s.rows[t][key] = Record{Value: v, Generation: generation}
	if generation > 0 {
		if s.gens[t] == nil {
			s.gens[t] = map[string]int64{}
		}
		s.gens[t][key] = generation
	}
}

// apply makes a plan real, as memstore does.
func (s *lsSource) apply(p *Plan) {
	for _, w := range p.Writes {
		if w.Value == nil {
			delete(s.rows[w.Table], w.Key)
			continue
		}
		s.put(w.Table, w.Key, w.Value, w.Generation)
	}
	for _, c := range p.Stamps {
		s.stamps[c]++
	}
	for _, m := range p.MeshNodeStamps {
		s.mesh[m]++
	}
}

// lsRun runs one decision on src, applies its plan and returns the result
// and the plan.
func lsRun[R any](t *testing.T, src *lsSource, decision func(*Tx) (R, error)) (R, *Plan) {
	t.Helper()
	tx := NewTx(src)
	res, err := decision(tx)
	require.NoError(t, err)
	src.apply(tx.Plan())
	return res, tx.Plan()
}

// lsStored, lsStale and lsConflict are the expected write results.
func lsStored(g int64, at time.Time) location.WriteResult {
	return location.WriteResult{Status: location.Stored, Generation: g, UpdatedAt: at}
}

func lsStale() location.WriteResult {
	return location.WriteResult{Status: location.IgnoredStale, UpdatedAt: location.Epoch()}
}

func lsConflict() location.WriteResult {
	return location.WriteResult{Status: location.RejectedConflict, UpdatedAt: location.Epoch()}
}

// lsStamp is one stamp counter for the expected plans.
func lsStamp(kind location.LocationKind, mesh string) StampCounter {
	return StampCounter{Kind: kind.Scope(), Mesh: mesh}
}

func lsPtr[T any](v T) *T { return &v }

// lsMN is the catalogue's MN(x): mesh game, rid node-a, lifecycle 7,
// revision 3, server, no entry spot.
func lsMN(owner string, leaseGeneration int64) location.MeshNodeDescriptor {
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
		LeaseGeneration:  leaseGeneration,
	}
}

// lsMNE is MN(x) with entry spot entry-1.
func lsMNE(owner string, leaseGeneration int64) location.MeshNodeDescriptor {
	d := lsMN(owner, leaseGeneration)
	d.EntrySpotID = lsPtr("entry-1")
	return d
}

// lsCS is the catalogue's CS(x).
func lsCS(owner string, leaseGeneration int64) location.ClientServerDescriptor {
	return location.ClientServerDescriptor{
		ChannelName: "orders", ServerRID: "srv-a", LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:7400", Weight: 100, State: location.StateServing,
		SecurityIdentity: "cluster-a", OwnerID: owner, LeaseGeneration: leaseGeneration,
	}
}

// lsFP is the catalogue's FP(x).
func lsFP(owner string, leaseGeneration int64) location.FanoutPublisherDescriptor {
	return location.FanoutPublisherDescriptor{
		ChannelName: "events", PublisherRID: "pub-a", LifecycleGeneration: 7, DescriptorRevision: 1,
		Endpoint: "tcp://10.0.0.1:9501", State: location.StateServing,
		SecurityIdentity: "cluster-a", OwnerID: owner, LeaseGeneration: leaseGeneration,
	}
}

// lsPeer is the catalogue's PEER(x, g).
func lsPeer(owner string, generation int64) location.PeerLocation {
	return location.PeerLocation{
		AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", NodeRID: lsPtr(location.RoutingID("node-1")),
		Role: location.PeerRoleRouter, Endpoint: "tcp://127.0.0.1:5001", Weight: 100, Value: 7,
		Metadata: map[string]string{"route-endpoint": "tcp://127.0.0.1:6001"}, Capabilities: []string{"router"},
		OwnerID: owner, Generation: generation,
	}
}

// lsSpot is the catalogue's SPOT(x, lg).
func lsSpot(owner string, leaseGeneration int64) location.SpotLocation {
	return location.SpotLocation{
		MeshName: "play", SpotID: "spot-1", SpotGeneration: 1, SpotType: "game", OwnerNodeRID: "node-1",
		OwnerNodeGeneration: 1, SpotKind: location.SpotUser, OwnerID: owner, LeaseGeneration: leaseGeneration,
	}
}

// lsActor is the catalogue's ACTOR(x, lg).
func lsActor(owner string, leaseGeneration int64) location.ActorLocation {
	return location.ActorLocation{
		MeshName: "play", ActorID: "actor-1", ActorType: "player",
		ActorRef:     location.ActorRef{ActorID: "actor-1", ObjectGeneration: 1, MeshName: "play", NodeRID: "node-1"},
		OwnerNodeRID: "node-1", OwnerNodeGeneration: 1, SpotKind: location.SpotEntry, SpotID: "node-1",
		SpotGeneration: 1, MembershipEpoch: 1, OwnerID: owner, LeaseGeneration: leaseGeneration,
	}
}

// lsRoute is the catalogue's ROUTE(x, g).
func lsRoute(owner string, generation int64) location.RouteLocation {
	return location.RouteLocation{
		RouteKind: location.RouteActorSession, RouteKey: "route-1", OwnerNodeRID: "node-1",
		OwnerID: owner, Generation: generation, Value: []byte{1, 2, 3, 4},
	}
}

// Keys of the catalogue rows.
func lsMNKey() location.MeshNodeKey { return location.MeshNodeKey{MeshName: "game", RID: "node-a"} }
func lsCSKey() location.ClientServerKey {
	return location.ClientServerKey{ChannelName: "orders", ServerRID: "srv-a"}
}
func lsFPKey() location.FanoutPublisherKey {
	return location.FanoutPublisherKey{ChannelName: "events", PublisherRID: "pub-a"}
}
func lsPeerKey() location.PeerKey {
	return location.PeerKey{AutoConnectType: location.AutoConnectRouteMesh, MeshName: "play", Role: location.PeerRoleRouter, NodeRID: lsPtr(location.RoutingID("node-1"))}
}
func lsSpotKey() location.SpotKey   { return location.SpotKey{MeshName: "play", SpotID: "spot-1"} }
func lsActorKey() location.ActorKey { return location.ActorKey{MeshName: "play", ActorID: "actor-1"} }
func lsRouteKey() location.RouteKey {
	return location.RouteKey{RouteKind: location.RouteActorSession, RouteKey: "route-1"}
}
