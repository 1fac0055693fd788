package autoconnect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// ErrLoopStopped is returned by Start on a Loop that was stopped (also when
// Stop ran while Start's first tick was in flight).
var ErrLoopStopped = errors.New("autoconnect: loop stopped")

// LoopReconciler is what a Loop drives; *Reconciler implements it.
type LoopReconciler interface {
	// Tick runs one reconciliation; it records store failures instead of
	// returning them.
	Tick(ctx context.Context) error
	// StoreFailed reports whether the last tick ended in a store failure.
	StoreFailed() bool
	// LocalPublicationReady reports whether the local row is published.
	LocalPublicationReady() bool
	// DisconnectPeers drops every connection.
	DisconnectPeers()
	// UnpublishLocal removes the local row.
	UnpublishLocal(ctx context.Context) error
}

// LiveOwnerVersioner reports a version of the live owner set;
// *LeaseTracker implements it.
type LiveOwnerVersioner interface {
	LiveOwnerSetVersion(ctx context.Context) (int64, error)
}

// LivenessInvalidator is an optional capability of LoopOptions.LiveOwners:
// it forgets cached liveness answers; *LeaseTracker implements it.
type LivenessInvalidator interface {
	InvalidateLiveness()
}

// LoopOptions configure a Loop.
type LoopOptions struct {
	// Reconciler is driven by the loop. Required.
	Reconciler LoopReconciler
	// MeshName is the mesh whose change stamp Stamps reads.
	MeshName string
	// Stamps, when set, lets a tick be skipped while the mesh's change stamp
	// and the live owner set are unchanged and the local row is published.
	Stamps location.MeshNodeChangeStamper
	// LiveOwners supplies the live owner set version for the skip test; nil
	// counts as a constant version 0. When it is also a LivenessInvalidator
	// (the LeaseTracker is), every change notification invalidates it
	// before the tick, so that a watch that reports ended owner leases
	// (etcdstore's does) makes the tick see them at once; pass the tracker
	// of the reconciler's source here.
	LiveOwners LiveOwnerVersioner
	// Watcher and WatchTables make the loop tick right after a change of one
	// of the tables. When Watcher is nil and the reconciler is a
	// WatchableSource whose store can watch, that watch is used.
	Watcher     location.ChangeWatcher
	WatchTables []location.Table
	// DisableWatch turns change-driven ticks off (polling only).
	DisableWatch bool
	// WatchRetryDelay is the first delay before a failed watch is started
	// again (it doubles up to 30 s); 0 means the polling interval.
	WatchRetryDelay time.Duration
	// Options supplies PollingInterval, the delay between the end of one
	// tick and the start of the next; it must be positive.
	Options Options
	// Clock makes the timers; nil means SystemClock().
	Clock Clock
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// OnTick, when set, is called (synchronously, so it must be quick)
	// after every tick the loop runs (Start's, polled, change-driven, and
	// direct Tick calls). Metrics and health checks attach here.
	OnTick func(TickReport)
}

// TickReport describes one loop tick (LoopOptions.OnTick).
type TickReport struct {
	// Started is when the tick began, on the loop's clock, and Took how
	// long it ran.
	Started, Took time.Duration
	// Skipped reports a tick that reconciled nothing: the mesh's change
	// stamp and the live owner set had not moved and the reconciler was
	// settled.
	Skipped bool
	// StoreFailed is the reconciler's StoreFailed after the tick.
	StoreFailed bool
	// Err is the tick's error (its context ended, or it panicked); store
	// failures are not errors (StoreFailed).
	Err error
}

// loopState is the lifecycle of a Loop.
type loopState int

// Loop states.
const (
	loopIdle loopState = iota
	loopStarting
	loopRunning
	loopStopped
)

