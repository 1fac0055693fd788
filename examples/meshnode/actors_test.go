package main

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zlink-systems/zlink-etcd/examples/meshnode/config"
	"github.com/zlink-systems/zlink-etcd/examples/meshnode/statedoc"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// heldActorStore passes the writer's calls to an in-memory store, except
// that the first call of step held waits for release; it records the
// steps called and how the held call's context stood when released.
type heldActorStore struct {
	*memstore.Store
	held             string
	entered, release chan struct{}

	mu     sync.Mutex
	steps  []string
	waited bool
	ctxErr error
}

func (s *heldActorStore) call(ctx context.Context, step string) {
	s.mu.Lock()
	s.steps = append(s.steps, step)
	first := step == s.held && !s.waited
	s.waited = s.waited || first
	s.mu.Unlock()
	if !first {
		return
	}
	close(s.entered)
	<-s.release
	s.mu.Lock()
	s.ctxErr = ctx.Err()
	s.mu.Unlock()
}

func (s *heldActorStore) Reserve(ctx context.Context, r location.ReserveRequest) (location.ReserveResult, error) {
	s.call(ctx, "reserve")
	return s.Store.Reserve(ctx, r)
}

func (s *heldActorStore) CompleteCreation(ctx context.Context, r location.CompleteCreationRequest) (location.CompleteCreationResult, error) {
	s.call(ctx, "complete")
	return s.Store.CompleteCreation(ctx, r)
}

func (s *heldActorStore) UpdateActor(ctx context.Context, a location.ActorLocation, intent location.WriteIntent) (location.WriteResult, error) {
	s.call(ctx, "row")
	return s.Store.UpdateActor(ctx, a, intent)
}

// The writer, stopped while one of its steps is in flight, lets that step
// finish (its context is not cancelled: a write cancelled on its way could
// still land after the node's Leave removed its rows) and sends nothing
// after it.
func TestActorWriterFinishesTheStepInFlight(t *testing.T) {
	for _, tc := range []struct {
		held      string
		wantSteps []string
		want      statedoc.ActorStats
	}{
		{"reserve", []string{"reserve"}, statedoc.ActorStats{}},
		{"complete", []string{"reserve", "complete"}, statedoc.ActorStats{Created: 1}},
		{"row", []string{"reserve", "complete", "row"}, statedoc.ActorStats{Created: 1, RowStored: 1}},
	} {
		t.Run(tc.held, func(t *testing.T) {
			store := &heldActorStore{Store: memstore.New(memstore.Options{}), held: tc.held,
				entered: make(chan struct{}), release: make(chan struct{})}
			w := newTestActorWriter(t, store)

			ctx, stop := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); w.run(ctx) }()
			<-store.entered
			stop()
			select {
			case <-done:
				t.Fatal("the writer returned with a step in flight")
			default:
			}
			close(store.release)
			<-done

			store.mu.Lock()
			defer store.mu.Unlock()
			if store.ctxErr != nil {
				t.Errorf("the step in flight saw its context end: %v", store.ctxErr)
			}
			if !slices.Equal(store.steps, tc.wantSteps) {
				t.Errorf("steps called: %v, want %v", store.steps, tc.wantSteps)
			}
			if got := w.Stats(); got != tc.want {
				t.Errorf("stats: %+v, want %+v", got, tc.want)
			}
		})
	}
}

// newTestActorWriter joins a node "n" of mesh "m" to store (no dialing)
// and returns a writer creating an actor every millisecond on it.
func newTestActorWriter(t *testing.T, store *heldActorStore) *actorWriter {
	t.Helper()
	cfg, err := config.Parse([]string{"--endpoints=http://127.0.0.1:1", "--mesh=m", "--node-id=n", "--advertise=127.0.0.1:1", "--dial-peers=false"},
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	node, exec, err := joinLogOnly(t.Context(), cfg, store.Store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := node.Leave(context.Background()); err != nil {
			t.Errorf("leave: %v", err)
		}
		exec.Close()
	})
	m, err := newActorMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return &actorWriter{store: store, node: node, mesh: cfg.Mesh, nodeID: cfg.NodeID, interval: time.Millisecond,
		log: slog.New(slog.DiscardHandler), m: m}
}
