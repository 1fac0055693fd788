package etcdstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// Consistent reads from the watch cache (docs/caching.md), the pattern of
// Kubernetes' watch cache: a read first confirms the store's current
// revision with one linearizable request (a count-only Get of one key,
// currentRevision), waits until every range it depends on has applied the
// changes through that revision (asking etcd for the watches' progress,
// RequestProgress, when nothing arrives by itself), and answers from
// memory as of a revision at least as recent: a state the store held
// between the call and its answer, so the read is linearizable. A read
// pinned to a revision (a continuation token) needs no confirmation.
//
// A read never waits past WatchCacheOptions.MaxWait nor half of its
// context's remaining time: when the cache cannot answer in time (its
// watch is broken, it is being read again after a compaction, progress
// does not come), the read goes to etcd, exactly as without the cache.

// cacheAnswer is what a capture function tells readConsistent.
type cacheAnswer int64

const (
	// captured: the read is answered.
	captured cacheAnswer = 0
	// uncached: the cache cannot answer it (read etcd).
	uncached cacheAnswer = -1
)

// readConsistent answers a read from the cache, or reports false when the
// caller must read etcd (counted as a miss, or a fallback after a wait in
// vain; the caller counts its hits). ranges are what the read depends on; rev is the
// revision to read at: 0 for the present (confirmed first), or a pinned
// one. capture runs under the cache's read lock with x, the revision
// through which every range has applied its changes (x >= the revision
// required); it returns captured, uncached, or a later revision the cache
// must reach first.
func (c *watchCache) readConsistent(ctx context.Context, ranges []*cacheRange, rev int64, capture func(x int64) cacheAnswer) (bool, error) {
	if c.s.hub.ctx.Err() != nil {
		return false, nil
	}
	c.start(ranges)
	need := rev
	if need == 0 {
		r, err := c.s.currentRevision(ctx)
		if err != nil {
			return false, readError(err)
		}
		need = r
	}
	asked := c.progressSent.Load()
	askNow := true
	retryAfter := progressRetry
	var waitStart time.Time
	var deadline <-chan time.Time
	for {
		c.mu.RLock()
		ready, warming := c.readiness(ranges)
		if ready {
			if x := c.through(ranges); x >= need {
				switch a := capture(x); a {
				case captured:
					c.mu.RUnlock()
					c.waited(waitStart)
					return true, nil
				case uncached:
					c.mu.RUnlock()
					c.stats.misses.Add(1)
					c.waited(waitStart)
					return false, nil
				default:
					need = int64(a)
				}
			}
		}
		advanced := c.advanced
		c.mu.RUnlock()
		if !ready && !warming {
			c.stats.misses.Add(1)
			c.waited(waitStart)
			c.requestProgress()
			return false, nil
		}
		if deadline == nil {
			waitStart = time.Now()
			c.stats.waits.Add(1)
			t := time.NewTimer(c.waitLimit(ctx))
			defer t.Stop()
			deadline = t.C
		}
		if askNow && c.progressSent.Load() == asked {
			c.requestProgress()
		}
		asked, askNow = c.progressSent.Load(), false
		retry := time.NewTimer(retryAfter)
		select {
		case <-advanced:
		case <-retry.C:
			askNow = true
			retryAfter = min(2*retryAfter, progressRetryMax)
		case <-deadline:
			retry.Stop()
			c.mu.Lock()
			c.stalled = true
			c.mu.Unlock()
			c.stats.fallbacks.Add(1)
			c.waited(waitStart)
			return false, nil
		case <-ctx.Done():
			retry.Stop()
			c.waited(waitStart)
			return false, readError(ctx.Err())
		}
		retry.Stop()
	}
}

// readiness reports whether every one of ranges serves reads, and, when
// not, whether the cache is still loading for the first time (worth
// waiting for). Called with mu held.
func (c *watchCache) readiness(ranges []*cacheRange) (ready, warming bool) {
	if c.off || c.stalled {
		return false, false
	}
	ready, warming = true, true
	for _, r := range ranges {
		if !r.healthy {
			return false, false
		}
		if !r.loaded {
			ready = false
			warming = warming && r.listedAt == 0
		}
	}
	return ready, warming
}

// through returns the revision through which every one of ranges has
// applied its changes. Called with mu held.
func (c *watchCache) through(ranges []*cacheRange) int64 {
	x := ranges[0].through
	for _, r := range ranges[1:] {
		x = min(x, r.through)
	}
	return x
}