// Loop runs a reconciler's ticks: one in Start, then one PollingInterval
// after the previous one ended (fixed delay, never overlapping), and, when
// the store can watch, one right after each burst of changes. A tick that
// fails or panics is logged and the next one is scheduled as usual. Stop
// ends it gracefully (the tick in flight finishes), PrepareTransportShutdown
// promptly (the tick in flight is cancelled). Safe for concurrent use.
type Loop struct {
	rec        LoopReconciler
	meshName   string
	stamps     location.MeshNodeChangeStamper
	liveOwners LiveOwnerVersioner
	watcher    location.ChangeWatcher
	tables     []location.Table
	timing     timing
	retryDelay time.Duration
	clock      Clock
	log        *slog.Logger
	onTick     func(TickReport)

	// kick requests a tick; one slot, so a burst of requests is one tick.
	kick chan struct{}
	// notified, when set (by tests, before Start), is called after each
	// change notification has been turned into a tick request.
	notified func()
	// wg counts the loop's goroutines.
	wg sync.WaitGroup

	// mu guards state and the cancel functions: cancel ends the loop's
	// goroutines (and the watch), cancelTicks the context of the ticks
	// they run, cancelFirstTick the first tick of a Start in progress.
	mu              sync.Mutex
	state           loopState
	cancel          context.CancelFunc
	cancelTicks     context.CancelFunc
	cancelFirstTick context.CancelFunc

	// tickMu serialises ticks and shutdown, and guards the fields below.
	tickMu         sync.Mutex
	remembered     bool
	lastStamp      int64
	lastVersion    int64
	lastTickFailed bool
	// tickCancelled says a tick of the polling goroutine returned with its
	// context cancelled (by PrepareTransportShutdown, or by a Stop whose
	// context ended first).
	tickCancelled bool
}

// NewLoop checks opts and returns a loop that is not started yet.
func NewLoop(opts LoopOptions) (*Loop, error) {
	if opts.Reconciler == nil {
		return nil, location.NewTypeError("autoconnect.reconciler", "loop needs a reconciler")
	}
	t, err := opts.Options.resolve()
	if err != nil {
		return nil, err
	}
	if t.pollingInterval == 0 {
		return nil, location.NewRangeError("autoconnect.polling_interval",
			"a loop needs a positive polling interval: with 0 its ticks would run back to back (a full listing each); "+
				"0 is meant for the lease tracker alone (no caching)")
	}
	if opts.WatchRetryDelay < 0 {
		return nil, location.NewRangeError("autoconnect.watch_retry_delay", "watch retry delay %v must not be negative", opts.WatchRetryDelay)
	}
	l := &Loop{
		rec:        opts.Reconciler,
		meshName:   opts.MeshName,
		stamps:     opts.Stamps,
		liveOwners: opts.LiveOwners,
		timing:     t,
		retryDelay: opts.WatchRetryDelay,
		clock:      cmp.Or(opts.Clock, SystemClock()),
		log:        cmp.Or(opts.Logger, slog.Default()),
		onTick:     opts.OnTick,
		kick:       make(chan struct{}, 1),
	}
	if l.retryDelay == 0 {
		l.retryDelay = t.pollingInterval
	}
	if !opts.DisableWatch {
		l.watcher, l.tables = opts.Watcher, opts.WatchTables
		if l.watcher == nil {
			if ws, ok := opts.Reconciler.(WatchableSource); ok {
				if w, tables, ok := ws.ChangeWatch(); ok {
					l.watcher, l.tables = w, tables
				}
			}
		}
		if l.watcher != nil && len(l.tables) == 0 {
			return nil, location.NewTypeError("autoconnect.watch_tables", "loop watcher needs at least one table")
		}
	}
	return l, nil
}

// Watching reports whether the loop reacts to store change notifications.
func (l *Loop) Watching() bool { return l.watcher != nil }

// Start runs one tick and, if it succeeds, starts the loop. When that tick
// fails, Start returns its error and the loop stays unstarted (Start may be
// called again). A Start on a started or starting loop does nothing; on a
// stopped loop it returns ErrLoopStopped. ctx bounds the first tick only
// (Stop and PrepareTransportShutdown cancel that tick too); the loop runs
// until Stop, and its later ticks keep ctx's values but not its
// cancellation. When the loop watches, the watch is opened before the
// first tick, so no change after that tick's listing is missed.
func (l *Loop) Start(ctx context.Context) error {
	l.mu.Lock()
	switch l.state {
	case loopStarting, loopRunning:
		l.mu.Unlock()
		return nil
	case loopStopped:
		l.mu.Unlock()
		return ErrLoopStopped
	}
	l.state = loopStarting
	// The goroutines stop with loopCtx; the ticks they run have a context
	// of their own, which a graceful Stop cancels only after waiting for
	// the tick in flight (see Stop).
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	tickCtx, cancelTicks := context.WithCancel(context.WithoutCancel(ctx))
	firstCtx, cancelFirst := context.WithCancel(ctx)
	l.cancel, l.cancelTicks, l.cancelFirstTick = cancel, cancelTicks, cancelFirst
	l.mu.Unlock()

	var changes <-chan struct{}
	var watchErr error
	if l.watcher != nil {
		changes, watchErr = l.watcher.WatchChanges(loopCtx, l.tables...)
	}
	err := l.Tick(firstCtx)
	cancelFirst()

	l.mu.Lock()
	defer l.mu.Unlock()
	l.cancelFirstTick = nil
	if l.state == loopStopped {
		cancel()
		cancelTicks()
		return ErrLoopStopped
	}
	if err != nil {
		cancel()
		cancelTicks()
		l.cancel, l.cancelTicks = nil, nil
		l.state = loopIdle
		return err
	}
	l.state = loopRunning
	l.wg.Add(1)
	go l.poll(loopCtx, tickCtx)
	if l.watcher != nil {
		l.wg.Add(1)
		go l.watch(loopCtx, changes, watchErr)
	}
	return nil
}

