package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// progressInterval is how often a history search asks the server whether
// its watch has caught up.
const progressInterval = 20 * time.Millisecond

// resolve decides whether a commit whose result was lost was applied
// (decision E-9). It re-reads the guarded and written keys, retrying
// transient errors until the caller's context ends (and for at least the
// resolve timeout, even when it has ended already: ResolveContext):
//
//   - a written value carrying the attempt's nonce proves the commit applied
//     (at that key's ModRevision);
//   - a written key that existed before and still has the observed
//     ModRevision proves it did not (a commit writes all its keys or none);
//   - otherwise the history of one written key since the commit was sent
//     shows whether a value with the nonce was ever written.
//
// When not applied, fresh is a consistent view of the guarded keys.
func (e *Engine) resolve(ctx context.Context, v *View, c *Commit, sentAfter int64) (applied bool, rev int64, fresh *View, err error) {
	rctx, cancel := ResolveContext(ctx, e.resolveTimeout)
	defer cancel()
	var puts []string
	for _, w := range c.allWrites() {
		if !w.Delete {
			puts = append(puts, w.Key)
		}
	}
	puts = append(puts, c.Touch...)
	obs, err := e.ReadKeys(rctx, append(append([]string(nil), v.order...), puts...), 0)
	if err != nil {
		return false, 0, nil, err
	}
	for _, k := range puts {
		if o := obs.Keys[k]; o.HasNonce(v.nonce) {
			return true, o.ModRevision, nil, nil
		}
	}
	fresh = newView()
	fresh.consistent, fresh.rev = true, obs.Revision
	for _, k := range v.order {
		fresh.add(obs.Keys[k])
	}
	for _, w := range c.Writes {
		prev, now := v.obs[w.Key], obs.Keys[w.Key]
		if !w.Delete && prev.Present && now.Present && now.ModRevision == prev.ModRevision {
			return false, 0, fresh, nil
		}
	}
	if len(puts) == 0 {
		return false, 0, nil, errors.New("the commit wrote no value that could carry its nonce")
	}
	found, rev, err := e.searchHistory(rctx, puts[0], v.nonce, sentAfter+1, obs.Revision)
	if err != nil {
		return false, 0, nil, err
	}
	if found {
		return true, rev, nil, nil
	}
	return false, 0, fresh, nil
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
