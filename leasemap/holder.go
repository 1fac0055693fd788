package leasemap

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// ErrLeaseLost is the Err of a Holder whose lease ended: a renewal answered
// stale (the lease expired, was released or revoked). The owner must claim a
// new lease; its old generation is dead.
const ErrLeaseLost = holderError("leasemap: owner lease lost")

type holderError string

func (e holderError) Error() string { return string(e) }

// Holder keeps one owner lease alive by renewing it periodically, for as
// long as the Holder lives (not as long as any request). Done is closed when
// the lease is lost or the Holder is closed.
type Holder struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// Hold starts renewing the token's lease with ttl every interval (0 means
// ttl/3). A renewal that fails for a transient reason is retried at the next
// tick; a stale answer ends the Holder with ErrLeaseLost. Close the Holder
// to stop renewing (the lease is not released).
func (m *Map) Hold(t location.OwnerToken, ttl, interval time.Duration) *Holder {
	if interval <= 0 {
		interval = max(ttl/3, time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Holder{cancel: cancel, done: make(chan struct{})}
	go h.run(ctx, m, t, ttl, interval)
	return h
}

func (h *Holder) run(ctx context.Context, m *Map, t location.OwnerToken, ttl, interval time.Duration) {
	defer close(h.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			h.setErr(context.Canceled)
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, interval)
		res, err := m.Renew(rctx, t, ttl)
		cancel()
		switch {
		case err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil:
			h.setErr(context.Canceled)
			return
		case err != nil:
			m.log.Debug("leasemap: renewal failed; retrying at the next tick", "owner", t.OwnerID, "error", err)
		case res.Kind == location.KindStale:
			h.setErr(ErrLeaseLost)
			return
		}
	}
}

func (h *Holder) setErr(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
}

// Done is closed when the Holder stops (lease lost or Close).
func (h *Holder) Done() <-chan struct{} { return h.done }

// Err reports why the Holder stopped: ErrLeaseLost, context.Canceled after
// Close, or nil while it runs.
func (h *Holder) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Close stops renewing and waits for the renewal loop to end.
func (h *Holder) Close() {
	h.cancel()
	<-h.done
}
