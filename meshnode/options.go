package meshnode

import (
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/session"
)

// Store is what a node needs of a location store; memstore.Store and
// etcdstore.Store implement it. A node also uses these optional
// capabilities when the store has them: location.OwnerLeaseKeeper
// (renewals without writes, and a lease loss noticed at once),
// location.ChangeWatcher (a tick right after a change) and
// location.MeshNodeChangeStamper (ticks skipped while nothing changed).
type Store interface {
	location.OwnerLeaseStore
	location.MeshNodeStore
	location.PeerStore
	location.OwnerCleanup
}

// Defaults of Options.RejoinBackoff.
const (
	DefaultRejoinInitialWait = 200 * time.Millisecond
	DefaultRejoinMaxWait     = 5 * time.Second
)

// Codes of the InputErrors Join answers for bad Options (the descriptor's
// own validation answers location's meshnode.* codes).
const (
	// CodeStore: Options.Store is nil.
	CodeStore = "node.store"
	// CodeExecutor: Options.Executor is nil.
	CodeExecutor = "node.executor"
	// CodeDescriptor: the descriptor has no routing id.
	CodeDescriptor = "node.descriptor"
	// CodeBackoff: a rejoin wait is negative, or Max is below Initial.
	CodeBackoff = "node.backoff"
)

// maxInitialLifecycle bounds a drawn first lifecycle generation: the
// framework's range for this equality token (2^53 − 1, the integers a
// JavaScript number holds exactly).
const maxInitialLifecycle = 1<<53 - 1

// Options configure a Node. Store, Executor and the descriptor's MeshName,
// RID and OwnerID are required; every other zero value means its default.
type Options struct {
	// Store is the location store. Required.
	Store Store
	// Executor is the transport: the auto-connect loop tells it which peers
	// to connect to and to disconnect from. Required. Connect's context
	// carries the incarnation the call acts for (IncarnationFrom), so that
	// an executor can refuse to connect for a lease that is no longer
	// trusted. When a lease ends while a tick is in flight, Disconnect
	// may be called twice for one target (by the node, which disconnects
	// at once, and by the tick): it must be idempotent. An executor that
	// is an autoconnect.DisconnectNotifier gets one handler per
	// incarnation; the handlers of ended incarnations do nothing and may
	// be dropped.
	Executor autoconnect.Executor
	// Descriptor is the node's mesh-node descriptor. MeshName, RID and
	// OwnerID (the node's owner id, one per node process) are required.
	// The node sets LeaseGeneration (its current lease) and UpdatedAt.
	// LifecycleGeneration is the first one the node publishes; 0 draws a
	// random one in 1..2^53−1, as the framework does (it is compared for
	// equality only: a restarted process must not reuse its
	// predecessor's). Every lease the node claims after that publishes the
	// next one (+1), so a rejoin always does. DescriptorRevision 0 means 1.
	Descriptor location.MeshNodeDescriptor
	// PublishPeerRow makes the node also publish a peer row about itself
	// (autoconnect.PeerFromMeshNode of its descriptor), for peers that
	// list the peer table rather than the descriptors.
	PublishPeerRow bool
	// Session configures the owner-lease session of every incarnation
	// (TTL, renew interval and timeout, fencing margin; see package
	// session). Its Clock is the node's clock (nil: the process's), used
	// by the auto-connect loop too; its Logger defaults to Logger; its
	// OnRenewal is called as the session calls it.
	Session session.Options
	// AutoConnect is the auto-connect timing (polling interval, store
	// failure grace, page size). A nil OwnerLeaseTTL (the recovery window
	// after a store failure) means the session's TTL.
	AutoConnect autoconnect.Options
	// DisableWatch makes the loop poll only, even when the store can push
	// change notifications.
	DisableWatch bool
	// NoRejoin makes the node leave for good when its session ends (Done
	// closes, Err says why) instead of rejoining with a new lease.
	NoRejoin bool
	// RejoinBackoff spaces the attempts to join or rejoin after a failed
	// one.
	RejoinBackoff Backoff
	// Logger receives the node's logs (and its session's and loop's):
	// Warn for a lost lease and failed attempts, Info for joins and
	// leaves. nil discards them.
	Logger *slog.Logger
	// OnEvent, when set, receives the node's events (see Event), possibly
	// from several goroutines at once. It must be quick and must not call
	// Leave, Close or Orphan (they wait for the goroutine that calls it).
	OnEvent func(Event)
	// Metrics, when set, receives what the node's sessions and loops
	// report (an *observe.NodeMetrics): every incarnation's renewals and
	// session (TrackSession after each claim), its loop's ticks and
	// desired-set changes, and, through SetAutoConnect (called once by
	// Join), the node's desired and connected counts at scrape. For the
	// health probes the node itself is a health.Session (Valid, Status)
	// and a health.StoreFailer (StoreFailed) over its current
	// incarnation.
	Metrics observe.NodeHooks
}

