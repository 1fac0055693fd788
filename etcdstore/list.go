package etcdstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Location lists (decision E-10; 03b E-11, 03b E-12): rows in byte order of
// their canonical key, read at one revision. The first page reads at the
// latest revision; its continuation token pins that revision and carries the
// last returned key, so later pages continue the same snapshot. Filters that
// fix leading key segments narrow the range; the rest are applied in Go. A
// page holds pageSize matches, and one look-ahead match decides whether a
// token is returned, so a token is returned exactly when more matches
// exist. A token that cannot be decoded, or that belongs to another list,
// restarts at the first page (reference); a pinned revision that has been
// compacted is an error wrapping location.ErrScanExpired.

// listBatch is how many keys one range request reads at most; a page of
// pageSize rows asks for what it still needs (at least minListBatch, since
// filters may drop rows).
const (
	listBatch    = 1024
	minListBatch = 32
)

// tokenVersion tags the current token format.
const tokenVersion = 1

// pageToken is the decoded form of a continuation token.
type pageToken struct {
	Version  int    `json:"v"`
	Digest   string `json:"d"`
	Revision int64  `json:"r"`
	LastKey  []byte `json:"k"`
}

// List implements storecore.Backend: one page of q's rows from the watch
// cache when it can answer (mesh nodes and peers, cache_read.go), or read
// from etcd at one revision (list), each then projected, when q asks for
// it, over the store at that same revision: the rows' projection reads
// (the capacity ledger buckets of a page of mesh-node descriptors,
// 03b E-14) are read with one range read per table (observeAt), anything
// else the projection meets on demand (readAt).
func (b backend) List(ctx context.Context, q *storecore.ListQuery) (storecore.ListPage, error) {
	s := b.s
	if s.cache != nil {
		if page, ok, err := s.cache.list(ctx, q); ok || err != nil {
			return page, err
		}
	}
	var now time.Time
	if q.Project != nil {
		now = s.now()
	}
	page, err := list(ctx, s, q)
	if err != nil {
		return storecore.ListPage{}, err
	}
	rows := make([]any, 0, len(page.rows))
	for _, r := range page.rows {
		rows = append(rows, r.row)
	}
	if q.Project == nil {
		return storecore.ListPage{Rows: rows, Token: page.token}, nil
	}
	var reads []storecore.Ref
	if q.ProjectReads != nil {
		for _, r := range rows {
			reads = append(reads, q.ProjectReads(r)...)
		}
	}
	known, err := s.observeAt(ctx, reads, page.revision)
	if err != nil {
		return storecore.ListPage{}, readError(err)
	}
	projected, err := readAt(ctx, s, page.revision, now, known, func(tx *rules.Tx) ([]any, error) {
		out := make([]any, 0, len(rows))
		for _, r := range rows {
			out = append(out, q.Project(tx, r))
		}
		return out, nil
	})
	if err != nil {
		return storecore.ListPage{}, err
	}
	return storecore.ListPage{Rows: projected, Token: page.token}, nil
}

// listedRow is one match with its etcd key.
type listedRow struct {
	key string
	row any
}

// listPage is one page of a list and the revision it was read at.
type listPage struct {
	rows     []listedRow
	token    string
	revision int64
}

// digest identifies the list a token belongs to: the operation, the narrowed
// prefix and the filter.
func digest(q *storecore.ListQuery) string {
	f, _ := json.Marshal(q.Filter) // filters are plain data; an error leaves them out
	h := sha256.Sum256([]byte(q.Op.Name + "\x00" + q.Narrow + "\x00" + string(f)))
	return hex.EncodeToString(h[:8])
}

// encodeToken returns the opaque continuation token.
func encodeToken(t pageToken) string {
	b, _ := json.Marshal(t) // a struct of numbers, strings and bytes
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeToken parses a token of this list; ok is false for anything else.
func decodeToken(text, digest, prefix string) (pageToken, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return pageToken{}, false
	}
	var t pageToken
	if err := json.Unmarshal(raw, &t); err != nil {
		return pageToken{}, false
	}
	if t.Version != tokenVersion || t.Digest != digest || t.Revision <= 0 ||
		len(t.LastKey) <= len(prefix) || string(t.LastKey[:len(prefix)]) != prefix {
		return pageToken{}, false
	}
	return t, true
}

