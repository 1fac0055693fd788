package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// progressInterval is how often a history search asks the server whether
// its watch has caught up.
const progressInterval = 20 * time.Millisecond

// resolve settles a guarded transaction whose response was lost (decision
// E-9). It re-reads the keys the transaction reads and writes at one
// revision, retrying transient errors until the caller's context ends (and,
// when the caller's deadline has passed, for at least the resolve timeout;
// a caller that cancels stops it at once: ResolveContext):
//
//   - a value carrying the attempt's nonce (or an Earlier one) proves that
//     attempt applied (at that key's ModRevision);
//   - the state proves it did not (a commit writes all its keys or none,
//     and a key once deleted comes back only as a new incarnation): a key
//     it put still has the ModRevision observed before it was sent, a key
//     it deleted is still the incarnation observed before, or a key its
//     compares required absent exists since before it was sent;
//   - otherwise the history of one put key since the transaction was sent
//     shows whether a value with the nonce was ever written (unless
//     StateOnly: then it was not applied).
//
// When not applied, Sent.Now holds the keys as read.
func (e *Engine) resolve(ctx context.Context, g Guarded) (Sent, error) {
	rctx, cancel := ResolveContext(ctx, e.resolveTimeout)
	defer cancel()
	obs, err := e.ReadKeys(rctx, slices.Concat(g.Read, g.Puts, g.Deletes, g.Absent), 0)
	if err != nil {
		return Sent{}, err
	}
	if rev, nonce, ok := obs.carrying(g.Nonce, g.Earlier); ok {
		return Sent{Applied: true, Revision: rev, Nonce: nonce}, nil
	}
	if g.StateOnly || provesNotApplied(g, obs) {
		return Sent{Now: obs}, nil
	}
	if len(g.Puts) == 0 {
		return Sent{}, errors.New("the commit wrote no value that could carry its nonce")
	}
	found, rev, err := e.searchHistory(rctx, g.Puts[0], g.Nonce, g.SentAfter+1, obs.Revision)
	if err != nil {
		return Sent{}, err
	}
	if found {
		return Sent{Applied: true, Revision: rev, Nonce: g.Nonce}, nil
	}
	return Sent{Now: obs}, nil
}

// provesNotApplied reports whether the keys as read now prove that the
// transaction g was not applied (so far): a key it put still has the
// ModRevision observed before it was sent; a key it deleted is still the
// incarnation observed before (a deleted key can only exist again under a
// later CreateRevision); or a key its compares required absent was created
// no later than SentAfter (it has existed ever since, so the compare
// failed at whatever revision the transaction reached the server).
func provesNotApplied(g Guarded, now Observations) bool {
	for _, k := range g.Puts {
		prev, cur := g.Before[k], now.Keys[k]
		if prev.Present && cur.Present && cur.ModRevision == prev.ModRevision {
			return true
		}
	}
	for _, k := range g.Deletes {
		prev, cur := g.Before[k], now.Keys[k]
		if prev.Present && cur.Present && cur.CreateRevision == prev.CreateRevision {
			return true
		}
	}
	for _, k := range g.Absent {
		if cur := now.Keys[k]; cur.Present && cur.CreateRevision <= g.SentAfter {
			return true
		}
	}
	return false
}

// searchHistory watches key from revision from and reports whether a put
// carrying nonce happened at a revision up to upTo. A watch that breaks
// for a transient reason (no leader) is opened again.
func (e *Engine) searchHistory(ctx context.Context, key, nonce string, from, upTo int64) (found bool, rev int64, err error) {
	if from > upTo {
		return false, 0, nil
	}
	if e.watcher == nil {
		return false, 0, errors.New("no watcher to search the history with")
	}
	err = e.retry.Do(ctx, "search the history of "+key, func(ctx context.Context) error {
		var err error
		found, rev, err = e.searchHistoryOnce(ctx, key, nonce, from, upTo)
		return err
	})
	return found, rev, err
}

// searchHistoryOnce is one watch of searchHistory.
func (e *Engine) searchHistoryOnce(ctx context.Context, key, nonce string, from, upTo int64) (bool, int64, error) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := e.watcher.Watch(wctx, key, clientv3.WithRev(from))
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	_ = e.watcher.RequestProgress(wctx)
	for {
		select {
		case resp, ok := <-wch:
			if !ok {
				return false, 0, fmt.Errorf("history watch closed: %w", context.Cause(wctx))
			}
			if resp.CompactRevision != 0 {
				return false, 0, fmt.Errorf("history compacted at revision %d", resp.CompactRevision)
			}
			if err := resp.Err(); err != nil {
				return false, 0, err
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > upTo {
					return false, 0, nil
				}
				if ev.Type == clientv3.EventTypePut && bytes.Contains(ev.Kv.Value, []byte(nonce)) {
					return true, ev.Kv.ModRevision, nil
				}
			}
			if resp.IsProgressNotify() && resp.Header.Revision >= upTo {
				return false, 0, nil
			}
		case <-tick.C:
			_ = e.watcher.RequestProgress(wctx)
		case <-wctx.Done():
			return false, 0, wctx.Err()
		}
	}
}
