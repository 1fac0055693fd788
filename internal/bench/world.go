package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/leasemap"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Setup constants.
const (
	benchMesh  = "bench"
	benchType  = "bench-actor"
	leaseTTL   = time.Minute
	leaseEvery = 20 * time.Second
)

// worker is one client's own state: its owner, descriptor, actor and
// authority record, and the raw keys that mirror them.
type worker struct {
	id     int
	store  *etcdstore.Store
	client *clientv3.Client

	token   location.OwnerToken
	actor   location.ActorLocation
	authKey location.AuthorityKey
	version location.StoreVersion
	payload []byte

	rawLease    clientv3.LeaseID
	rawOwnerKey string
	rawActorKey string
	rawActorVal []byte
	rawActorRev int64
	rawAuthKey  string
	rawAuthVal  []byte
	rawAuthRev  int64
}

// world is everything a benchmark run set up.
type world struct {
	opts      Options
	stores    []*etcdstore.Store
	clients   []*clientv3.Client
	rawPrefix string
	workers   []*worker
	holders   []*leasemap.Holder
}

// setup claims every worker's owner, publishes descriptors (filling the
// mesh up to MeshSize), creates the actors and their authority records, and
// writes the raw mirror keys with the stored values' sizes.
func (w *world) setup(ctx context.Context) error {
	steps := max(w.opts.Clients, w.opts.MeshSize)
	for i := range w.opts.Clients {
		w.opts.OnProgress(Progress{Stage: "set-up", Done: i, Total: steps})
		wk := &worker{id: i, store: w.stores[i%len(w.stores)], client: w.clients[i%len(w.clients)]}
		if err := w.setupWorker(ctx, wk); err != nil {
			return fmt.Errorf("bench: set up client %d: %w", i, err)
		}
		w.workers = append(w.workers, wk)
	}
	for j := len(w.workers); j < w.opts.MeshSize; j++ {
		w.opts.OnProgress(Progress{Stage: "set-up", Done: j, Total: steps})
		owner := w.workers[j%len(w.workers)]
		if err := publishNode(ctx, owner.store, fmt.Sprintf("filler-%04d", j), owner.token); err != nil {
			return fmt.Errorf("bench: fill the mesh: %w", err)
		}
	}
	return w.setupRawMesh(ctx)
}

// setupWorker prepares one worker.
func (w *world) setupWorker(ctx context.Context, wk *worker) error {
	s := wk.store
	owner := fmt.Sprintf("bench-%04d", wk.id)
	claim, err := s.ClaimOwnerLease(ctx, owner, leaseTTL)
	if err != nil {
		return err
	}
	if claim.Kind != location.KindClaimed {
		return fmt.Errorf("claim answered %s", claim.Kind)
	}
	wk.token = claim.Token
	w.holders = append(w.holders, s.Leases().Hold(wk.token, leaseTTL, leaseEvery))
	rid := location.RoutingID(owner)
	if err := publishNode(ctx, s, owner, wk.token); err != nil {
		return err
	}
	if err := w.createActor(ctx, wk, rid); err != nil {
		return err
	}
	return w.setupRaw(ctx, wk)
}

// publishNode writes a serving server descriptor of the bench mesh.
func publishNode(ctx context.Context, s *etcdstore.Store, rid string, token location.OwnerToken) error {
	room := location.PopulationCapacity{Limit: 10}
	d := location.MeshNodeDescriptor{
		MeshName: benchMesh, RID: location.RoutingID(rid), LifecycleGeneration: 1, DescriptorRevision: 1,
		Endpoint: "tcp://" + rid + ".bench.invalid:7300", ObjectRole: location.RoleServer, PlacementWeight: 100,
		PopulationCapacity: location.Population{Actors: room, Spots: room}, ActivationConcurrency: location.ActivationConcurrency{Limit: 10},
		ChannelWeights: map[string]int64{benchMesh: 100}, ApplicationVersion: 1, SpotTypes: []string{},
		ObjectCapabilities: []location.ObjectCapability{{ObjectKind: location.ObjectActor, StableType: benchType, Policy: location.PolicyRecreate}},
		State:              location.StateServing, SecurityIdentity: "bench", OwnerID: token.OwnerID, LeaseGeneration: token.LeaseGeneration,
	}
	res, err := s.UpdateMeshNode(ctx, d, location.IntentNewClaim)
	if err != nil {
		return err
	}
	if res.Status != location.Stored {
		return fmt.Errorf("descriptor %s answered %s", rid, res.Status)
	}
	return nil
}