// list reads one page of q (page size <= 0: every match).
func list(ctx context.Context, s *Store, q *storecore.ListQuery) (listPage, error) {
	p := q.Page
	prefix := s.layout.TablePrefix(string(q.Table)) + q.Narrow
	digest := digest(q)
	start, rev := prefix, int64(0)
	if p.ContinuationToken != "" {
		if t, ok := decodeToken(p.ContinuationToken, digest, prefix); ok {
			start, rev = string(t.LastKey)+"\x00", t.Revision
		}
	}
	page, err := scan(ctx, s, q, prefix, start, rev, p.PageSize)
	if err != nil && rev > 0 && isFutureRevision(err) {
		// A token from another cluster: restart, as for a foreign token.
		page, err = scan(ctx, s, q, prefix, prefix, 0, p.PageSize)
	}
	if err != nil {
		return listPage{}, readError(err)
	}
	page.token = ""
	if p.PageSize > 0 && len(page.rows) > p.PageSize {
		page.rows = page.rows[:p.PageSize]
		page.token = encodeToken(pageToken{Version: tokenVersion, Digest: digest, Revision: page.revision,
			LastKey: []byte(page.rows[len(page.rows)-1].key)})
	}
	return page, nil
}

// scan collects matches from start to the end of prefix at rev (0: the
// latest, which then pins the rest of the scan), stopping after
// pageSize + 1 matches when pageSize > 0.
func scan(ctx context.Context, s *Store, q *storecore.ListQuery, prefix, start string, rev int64, pageSize int) (listPage, error) {
	var out listPage
	live := map[string]bool{}
	opts := ScanOptions{Revision: rev, Batch: listBatch}
	if pageSize > 0 {
		opts.BatchFor = func() int64 { return int64(min(listBatch, max(pageSize+1-len(out.rows), minListBatch))) }
	}
	rev, err := ScanRange(ctx, s.kv, start, keys.PrefixEnd(prefix), opts, func(p ScanPage) (bool, error) {
		s.engine.NoteRevision(p.HeaderRevision)
		var batch []listedRow
		// Without a liveness filter, the rows after the look-ahead match are
		// not decoded.
		enough := func() bool { return pageSize > 0 && q.LiveOwner == nil && len(out.rows)+len(batch) > pageSize }
		for _, kv := range p.KVs {
			if enough() {
				break
			}
			o := txn.Observation{Key: string(kv.Key), Present: true, Value: kv.Value, ModRevision: kv.ModRevision,
				CreateRevision: kv.CreateRevision, Version: kv.Version, Revision: p.Revision}
			rec, err := decodeRecord(q.Table, o)
			if err != nil {
				return true, err
			}
			if q.Match == nil || q.Match(rec.Value) {
				batch = append(batch, listedRow{key: o.Key, row: rec.Value})
			}
		}
		if q.LiveOwner != nil {
			var err error
			if batch, err = keepLiveOwners(ctx, s, p.Revision, batch, q.LiveOwner, live); err != nil {
				return true, err
			}
		}
		out.rows = append(out.rows, batch...)
		return pageSize > 0 && len(out.rows) > pageSize, nil
	})
	if err != nil {
		return listPage{}, err
	}
	out.revision = rev
	return out, nil
}

// keepLiveOwners keeps the rows whose owner id has an owner key at rev
// (any generation, anomaly A-16). live caches the answers of this scan.
func keepLiveOwners(ctx context.Context, s *Store, rev int64, rows []listedRow, owner func(any) string, live map[string]bool) ([]listedRow, error) {
	var ask []string
	for i := range rows {
		id := owner(rows[i].row)
		if _, known := live[id]; !known {
			ask = append(ask, s.layout.OwnerKey(id))
			live[id] = false
		}
	}
	if len(ask) > 0 {
		got, err := s.engine.ReadKeys(ctx, ask, rev)
		if err != nil {
			return nil, err
		}
		for k, o := range got.Keys {
			if id, ok := s.layout.OwnerIDOfKey(k); ok && o.Present {
				live[id] = true
			}
		}
	}
	kept := rows[:0]
	for _, r := range rows {
		if live[owner(r.row)] {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// isFutureRevision reports whether err says a revision is in the future.
func isFutureRevision(err error) bool {
	return errors.Is(err, rpctypes.ErrFutureRev) || strings.Contains(err.Error(), "future revision")
}