// waitLimit is how long a read may wait: MaxWait, and at most half of
// ctx's remaining time (the other half is for reading etcd instead).
func (c *watchCache) waitLimit(ctx context.Context) time.Duration {
	limit := c.maxWait
	if d, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(d)/2)
	}
	return max(limit, 0)
}

// waited accounts a read's wait, if it waited.
func (c *watchCache) waited(start time.Time) {
	if !start.IsZero() {
		c.stats.waitNanos.Add(int64(time.Since(start)))
	}
}

// requestProgress asks for the watches' progress.
func (c *watchCache) requestProgress() {
	c.progressSent.Add(1)
	c.s.hub.requestProgress()
}

// knownFrom is the earliest revision whose state the table's cache knows:
// its ranges' last reads. Called with mu held.
func (t *cacheTable) knownFrom() int64 {
	var k int64
	for _, r := range t.ranges {
		k = max(k, r.listedAt)
	}
	return k
}

// selectGroups returns the groups a list narrowed to narrow reads, in key
// order (nil for a group that does not exist). Called with mu held.
func (t *cacheTable) selectGroups(narrow string) []*cacheGroup {
	parts, err := keys.DecodeSegments(narrow)
	if err != nil {
		return nil
	}
	if len(parts) >= t.depth {
		return []*cacheGroup{t.groups[keys.Segments(parts[:t.depth]...)]}
	}
	var names []string
	for gk := range t.groups {
		if strings.HasPrefix(gk, narrow) {
			names = append(names, gk)
		}
	}
	slices.Sort(names)
	out := make([]*cacheGroup, len(names))
	for i, gk := range names {
		out[i] = t.groups[gk]
	}
	return out
}

// list answers one page of q from the cache; ok is false when the cache
// cannot (the caller reads etcd). A first page is read as of a revision
// at least as recent as the call; its token pins that revision, which a
// later page reads from the group versions the cache keeps, or from etcd.
func (c *watchCache) list(ctx context.Context, q *storecore.ListQuery) (page storecore.ListPage, ok bool, err error) {
	t := c.table(q.Table)
	if t == nil || q.LiveOwner != nil {
		return storecore.ListPage{}, false, nil
	}
	s := c.s
	tablePrefix := s.layout.TablePrefix(string(q.Table))
	digest := digest(q)
	var rev int64
	after := ""
	if text := q.Page.ContinuationToken; text != "" {
		if tok, ok := decodeToken(text, digest, tablePrefix+q.Narrow); ok {
			rev, after = tok.Revision, string(tok.LastKey[len(tablePrefix):])
		}
	}
	var versions [][]*cacheEntry
	var at int64
	hit, err := c.readConsistent(ctx, t.ranges, rev, func(x int64) cacheAnswer {
		groups := t.selectGroups(q.Narrow)
		at = rev
		if at == 0 {
			at = x
			for _, g := range groups {
				if g != nil && g.from > at {
					return cacheAnswer(g.from)
				}
			}
		}
		if at < t.knownFrom() {
			return uncached
		}
		versions = versions[:0]
		for _, g := range groups {
			rows, ok := g.at(at)
			if !ok {
				return uncached
			}
			versions = append(versions, rows)
		}
		return captured
	})
	if err != nil || !hit {
		return storecore.ListPage{}, false, err
	}
	matched, ok := collect(versions, q, after)
	if !ok {
		c.stats.misses.Add(1)
		return storecore.ListPage{}, false, nil
	}
	page.Token = ""
	if p := q.Page.PageSize; p > 0 && len(matched) > p {
		matched = matched[:p]
		page.Token = encodeToken(pageToken{Version: tokenVersion, Digest: digest, Revision: at,
			LastKey: []byte(tablePrefix + matched[len(matched)-1].key)})
	}
	page.Rows, ok, err = c.project(q, matched, at)
	if err != nil || !ok {
		c.stats.misses.Add(1)
		return storecore.ListPage{}, false, err
	}
	c.stats.hits.Add(1)
	return page, true, nil
}

// collect returns the rows of versions (groups in key order) under q's
// narrowed prefix, after the table key after, that q matches, up to one
// more than a page. ok is false when one of them could not be decoded
// (etcd's read reports it).
func collect(versions [][]*cacheEntry, q *storecore.ListQuery, after string) ([]*cacheEntry, bool) {
	limit := q.Page.PageSize
	from := q.Narrow
	if after != "" {
		from = max(from, after+"\x00")
	}
	var out []*cacheEntry
	for _, rows := range versions {
		start, _ := find(rows, from)
		for _, e := range rows[start:] {
			if !strings.HasPrefix(e.key, q.Narrow) {
				break
			}
			if e.err != nil {
				return nil, false
			}
			if e.row == nil || (q.Match != nil && !q.Match(e.row)) {
				continue
			}
			out = append(out, e)
			if limit > 0 && len(out) > limit {
				return out, true
			}
		}
	}
	return out, true
}