// Stop ends the loop gracefully; call it while the owner lease is live
// (once it is lost, call PrepareTransportShutdown alone). In this order:
//
//  1. no tick starts any more: the timers, the watch and tick requests end,
//     and the first tick of a Start in progress is cancelled;
//  2. Stop waits for the loop's goroutines, and the tick in flight finishes
//     on a context that Stop does not cancel, so that a store write it has
//     sent runs to its outcome (a write cancelled after it was sent may
//     still be applied later, after the local row was removed: a row it
//     creates, a claim of the local row, would be left behind). ctx bounds
//     the wait: when ctx ends first, the tick's context is cancelled then,
//     and Stop still waits for the tick to return, as
//     PrepareTransportShutdown does. Against an unreachable store the tick
//     may last until ctx ends: give ctx a deadline;
//  3. every peer is disconnected (PrepareTransportShutdown) and the local
//     row is removed (FinishTransportShutdown with ctx).
//
// The error is the removal's, joined with one that wraps ctx's cause when
// ctx ended before the tick in flight returned and that tick was cancelled
// (a write it sent may then still be applied).
func (l *Loop) Stop(ctx context.Context) error {
	l.mu.Lock()
	l.state = loopStopped
	cancel, cancelTicks, cancelFirst := l.cancel, l.cancelTicks, l.cancelFirstTick
	l.mu.Unlock()
	if cancelFirst != nil {
		cancelFirst()
	}
	if cancel != nil {
		cancel()
	}
	cut := false
	if cancelTicks != nil {
		unbind := context.AfterFunc(ctx, cancelTicks)
		l.wg.Wait()
		cut = !unbind() // ctx ended during the wait
	}
	l.PrepareTransportShutdown()
	var errs []error
	l.tickMu.Lock()
	if cut && l.tickCancelled {
		errs = append(errs, fmt.Errorf("autoconnect: stop: the tick in flight was cancelled before it returned: %w", context.Cause(ctx)))
	}
	l.tickMu.Unlock()
	if err := l.FinishTransportShutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// PrepareTransportShutdown stops the loop for good, promptly: it cancels
// the timers, the watch and the tick in flight (also one a graceful Stop
// is waiting for), waits for the loop's goroutines and for that tick to
// return, and then disconnects every peer. The wait lasts as long as the
// tick's store and executor calls take to return once their context is
// cancelled, which they must do promptly (etcdstore stops resolving a
// write whose answer was lost at the cancellation, see the package doc).
// It makes no store call, so it is also how a node stops acting on an
// owner lease it lost. No tick runs after it. Calling it again only
// disconnects again.
func (l *Loop) PrepareTransportShutdown() {
	l.mu.Lock()
	l.state = loopStopped
	cancel, cancelTicks, cancelFirst := l.cancel, l.cancelTicks, l.cancelFirstTick
	l.mu.Unlock()
	for _, c := range []context.CancelFunc{cancel, cancelTicks, cancelFirst} {
		if c != nil {
			c()
		}
	}
	l.wg.Wait()
	l.tickMu.Lock()
	defer l.tickMu.Unlock()
	l.rec.DisconnectPeers()
}

// FinishTransportShutdown removes the local row (a store write, under the
// node's owner id): the second half of a graceful Stop, never to be called
// after the owner lease was lost.
func (l *Loop) FinishTransportShutdown(ctx context.Context) error {
	return l.rec.UnpublishLocal(ctx)
}

// Tick runs one loop tick now (Start calls it; the polling goroutine runs
// the same body). With a change stamp source, and unless the previous tick
// ended in a store failure, it skips the reconciliation while the mesh's
// change stamp and the live owner set are unchanged and the reconciler is
// settled (see Loop's settled); a stamp that cannot be read (or that the
// store cannot tell) makes it a full reconciliation, and the remembered
// stamp is forgotten. The live-owner version and the reconciliation share
// the owner leases they read (each owner is read at most once per tick). A
// panic in the reconciler is returned as an error.
func (l *Loop) Tick(ctx context.Context) error {
	l.tickMu.Lock()
	defer l.tickMu.Unlock()
	return l.tick(ctx)
}

// tick is Tick's body. Called with tickMu held.
func (l *Loop) tick(ctx context.Context) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("autoconnect: loop tick: %w", err)
	}
	ctx = withTickReads(ctx)
	skipped := false
	if l.onTick != nil {
		started := l.clock.Now()
		defer func() {
			l.onTick(TickReport{Started: started, Took: l.clock.Now() - started, Skipped: skipped,
				StoreFailed: l.rec.StoreFailed(), Err: err})
		}()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("autoconnect: loop tick panicked: %v", p)
			l.log.Error("autoconnect: tick panicked", "mesh", l.meshName, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	if l.stamps != nil && !l.lastTickFailed {
		var err error
		skipped, err = l.stampedTick(ctx)
		if err == nil {
			return nil
		}
		l.log.Debug("autoconnect: change stamp unusable; full reconcile", "mesh", l.meshName, "err", err)
	}
	err = l.reconcile(ctx)
	l.remembered = false
	return err
}

// stampedTick is the change-stamp path of Tick; skipped reports that it
// reconciled nothing. Called with tickMu held.
func (l *Loop) stampedTick(ctx context.Context) (skipped bool, err error) {
	stamp, ok, err := l.stamps.GetMeshNodeChangeStamp(ctx, l.meshName)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, fmt.Errorf("autoconnect: the store cannot tell the change stamp of mesh %q", l.meshName)
	}
	var version int64
	if l.liveOwners != nil {
		if version, err = l.liveOwners.LiveOwnerSetVersion(ctx); err != nil {
			return false, err
		}
	}
	if l.remembered && stamp == l.lastStamp && version == l.lastVersion && l.settled() {
		return true, nil
	}
	if err := l.reconcile(ctx); err != nil {
		return false, err
	}
	if !l.lastTickFailed {
		if lt, ok := l.liveOwners.(*LeaseTracker); ok {
			if v, ok := tickReadsOf(ctx).listingVersion(lt); ok {
				// The version the reconciliation's listing left: its
				// answers are what the reconciliation acted on.
				version = v
			}
		}
		l.remembered, l.lastStamp, l.lastVersion = true, stamp, version
	}
	return false, nil
}

