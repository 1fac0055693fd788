package meshnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/observe"
	"github.com/zlink-systems/zlink-etcd/session"
)

// Node is one mesh node: it owns one owner-lease session at a time,
// publishes its descriptor (and peer row), runs the auto-connect loop with
// the caller's executor, fences itself when its lease ends and rejoins,
// and leaves in the documented order. See the package documentation. Safe
// for concurrent use.
type Node struct {
	o       resolved
	store   Store
	loopClk loopClock
	log     *slog.Logger
	tracker *autoconnect.LeaseTracker
	stamps  location.MeshNodeChangeStamper

	// life carries the values of Join's context and is never cancelled:
	// sessions live in it. stopCtx ends when Leave or Orphan starts; the
	// supervisor and every join attempt stop with it.
	life    context.Context
	stopCtx context.Context
	stop    context.CancelCauseFunc
	// wg counts the supervisor goroutine.
	wg   sync.WaitGroup
	done chan struct{}

	leaveOnce sync.Once
	leaveErr  error

	// mu guards the fields below. It is never held while the store, the
	// executor, a session, a loop or OnEvent is called.
	mu            sync.Mutex
	phase         Phase
	cur           *incarnation
	claimed       int64
	lifecycle     int64
	lastLifecycle bool
	// pendingRelease is the lease of an ended incarnation that may still
	// live in the store (its session ended by its deadline, not by a loss)
	// and that no release confirmed yet.
	pendingRelease *location.OwnerToken
	ticks          int64
	lastTick       TickReport
	losses         int64
	lastLoss       error
	lastLossAt     time.Time
	attempts       int
	lastAttemptErr error
	err            error
}

// Join claims an owner lease for the descriptor's owner id, publishes the
// descriptor (and, with PublishPeerRow, the peer row), starts the
// auto-connect loop and returns once its first tick ran: the node is
// joined. Options are checked first: bad ones are a *location.InputError
// and nothing is written.
//
// Failed attempts are tried again after a jittered wait
// (Options.RejoinBackoff) until ctx ends: an unreachable store (claims are
// retried by the session), the owner id still holding a live lease
// (session.ErrLeaseHeld: a previous process of this owner id; its lease
// expires within its TTL), a lease lost while joining. A descriptor the
// store refuses (ErrDescriptorRejected) and exhausted lease generations end
// Join at once; its error says what to fix. A failed Join leaves nothing
// behind that it could remove.
//
// ctx bounds the joining only, and its values are kept for the node's
// life; the node runs until Leave, Close or Orphan (or, with NoRejoin,
// until its session ends).
func Join(ctx context.Context, opts Options) (*Node, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, fmt.Errorf("meshnode: %w", err)
	}
	n := &Node{
		o: o, store: o.Store, log: o.log,
		loopClk: loopClock{c: o.clock, origin: o.clock.Now()},
		life:    context.WithoutCancel(ctx),
		done:    make(chan struct{}),
		phase:   PhaseJoining, lifecycle: o.Descriptor.LifecycleGeneration,
	}
	n.stopCtx, n.stop = context.WithCancelCause(n.life)
	n.stamps, _ = o.Store.(location.MeshNodeChangeStamper)
	n.tracker, err = autoconnect.NewLeaseTracker(autoconnect.LeaseTrackerOptions{Store: o.Store, Options: o.AutoConnect, Clock: n.loopClk})
	if err != nil {
		return nil, fmt.Errorf("meshnode: %w", err)
	}
	// The auto-connect options are checked before anything is written.
	first, err := n.newIncarnation()
	if err != nil {
		return nil, fmt.Errorf("meshnode: %w", err)
	}
	inc, err := n.join(ctx, false, first)
	if err != nil {
		n.stop(err)
		return nil, fmt.Errorf("meshnode: join mesh %q as %s (owner %q): %w", o.Descriptor.MeshName, o.Descriptor.RID, o.Descriptor.OwnerID, err)
	}
	if o.Metrics != nil {
		o.Metrics.SetAutoConnect(n.autoConnectStatus)
	}
	n.wg.Add(1)
	go n.supervise(inc)
	return n, nil
}

// Done is closed when the node has ended for good: after Leave, Close or
// Orphan, or when its session ended and it does not rejoin (NoRejoin, or
// exhausted lease generations). Err says why.
func (n *Node) Done() <-chan struct{} { return n.done }

