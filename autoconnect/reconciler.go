package autoconnect

import (
	"cmp"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// ReconcilerOptions configure a Reconciler.
type ReconcilerOptions struct {
	// Local describes this process. Its endpoint is normalised.
	Local Local
	// LocalRow, when set, is the peer row this process publishes about
	// itself (with its OwnerID); it is copied and its endpoint normalised
	// once, so the written row and the row removed at shutdown agree. The
	// RouteMesh production wiring has none.
	LocalRow *location.PeerLocation
	// Publisher writes, removes and reads back LocalRow. Required when
	// LocalRow is set.
	Publisher PeerPublisher
	// Source lists the live peers. Required unless PublishOnly.
	Source PeerSource
	// Executor is the transport. Required.
	Executor Executor
	// PublishOnly makes ticks publish LocalRow and do nothing else.
	PublishOnly bool
	// Events receives one DesiredSetChange per tick that changed something;
	// nil discards them.
	Events EventSink
	// Options supplies OwnerLeaseTTL (the recovery window) and
	// StoreFailureGrace.
	Options Options
	// Clock is the monotonic clock; nil means SystemClock().
	Clock Clock
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// Reconciler keeps the executor's connections in line with the live peers,
// one Tick at a time. Safe for concurrent use: ticks are serialised, and the
// observers and the transport's loss handler may run at any time.
type Reconciler struct {
	local       Local
	localRow    *location.PeerLocation
	publisher   PeerPublisher
	source      PeerSource
	executor    Executor
	prober      DisconnectProber
	sweeper     StalePeerSweeper
	notRequired NotRequiredReceiver
	expecter    PeerExpecter
	publishOnly bool
	events      EventSink
	timing      timing
	clock       Clock
	log         *slog.Logger

	// tickMu serialises ticks.
	tickMu sync.Mutex

	// mu guards every field below. It is never held while the executor,
	// the publisher, the source or the event sink runs.
	mu sync.Mutex
	// active holds the targets believed connected.
	active *targetMap
	// pending holds old targets of a key whose connection is still closing.
	pending *targetMap
	// failed holds endpoints the transport reported lost.
	failed map[string]struct{}
	// localGeneration is the row generation of the published local row; 0
	// when unknown (never published, or a claim's answer was lost).
	localGeneration int64
	// localPublished says the local row is believed present.
	localPublished bool
	// rejectedPublications counts the publications rejected in a row;
	// publicationWarned says a warning was logged for the streak, at
	// publicationWarnedAt.
	rejectedPublications int
	publicationWarned    bool
	publicationWarnedAt  time.Duration
	// storeFailed says the last store interaction failed.
	storeFailed bool
	// failureStart is when the current failure streak began (valid when
	// failureStarted).
	failureStart   time.Duration
	failureStarted bool
	// recoveryDeferUntil is when the recovery window after a failure ends.
	recoveryDeferUntil time.Duration
	// removalsDeferred says the last tick skipped removals (recovery
	// window).
	removalsDeferred bool
	// lastDesired is the desired set of the last successful listing.
	lastDesired *targetMap
	// members holds the rids of the last successful listing; nil before it.
	members map[location.RoutingID]struct{}
}

// NewReconciler checks opts and returns a reconciler with nothing connected.
// When the executor is a DisconnectNotifier, the reconciler registers its
// loss handler here.
func NewReconciler(opts ReconcilerOptions) (*Reconciler, error) {
	if opts.Executor == nil {
		return nil, location.NewTypeError("autoconnect.executor", "reconciler needs an executor")
	}
	if opts.Source == nil && !opts.PublishOnly {
		return nil, location.NewTypeError("autoconnect.source", "reconciler needs a peer source unless it only publishes")
	}
	if opts.LocalRow != nil && opts.Publisher == nil {
		return nil, location.NewTypeError("autoconnect.publisher", "reconciler needs a publisher for its local row")
	}
	t, err := opts.Options.resolve()
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		local:       cloneLocal(opts.Local),
		publisher:   opts.Publisher,
		source:      opts.Source,
		executor:    opts.Executor,
		publishOnly: opts.PublishOnly,
		events:      opts.Events,
		timing:      t,
		clock:       cmp.Or(opts.Clock, SystemClock()),
		log:         cmp.Or(opts.Logger, slog.Default()),
		active:      newTargetMap(0),
		pending:     newTargetMap(0),
		failed:      map[string]struct{}{},
		lastDesired: newTargetMap(0),
	}
	r.local.Endpoint = keys.NormalizeEndpoint(r.local.Endpoint)
	if opts.LocalRow != nil {
		row := clonePeer(*opts.LocalRow)
		row.Endpoint = keys.NormalizeEndpoint(row.Endpoint)
		r.localRow = &row
	}
	r.prober, _ = opts.Executor.(DisconnectProber)
	r.sweeper, _ = opts.Executor.(StalePeerSweeper)
	r.notRequired, _ = opts.Executor.(NotRequiredReceiver)
	r.expecter, _ = opts.Executor.(PeerExpecter)
	if n, ok := opts.Executor.(DisconnectNotifier); ok {
		n.OnDisconnected(r.recordLostEndpoint)
	}
	return r, nil
}

// StoreFailed reports whether the last store interaction failed.
func (r *Reconciler) StoreFailed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.storeFailed
}

// LocalPublicationReady reports whether the local row is believed published.
func (r *Reconciler) LocalPublicationReady() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.localPublished
}

// ActiveTargets returns the targets believed connected, in the order they
// became active. An active target keeps the values it was connected with
// (a later metadata change of the same key does not refresh it).
func (r *Reconciler) ActiveTargets() []Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneTargets(r.active.list())
}

// DesiredTargets returns the desired set of the last successful listing:
// the targets the reconciler dials or keeps (a draining peer already
// connected stays desired), in planner order. It is empty before the first
// listing; a store failure leaves it as it was.
func (r *Reconciler) DesiredTargets() []Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneTargets(r.lastDesired.list())
}

// KnowsPeer says whether nodeRID was among the rows of the last successful
// listing (the local node's own row included when it was listed). known is
// false before the first successful listing.
func (r *Reconciler) KnowsPeer(nodeRID location.RoutingID) (member, known bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.members == nil {
		return false, false
	}
	_, member = r.members[nodeRID]
	return member, true
}

// ChangeWatch implements WatchableSource by asking the reconciler's source.
func (r *Reconciler) ChangeWatch() (location.ChangeWatcher, []location.Table, bool) {
	if ws, ok := r.source.(WatchableSource); ok && !r.publishOnly {
		return ws.ChangeWatch()
	}
	return nil, nil, false
}

// cloneLocal deep-copies a Local.
func cloneLocal(l Local) Local {
	l.NodeRID = cloneRID(l.NodeRID)
	return l
}

// clonePeer deep-copies a peer row.
func clonePeer(p location.PeerLocation) location.PeerLocation {
	p.NodeRID = cloneRID(p.NodeRID)
	p.Metadata = maps.Clone(p.Metadata)
	p.Capabilities = slices.Clone(p.Capabilities)
	return p
}