// Backoff is a jittered exponential wait: each wait is drawn from [d/2, d],
// d starting at Initial and doubling up to Max.
type Backoff struct {
	// Initial is the first wait; 0 means DefaultRejoinInitialWait.
	Initial time.Duration
	// Max bounds the waits; 0 means DefaultRejoinMaxWait.
	Max time.Duration
}

// resolved is Options with the defaults applied and the derived values.
type resolved struct {
	Options
	clock clock.Clock
	log   *slog.Logger
	// local is the node's side of auto-connect, localRow its peer row
	// (nil unless PublishPeerRow).
	local    autoconnect.Local
	localRow *location.PeerLocation
}

// resolve checks o and applies the defaults. Errors are
// *location.InputError.
func (o Options) resolve() (resolved, error) {
	switch {
	case o.Store == nil:
		return resolved{}, location.NewTypeError(CodeStore, "a mesh node needs a store (Options.Store)")
	case o.Executor == nil:
		return resolved{}, location.NewTypeError(CodeExecutor, "a mesh node needs an executor (Options.Executor): the transport it connects and disconnects")
	case o.Descriptor.RID == "":
		return resolved{}, location.NewTypeError(CodeDescriptor, "the mesh-node descriptor has no routing id (Descriptor.RID)")
	}
	b := &o.RejoinBackoff
	switch {
	case b.Initial < 0 || b.Max < 0:
		return resolved{}, location.NewRangeError(CodeBackoff, "rejoin backoff %v..%v: waits must not be negative (0 means the default)", b.Initial, b.Max)
	case b.Initial == 0:
		b.Initial = DefaultRejoinInitialWait
		if b.Max > 0 {
			b.Initial = min(b.Initial, b.Max)
		}
	}
	if b.Max == 0 {
		b.Max = max(DefaultRejoinMaxWait, b.Initial)
	}
	if b.Max < b.Initial {
		return resolved{}, location.NewRangeError(CodeBackoff, "rejoin backoff: Max %v is below Initial %v", b.Max, b.Initial)
	}

	d := &o.Descriptor
	d.UpdatedAt = time.Time{}
	if d.DescriptorRevision == 0 {
		d.DescriptorRevision = 1
	}
	if d.LifecycleGeneration == 0 {
		d.LifecycleGeneration = 1 + rand.Int64N(maxInitialLifecycle)
	}
	// The lease generation is the node's to set; any positive value lets
	// the descriptor be checked now, before anything is written.
	check := *d
	check.LeaseGeneration = 1
	if err := location.ValidateMeshNode(check, location.IntentNewClaim); err != nil {
		return resolved{}, err
	}

	r := resolved{Options: o, clock: o.Session.Clock, log: o.Logger}
	if r.clock == nil {
		r.clock = clock.System()
	}
	r.Session.Clock = r.clock
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.log = r.log.With("mesh", d.MeshName, "rid", string(d.RID))
	if r.Session.Logger == nil {
		r.Session.Logger = r.log // the session names the owner itself
	}
	r.log = r.log.With("owner", d.OwnerID)
	if r.AutoConnect.OwnerLeaseTTL == nil {
		ttl := r.Session.TTL
		if ttl == 0 {
			ttl = session.DefaultTTL
		}
		r.AutoConnect.OwnerLeaseTTL = &ttl
	}
	rid := d.RID
	r.local = autoconnect.Local{
		AutoConnectType: location.AutoConnectRouteMesh, MeshName: d.MeshName, Role: location.PeerRoleRouter,
		NodeRID: &rid, Endpoint: d.Endpoint, ObjectRole: d.ObjectRole, HasRouteMeshServerChannel: len(d.ChannelWeights) > 0,
	}
	if o.PublishPeerRow {
		row := autoconnect.PeerFromMeshNode(d)
		row.Generation = 0 // the store issues it
		row.UpdatedAt = time.Time{}
		if err := location.ValidatePeer(row, location.IntentNewClaim); err != nil {
			return resolved{}, err
		}
		r.localRow = &row
	}
	return r, nil
}

// jitter returns a duration drawn uniformly from [d/2, d].
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(d-half+1)
}