// Err returns nil until the node ends, then why: ErrLeft, ErrOrphaned, or
// the error that ended it (with NoRejoin, the session's: it wraps
// session.ErrLeaseLost or session.ErrDeadlinePassed).
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Incarnation returns the current incarnation (the last one while the
// node rejoins, or after it ended).
func (n *Node) Incarnation() Incarnation {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cur == nil {
		return Incarnation{}
	}
	return n.cur.public()
}

// ActiveTargets returns the peers the current incarnation believes
// connected (none once it ended), as autoconnect.Reconciler.ActiveTargets.
func (n *Node) ActiveTargets() []autoconnect.Target {
	inc, fenced := n.current()
	if inc == nil || fenced {
		return nil
	}
	return inc.rec.ActiveTargets()
}

// State returns a snapshot of the node (see State).
func (n *Node) State() State {
	n.mu.Lock()
	st := State{
		Phase: n.phase, Ticks: n.ticks, LastTick: n.lastTick, LeaseLosses: n.losses, LastLoss: n.lastLoss,
		LastLossAt: n.lastLossAt, JoinAttempts: n.attempts, LastJoinError: n.lastAttemptErr, Err: n.err,
	}
	inc := n.cur
	var fenced bool
	if inc != nil {
		st.Incarnation, st.JoinedAt, fenced = inc.public(), inc.joinedAt, inc.fenced
	}
	n.mu.Unlock()
	if inc == nil {
		return st
	}
	st.Session = inc.sess.Status()
	st.Trusted = inc.sess.Valid()
	st.StoreFailed = inc.rec.StoreFailed()
	st.PeerRowPublished = n.o.localRow != nil && !fenced && inc.rec.LocalPublicationReady()
	if !fenced {
		st.Desired = len(inc.rec.DesiredTargets())
		st.Connected = len(inc.rec.ActiveTargets())
	}
	return st
}

// Valid reports whether the node's current incarnation runs and its lease
// may be trusted now (session.Session.Valid). With Status it makes the
// node a health.Session: health.SessionCheck(node) follows the node
// across rejoins.
func (n *Node) Valid() bool {
	inc, fenced := n.current()
	return inc != nil && !fenced && inc.sess.Valid()
}

// Status returns the session status of the current incarnation (the last
// one while the node rejoins, or after it ended).
func (n *Node) Status() session.Status {
	inc, _ := n.current()
	if inc == nil {
		return session.Status{}
	}
	return inc.sess.Status()
}

// StoreFailed reports whether the current incarnation's last tick ended in
// a store failure (the loop keeps its connections and retries); it makes
// the node a health.StoreFailer.
func (n *Node) StoreFailed() bool {
	inc, _ := n.current()
	return inc != nil && inc.rec.StoreFailed()
}

// autoConnectStatus is the node's auto-connect status for
// Options.Metrics: the current incarnation's desired and connected counts
// (0 once it ended).
func (n *Node) autoConnectStatus() observe.AutoConnectStatus {
	inc, fenced := n.current()
	if inc == nil || fenced {
		return observe.AutoConnectStatus{}
	}
	return observe.AutoConnectStatus{Desired: len(inc.rec.DesiredTargets()), Connected: len(inc.rec.ActiveTargets())}
}

// Leave ends the node gracefully, in this order: no rejoin any more; the
// loop stops (its tick in flight finishes, within ctx and while the lease
// is trusted, see autoconnect.Loop.Stop; every peer disconnected, the peer
// row removed); the store's RemoveAllByOwner removes every row of the
// owner id (the descriptor included) while the lease is live, tried again
// after failures until ctx ends; the session closes, releasing the lease.
// Releasing first would make the removal a no-op. When the lease already
// ended, nothing is written: the loop stops without removing anything (the
// rows go when the garbage collector finds their owner dead), and a lease
// that may still live is released. Done is closed when Leave returns; the
// error joins the steps' errors. Leave is idempotent (later calls return
// the first one's result), and does nothing after Orphan.
//
// The application's own writes under the node's lease must have ended
// before Leave, and not by cancellation: a write whose context ends after
// it was sent may still be applied by etcd after the removal (a row it
// creates then stays until the garbage collector finds its owner dead).
// Stop issuing writes, and wait for the ones in flight to return.
func (n *Node) Leave(ctx context.Context) error {
	n.leaveOnce.Do(func() { n.leaveErr = n.leave(ctx) })
	return n.leaveErr
}

// Close is Leave, so that a node closes like other resources.
func (n *Node) Close(ctx context.Context) error { return n.Leave(ctx) }

// Orphan ends the node as a crash would: the loop stops and disconnects
// every peer, and nothing is written: the rows stay and the lease is left
// to expire at its TTL (or to be adopted, session.Adopt, with the returned
// token). Done is closed when it returns. Orphan does nothing after Leave.
func (n *Node) Orphan() location.OwnerToken {
	var tok location.OwnerToken
	n.leaveOnce.Do(func() {
		n.halt(ErrOrphaned)
		if inc, fenced := n.current(); inc != nil {
			tok = inc.token
			if fenced {
				<-inc.loopStopped
			} else {
				inc.rec.DisconnectPeers()
				inc.loop.PrepareTransportShutdown()
				n.markFenced(inc)
				inc.sess.Orphan()
				inc.endSessionContext()
			}
		}
		n.finish(ErrOrphaned)
	})
	return tok
}

// leave is Leave's body.
func (n *Node) leave(ctx context.Context) error {
	if n.ended() {
		return nil
	}
	n.setPhase(PhaseLeaving)
	n.halt(ErrLeft)
	inc, fenced := n.current()
	var errs []error
	switch {
	case inc == nil:
	case fenced:
		<-inc.loopStopped
		errs = append(errs, n.releasePending(ctx))
	case inc.sess.Valid():
		// The loop's tick in flight finishes before the removals (a write
		// of it cancelled on its way could land after them); removing
		// rows once the lease is not trusted any more is pointless, so
		// the wait ends then too: at the session's end or its trust
		// deadline as it stands now, on the session's clock (the node's).
		sctx, cancel := inc.sess.WhileTrusted(ctx)
		err := inc.loop.Stop(sctx)
		cancel()
		if err != nil {
			// RemoveAllByOwner removes the peer row too.
			n.log.Warn("meshnode: leave: stopping the loop or removing the peer row failed; the owner's bulk removal follows", "error", err)
		}
		n.markFenced(inc)
		removed, err := n.removeAll(ctx, inc.token)
		errs = append(errs, err)
		if err := inc.sess.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		inc.endSessionContext()
		n.log.Info("meshnode: left", "generation", inc.token.LeaseGeneration, "rows_removed", removed)
	default:
		inc.rec.DisconnectPeers()
		inc.loop.PrepareTransportShutdown()
		n.markFenced(inc)
		if err := inc.sess.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		inc.endSessionContext()
		n.log.Info("meshnode: left after its lease ended; its rows stay until they are collected",
			"generation", inc.token.LeaseGeneration, "session", inc.sess.Err())
	}
	n.finish(ErrLeft)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("meshnode: leave: %w", err)
	}
	return nil
}