// project returns the listed rows: copies of each row's q.Project (computed
// over a source that answers the row's own ledger buckets, anything else
// making ok false, and memoized on the immutable entry: a projection over
// the cache depends on the row and its ledger alone, rules.ProjectMeshNode),
// or of the rows themselves; for a q.Shared list, the memoized rows
// themselves.
func (c *watchCache) project(q *storecore.ListQuery, entries []*cacheEntry, rev int64) ([]any, bool, error) {
	spec, _ := rules.Lookup(q.Table)
	own := func(row any) any {
		if q.Shared {
			return row
		}
		return spec.Clone(row)
	}
	out := make([]any, 0, len(entries))
	if q.Project == nil {
		for _, e := range entries {
			out = append(out, own(e.row))
		}
		return out, true, nil
	}
	var src *entrySource
	var tx *rules.Tx
	for _, e := range entries {
		if p := e.projected.Load(); p != nil && p.op == q.Op.Name {
			out = append(out, own(p.row))
			continue
		}
		if e.ledgerErr != nil {
			return nil, false, nil
		}
		if src == nil {
			src = &entrySource{now: c.s.now(), rev: rev}
			tx = rules.NewTx(src)
		}
		src.entry = e
		row := q.Project(tx, e.row)
		if src.miss {
			return nil, false, nil
		}
		if !tx.Plan().Empty() {
			return nil, false, fmt.Errorf("%w: a list projection planned writes", location.ErrInternal)
		}
		e.projected.Store(&projection{op: q.Op.Name, row: row})
		out = append(out, own(row))
	}
	return out, true, nil
}

// entrySource is the rules.Source of a projection over the cache: the
// capacity ledger buckets of the entry being projected; anything else is a
// miss (the list then reads etcd).
type entrySource struct {
	now   time.Time
	rev   int64
	entry *cacheEntry
	miss  bool
}

func (src *entrySource) Now() time.Time { return src.now }

func (src *entrySource) Get(t rules.Table, key string) (rules.Record, bool) {
	if t != rules.TableLedger || !strings.HasPrefix(key, src.entry.key) {
		src.miss = true
		return rules.Record{}, false
	}
	u, ok := src.entry.ledger[key]
	return rules.Record{Value: u}, ok
}

func (src *entrySource) LiveLease(string) (int64, bool) {
	src.miss = true
	return 0, false
}

func (src *entrySource) NextGeneration(rules.Table, string) int64          { return src.rev + 1 }
func (src *entrySource) CanIssue(int64, int64, int64) bool                 { return false }
func (src *entrySource) IssueVersion() location.StoreVersion               { return pendingVersion }
func (src *entrySource) IssueObjectGeneration(location.AuthorityKey) int64 { return src.rev + 1 }
func (src *entrySource) IssueOwnerGeneration(location.AuthorityKey) int64  { return src.rev + 1 }
func (src *entrySource) NewReservationID() string                          { return newUUID() }

// liveness answers ReadOwnerLiveness from the cache (livenessSince); ok is
// false when it cannot.
func (c *watchCache) liveness(ctx context.Context, ownerIDs []string) ([]location.OwnerLiveness, bool, error) {
	res, hit, err := c.livenessSince(ctx, ownerIDs, 0)
	return res.Live, hit, err
}

// livenessSince answers ReadOwnerLivenessSince from the cache once the
// owner keys are cached through the current revision: the stamp
// (ownersStamp) and, unless it is since, every owner's liveness. hit is
// false when the cache cannot answer (off, loading, its watch broken).
func (c *watchCache) livenessSince(ctx context.Context, ownerIDs []string, since int64) (location.OwnerLivenessSince, bool, error) {
	var res location.OwnerLivenessSince
	hit, err := c.readConsistent(ctx, []*cacheRange{c.ownersRange}, 0, func(int64) cacheAnswer {
		res.Stamp = c.ownersStamp
		if since != 0 && res.Stamp == since {
			return captured
		}
		res.Changed = true
		res.Live = make([]location.OwnerLiveness, len(ownerIDs))
		for i, id := range ownerIDs {
			if gen, ok := c.owners[id]; ok {
				res.Live[i] = location.OwnerLiveness{Live: true, Token: location.OwnerToken{OwnerID: id, LeaseGeneration: gen}}
			}
		}
		return captured
	})
	if hit {
		c.stats.hits.Add(1)
	}
	return res, hit, err
}