// createActor creates the worker's actor: authority record, then row.
func (w *world) createActor(ctx context.Context, wk *worker, rid location.RoutingID) error {
	s := wk.store
	id := fmt.Sprintf("actor-%04d", wk.id)
	key := location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: id}
	target := location.CreationTarget{MeshName: benchMesh, NodeRID: rid, NodeLifecycleGeneration: 1, Owner: wk.token}
	digest := sha256.Sum256([]byte(id))
	res, err := s.Reserve(ctx, location.ReserveRequest{Key: key,
		Intent: location.CreationIntent{StableType: benchType, RequestContentReference: "bench:" + id, RequestSHA256: digest[:], RequestEncodedSize: 1},
		Target: target, CreatingPayload: []byte("creating"), Capacity: location.CapacityVector{Actors: 1}})
	if err != nil {
		return err
	}
	if res.Kind != location.KindReserved {
		return fmt.Errorf("reserve answered %s", res.Kind)
	}
	envelope := []byte("created " + id)
	sum := sha256.Sum256(envelope)
	done, err := s.CompleteCreation(ctx, location.CompleteCreationRequest{Key: key, ReservationID: res.ReservationID,
		ExpectedStoreVersion: res.Creating.StoreVersion, Target: target,
		Completion: location.CreationCompletion{Kind: location.TerminalCreated, ReadyPayload: []byte("ready"),
			Terminal: location.TerminalPublication{
				Operation:        location.OperationIdentity{SourceNodeRID: rid, SourceNodeGeneration: 1, OperationID: location.OperationID{Low: uint64(wk.id) + 1}},
				TerminalEnvelope: envelope, TerminalEnvelopeSHA256: sum[:], OperationDeadline: time.Now().Add(time.Minute)}}})
	if err != nil {
		return err
	}
	if done.Kind != location.KindCreated {
		return fmt.Errorf("complete creation answered %s", done.Kind)
	}
	wk.version = done.Ready.StoreVersion
	wk.payload = []byte(fmt.Sprintf("state of %s: %064d", id, 0))
	if wk.authKey, err = location.EncodeAuthorityKey(location.ObjectActor, id); err != nil {
		return err
	}
	wk.actor = location.ActorLocation{MeshName: benchMesh, ActorID: id, ActorType: benchType,
		ActorRef:     location.ActorRef{ActorID: id, ObjectGeneration: done.Ready.ObjectGeneration, MeshName: benchMesh, NodeRID: rid},
		OwnerNodeRID: rid, OwnerNodeGeneration: 1, SpotKind: location.SpotEntry, SpotID: "entry", SpotGeneration: 1,
		MembershipEpoch: 1, OwnerID: wk.token.OwnerID, LeaseGeneration: wk.token.LeaseGeneration}
	row, err := s.UpdateActor(ctx, wk.actor, location.IntentNewClaim)
	if err != nil {
		return err
	}
	if row.Status != location.Stored {
		return fmt.Errorf("actor row answered %s", row.Status)
	}
	return nil
}

// setupRaw writes the worker's raw mirror keys, with the stored values.
func (w *world) setupRaw(ctx context.Context, wk *worker) error {
	s, c := wk.store, wk.client
	layout := s.Layout()
	base := fmt.Sprintf("%sw%04d/", w.rawPrefix, wk.id)
	lease, err := c.Grant(ctx, int64(leaseTTL/time.Second))
	if err != nil {
		return err
	}
	wk.rawLease = lease.ID
	ownerVal, err := valueOf(ctx, c, layout.OwnerKey(wk.token.OwnerID))
	if err != nil {
		return err
	}
	wk.rawOwnerKey = base + "owner"
	if _, err := c.Put(ctx, wk.rawOwnerKey, string(ownerVal), clientv3.WithLease(lease.ID)); err != nil {
		return err
	}
	if wk.rawActorVal, err = valueOf(ctx, c, layout.TableKey(string(location.TableActors), rules.ActorKey(wk.actor.Key()))); err != nil {
		return err
	}
	wk.rawActorKey = base + "actor"
	if wk.rawActorRev, err = put(ctx, c, wk.rawActorKey, wk.rawActorVal); err != nil {
		return err
	}
	if wk.rawAuthVal, err = valueOf(ctx, c, layout.TableKey(string(rules.TableAuthority), string(wk.authKey))); err != nil {
		return err
	}
	wk.rawAuthKey = base + "authority"
	wk.rawAuthRev, err = put(ctx, c, wk.rawAuthKey, wk.rawAuthVal)
	return err
}

// setupRawMesh copies every descriptor value of the bench mesh under the
// raw prefix.
func (w *world) setupRawMesh(ctx context.Context) error {
	c := w.clients[0]
	layout := w.stores[0].Layout()
	resp, err := c.Get(ctx, layout.TablePrefix(string(location.TableMeshNodes)), clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("bench: read descriptors: %w", err)
	}
	for i, kv := range resp.Kvs {
		if _, err := put(ctx, c, fmt.Sprintf("%smesh/%04d", w.rawPrefix, i), kv.Value); err != nil {
			return fmt.Errorf("bench: mirror descriptors: %w", err)
		}
	}
	return nil
}

// valueOf reads one key's value.
func valueOf(ctx context.Context, c *clientv3.Client, key string) ([]byte, error) {
	resp, err := c.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("key %q is missing", key)
	}
	return resp.Kvs[0].Value, nil
}

// put writes one key and returns its ModRevision.
func put(ctx context.Context, c *clientv3.Client, key string, value []byte) (int64, error) {
	resp, err := c.Put(ctx, key, string(value))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// close stops the lease holders and revokes the raw leases.
func (w *world) close(ctx context.Context) {
	for _, h := range w.holders {
		h.Close()
	}
	for _, wk := range w.workers {
		if wk.rawLease != 0 {
			_, _ = wk.client.Revoke(ctx, wk.rawLease)
		}
	}
}