// removeAll is RemoveAllByOwner(token), tried again after a failure (bad
// input excepted: nothing to retry) until ctx ends or the lease ends (then
// it removes nothing).
func (n *Node) removeAll(ctx context.Context, token location.OwnerToken) (int64, error) {
	var total int64
	err := n.retry(ctx, "remove the owner's rows", isInput, func(ctx context.Context) error {
		removed, err := n.store.RemoveAllByOwner(ctx, token)
		total += removed
		return err
	})
	if err != nil {
		return total, fmt.Errorf("remove every row of owner %q: %w", token.OwnerID, err)
	}
	return total, nil
}

// halt stops the supervisor and every join attempt, and waits for them.
func (n *Node) halt(cause error) {
	n.stop(cause)
	n.wg.Wait()
}

// finish ends the node with cause (the first cause wins) and closes Done.
func (n *Node) finish(cause error) {
	n.mu.Lock()
	if n.phase == PhaseLeft {
		n.mu.Unlock()
		return
	}
	n.phase, n.err = PhaseLeft, cause
	n.mu.Unlock()
	n.stop(cause)
	n.emit(Event{Kind: EventLeft, Err: cause})
	close(n.done)
}

// ended reports whether the node has ended.
func (n *Node) ended() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// current returns the current incarnation and whether it was fenced.
func (n *Node) current() (*incarnation, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cur == nil {
		return nil, false
	}
	return n.cur, n.cur.fenced
}

// setPhase sets the phase unless the node has left.
func (n *Node) setPhase(p Phase) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.phase != PhaseLeft {
		n.phase = p
	}
}

// markFenced records that inc's loop stopped.
func (n *Node) markFenced(inc *incarnation) {
	n.mu.Lock()
	inc.fenced = true
	n.mu.Unlock()
}

// emit stamps e and hands it to Options.OnEvent.
func (n *Node) emit(e Event) {
	if e.At.IsZero() {
		e.At = n.o.clock.Now()
	}
	if e.Incarnation == (Incarnation{}) {
		e.Incarnation = n.Incarnation()
	}
	if n.o.OnEvent != nil {
		n.o.OnEvent(e)
	}
}

// retry runs attempt until it succeeds, fails with an error permanent
// reports, or ctx ends, waiting a jittered, growing time (RejoinBackoff)
// between attempts.
func (n *Node) retry(ctx context.Context, op string, permanent func(error) bool, attempt func(ctx context.Context) error) error {
	wait := n.o.RejoinBackoff.Initial
	for i := 1; ; i++ {
		err := attempt(ctx)
		if err == nil || permanent(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (after %d attempts; last error: %w)", context.Cause(ctx), i, err)
		}
		d := jitter(wait)
		wait = min(2*wait, n.o.RejoinBackoff.Max)
		n.log.Warn("meshnode: attempt failed; retrying", "op", op, "attempt", i, "wait", d, "error", err)
		if !clock.Sleep(ctx, n.o.clock, d) {
			return fmt.Errorf("%w (after %d attempts; last error: %w)", context.Cause(ctx), i, err)
		}
	}
}

// isInput reports bad input, which no retry fixes.
func isInput(err error) bool { return errors.Is(err, location.ErrInvalidArgument) }

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
