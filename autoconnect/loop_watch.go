package autoconnect

import (
	"context"
	"errors"
	"time"
)

// maxWatchRetryDelay caps the delay between two attempts to start a watch.
const maxWatchRetryDelay = 30 * time.Second

// watch is the loop's watch goroutine: it follows the watch that Start
// opened (changes, or the error opening it) and turns every notification
// into a tick request. When a watch cannot be opened, or ends before ctx,
// the loop goes on polling and the watch is opened again after a delay that
// starts at WatchRetryDelay and doubles up to maxWatchRetryDelay. A watch
// reopened after a failure requests one tick, for the changes it may have
// missed.
func (l *Loop) watch(ctx context.Context, changes <-chan struct{}, err error) {
	defer l.wg.Done()
	delay := l.retryDelay
	for {
		if err == nil {
			err = l.follow(ctx, changes)
		}
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("autoconnect: change watch failed; polling until it is restored",
			"mesh", l.meshName, "err", err, "retry_in", delay)
		t := l.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		delay = min(2*delay, max(maxWatchRetryDelay, l.retryDelay))
		changes, err = l.watcher.WatchChanges(ctx, l.tables...)
		if err == nil {
			delay = l.retryDelay
			l.changed()
		}
	}
}

// follow requests a tick for every notification on ch until ctx is done
// (nil) or ch closes early (an error).
func (l *Loop) follow(ctx context.Context, ch <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-ch:
			if !ok {
				return errors.New("autoconnect: change watch closed")
			}
			l.changed()
			if l.notified != nil {
				l.notified()
			}
		}
	}
}

// changed reacts to a change the store reported (or may have missed): it
// invalidates the cached owner liveness (LoopOptions.LiveOwners, when it is
// a LivenessInvalidator) and requests a tick.
func (l *Loop) changed() {
	if inv, ok := l.liveOwners.(LivenessInvalidator); ok {
		inv.InvalidateLiveness()
	}
	l.requestTick()
}
