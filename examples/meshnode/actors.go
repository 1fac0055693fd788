package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zlink-systems/zlink-etcd/examples/meshnode/statedoc"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/meshnode"
)

// actorType is the stable type of the example's actors; the node's
// descriptor offers it (descriptor).
const actorType = "example.actor"

// actorStore is what the actor writer needs of the store.
type actorStore interface {
	Reserve(ctx context.Context, r location.ReserveRequest) (location.ReserveResult, error)
	CompleteCreation(ctx context.Context, r location.CompleteCreationRequest) (location.CompleteCreationResult, error)
	UpdateActor(ctx context.Context, a location.ActorLocation, intent location.WriteIntent) (location.WriteResult, error)
}

// actorWriter is the application work of the example (--actor-interval):
// once per interval it creates one actor on its own node through the
// authority API (reserve, then complete the creation) and writes the
// actor's location row, all under the node's current lease. It acts only
// while that lease is trusted, checks again before each step, and bounds
// each step by the lease's trust (session.Session.WhileTrusted: its end or
// its trust deadline): a node that stopped trusting its lease writes
// nothing more. Each write the store acknowledged is
// logged at Info ("actor created", "actor row stored") with what identifies
// it in the store: the acknowledged-write log that the cluster test checks
// against zlinketcd inspect.
type actorWriter struct {
	store    actorStore
	node     *meshnode.Node
	mesh     string
	nodeID   string
	interval time.Duration
	log      *slog.Logger
	m        actorMetrics

	mu    sync.Mutex
	stats statedoc.ActorStats
}

// actorMetrics are the writer's counters.
type actorMetrics struct {
	created, rows prometheus.Counter
	failures      *prometheus.CounterVec
}

func newActorMetrics(reg prometheus.Registerer) (actorMetrics, error) {
	m := actorMetrics{
		created: prometheus.NewCounter(prometheus.CounterOpts{Name: "zlink_example_actors_created_total",
			Help: "Actors whose creation the store acknowledged (authority record active)."}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{Name: "zlink_example_actor_rows_stored_total",
			Help: "Actor location rows the store acknowledged."}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zlink_example_actor_failures_total",
			Help: "Actor creations that failed, by step (reserve, complete, row)."}, []string{"step"}),
	}
	for _, c := range []prometheus.Collector{m.created, m.rows, m.failures} {
		if err := reg.Register(c); err != nil {
			return m, fmt.Errorf("register the actor metrics: %w", err)
		}
	}
	return m, nil
}

// run creates actors until ctx ends. A creation under way when ctx ends
// stops before its next step; the step in flight, if any, is waited for
// (step), so that the node's Leave, which follows, removes every row the
// writer wrote.
func (w *actorWriter) run(ctx context.Context) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	var seq uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		inc := w.node.Incarnation()
		if inc.Session == nil || !inc.Session.Valid() {
			w.note(func(s *statedoc.ActorStats) { s.Skipped++ })
			continue
		}
		seq++
		if err := w.create(ctx, inc, seq); err != nil && ctx.Err() == nil {
			w.log.Warn("actor creation failed", "err", err)
			w.note(func(s *statedoc.ActorStats) { s.Failed++; s.LastError = err.Error() })
		}
	}
}

// Stats returns the writer's counts.
func (w *actorWriter) Stats() statedoc.ActorStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

func (w *actorWriter) note(f func(*statedoc.ActorStats)) {
	w.mu.Lock()
	f(&w.stats)
	w.mu.Unlock()
}

// step runs one store call of incarnation inc, unless stop has ended or
// the lease is no longer trusted. The call is bounded by the lease's trust
// (session.Session.WhileTrusted), not by stop: a write already sent still
// runs to its outcome when stop ends, so that when the writer returns none
// of its writes is still on its way (a write cancelled after it was sent
// may still be applied by etcd later, after the node's Leave removed its
// rows: a row it creates would be left behind). It is cancelled when the
// lease ends (lost, fenced, closed) or its trust deadline, as it stood
// when the step began, passes on the session's clock: the write's outcome
// no longer matters then, as every write under the lease is fenced in etcd
// by the lease's owner key.
func step[T any](stop context.Context, inc meshnode.Incarnation, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := stop.Err(); err != nil {
		return zero, fmt.Errorf("the writer was stopped: %w", err)
	}
	if !inc.Session.Valid() {
		return zero, fmt.Errorf("the lease of incarnation %d is no longer trusted: nothing more is written under it", inc.Number)
	}
	ctx, cancel := inc.Session.WhileTrusted(context.WithoutCancel(stop))
	defer cancel()
	return call(ctx)
}