// settledReconciler is implemented by *Reconciler: settled says whether a
// tick would have nothing to do while the listing and its owners' liveness
// stay as they are.
type settledReconciler interface {
	settled() bool
}

// settled reports whether a tick whose stamp and live-owner version did not
// move may be skipped: for a *Reconciler, when it is settled (its local row
// published or absent, every desired target connected, nothing left to
// close or to remove); for another LoopReconciler, when its local row is
// published.
func (l *Loop) settled() bool {
	if s, ok := l.rec.(settledReconciler); ok {
		return s.settled()
	}
	return l.rec.LocalPublicationReady()
}

// reconcile runs the reconciler's tick and notes whether it failed. Called
// with tickMu held.
func (l *Loop) reconcile(ctx context.Context) error {
	if err := l.rec.Tick(ctx); err != nil {
		return err
	}
	l.lastTickFailed = l.rec.StoreFailed()
	return nil
}

// poll is the loop goroutine: it waits PollingInterval (or for a tick
// request), ticks on tickCtx, and repeats until ctx (the loop's context)
// is done. A tick already running when ctx ends runs on (see Stop).
func (l *Loop) poll(ctx, tickCtx context.Context) {
	defer l.wg.Done()
	for ctx.Err() == nil {
		t := l.clock.NewTimer(l.timing.pollingInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-l.kick:
			t.Stop()
		}
		l.pollTick(ctx, tickCtx)
	}
}

// pollTick runs one tick of the polling goroutine on tickCtx, unless ctx
// (the loop's context) has ended: checked with tickMu held, so that no
// tick starts once a stop has cancelled ctx (a tick request or a timer
// that was ready at the same time is dropped). A failed tick is logged,
// one abandoned because tickCtx was cancelled is noted (tickCancelled).
func (l *Loop) pollTick(ctx, tickCtx context.Context) {
	l.tickMu.Lock()
	defer l.tickMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	err := l.tick(tickCtx)
	switch {
	case err == nil:
	case tickCtx.Err() != nil:
		l.tickCancelled = true
	default:
		l.log.Warn("autoconnect: tick failed", "mesh", l.meshName, "err", err)
	}
}

// requestTick asks the poll goroutine for a tick as soon as it is free.
func (l *Loop) requestTick() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}