// create creates actor number seq of incarnation inc on this node.
func (w *actorWriter) create(ctx context.Context, inc meshnode.Incarnation, seq uint64) error {
	id := fmt.Sprintf("%s.%d.%d", w.nodeID, inc.LifecycleGeneration, seq)
	key := location.ObjectCreationKey{Kind: location.ObjectActor, GlobalID: id}
	rid := location.RoutingID(w.nodeID)
	target := location.CreationTarget{MeshName: w.mesh, NodeRID: rid, NodeLifecycleGeneration: inc.LifecycleGeneration, Owner: inc.Token}
	request := []byte("create " + id)
	digest := sha256.Sum256(request)

	reserved, err := step(ctx, inc, func(ctx context.Context) (location.ReserveResult, error) {
		return w.store.Reserve(ctx, location.ReserveRequest{Key: key, Target: target,
			Intent: location.CreationIntent{StableType: actorType, RequestContentReference: "meshnode:" + id,
				RequestSHA256: digest[:], RequestEncodedSize: int64(len(request))},
			CreatingPayload: []byte("creating " + id), Capacity: location.CapacityVector{Actors: 1}})
	})
	if err == nil && reserved.Kind != location.KindReserved {
		err = fmt.Errorf("the store answered %s", reserved.Kind)
	}
	if err != nil {
		w.m.failures.WithLabelValues("reserve").Inc()
		return fmt.Errorf("actor %s: reserve: %w", id, err)
	}

	envelope := []byte("created " + id)
	sum := sha256.Sum256(envelope)
	done, err := step(ctx, inc, func(ctx context.Context) (location.CompleteCreationResult, error) {
		return w.store.CompleteCreation(ctx, location.CompleteCreationRequest{Key: key, ReservationID: reserved.ReservationID,
			ExpectedStoreVersion: reserved.Creating.StoreVersion, Target: target,
			Completion: location.CreationCompletion{Kind: location.TerminalCreated, ReadyPayload: []byte("ready " + id),
				Terminal: location.TerminalPublication{
					Operation:        location.OperationIdentity{SourceNodeRID: rid, SourceNodeGeneration: inc.LifecycleGeneration, OperationID: location.OperationID{Low: seq}},
					TerminalEnvelope: envelope, TerminalEnvelopeSHA256: sum[:], OperationDeadline: time.Now().Add(time.Minute),
				}}})
	})
	if err == nil && done.Kind != location.KindCreated {
		err = fmt.Errorf("the store answered %s", done.Kind)
	}
	if err != nil {
		w.m.failures.WithLabelValues("complete").Inc()
		return fmt.Errorf("actor %s: complete its reserved creation (reservation %s left pending): %w", id, reserved.ReservationID, err)
	}
	authority, err := location.EncodeAuthorityKey(location.ObjectActor, id)
	if err != nil {
		return fmt.Errorf("actor %s: %w", id, err)
	}
	w.m.created.Inc()
	w.note(func(s *statedoc.ActorStats) { s.Created++ })
	w.log.Info("actor created", "actor", id, "authorityKey", string(authority), "storeVersion", string(done.Ready.StoreVersion),
		"objectGeneration", done.Ready.ObjectGeneration, "leaseGeneration", inc.Token.LeaseGeneration, "lifecycle", inc.LifecycleGeneration)

	row := location.ActorLocation{
		MeshName: w.mesh, ActorID: id, ActorType: actorType,
		ActorRef:     location.ActorRef{ActorID: id, ObjectGeneration: done.Ready.ObjectGeneration, MeshName: w.mesh, NodeRID: rid},
		OwnerNodeRID: rid, OwnerNodeGeneration: inc.LifecycleGeneration,
		SpotKind: location.SpotEntry, SpotID: "entry-" + w.nodeID, SpotGeneration: 1, MembershipEpoch: 1,
		OwnerID: inc.Token.OwnerID, LeaseGeneration: inc.Token.LeaseGeneration,
	}
	stored, err := step(ctx, inc, func(ctx context.Context) (location.WriteResult, error) {
		return w.store.UpdateActor(ctx, row, location.IntentNewClaim)
	})
	if err == nil && stored.Status != location.Stored {
		err = fmt.Errorf("the store answered %s", stored.Status)
	}
	if err != nil {
		w.m.failures.WithLabelValues("row").Inc()
		return fmt.Errorf("actor %s: write its location row: %w", id, err)
	}
	w.m.rows.Inc()
	w.note(func(s *statedoc.ActorStats) { s.RowStored++ })
	w.log.Info("actor row stored", "actor", id, "mesh", w.mesh, "rowGeneration", stored.Generation,
		"leaseGeneration", inc.Token.LeaseGeneration)
	return nil
}
