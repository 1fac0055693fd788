package etcdstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
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

// listQuery describes one list.
type listQuery[T any] struct {
	op    string
	table rules.Table
	// narrow is the key prefix within the table that the filter fixes.
	narrow string
	// filter identifies the filter in tokens (any JSON-encodable value).
	filter any
	match  func(*T) bool
	// ownerLive, when set, keeps only rows whose owner id (as returned) has
	// an owner key at the list's revision (ListFanoutPublishers, 03b E-13).
	ownerLive func(*T) string
}

// listedRow is one match with its etcd key.
type listedRow[T any] struct {
	key string
	row T
}

// listPage is one page of a list and the revision it was read at.
type listPage[T any] struct {
	rows     []listedRow[T]
	token    string
	revision int64
}

// digest identifies the list a token belongs to.
func (q *listQuery[T]) digest() string {
	f, _ := json.Marshal(q.filter) // filters are plain data; an error leaves them out
	h := sha256.Sum256([]byte(q.op + "\x00" + q.narrow + "\x00" + string(f)))
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

// list reads one page of q (pageSize <= 0: every match).
func list[T any](ctx context.Context, s *Store, q listQuery[T], p location.PageRequest) (listPage[T], error) {
	prefix := s.layout.TablePrefix(string(q.table)) + q.narrow
	digest := q.digest()
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
		return listPage[T]{}, readError(q.op, err)
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
func scan[T any](ctx context.Context, s *Store, q listQuery[T], prefix, start string, rev int64, pageSize int) (listPage[T], error) {
	end := keys.PrefixEnd(prefix)
	var out listPage[T]
	live := map[string]bool{}
	for {
		limit := int64(listBatch)
		if pageSize > 0 {
			limit = int64(min(listBatch, max(pageSize+1-len(out.rows), minListBatch)))
		}
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(limit)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.kv.Get(ctx, start, opts...)
		if err != nil {
			return listPage[T]{}, err
		}
		s.engine.NoteRevision(resp.Header.Revision)
		if rev == 0 {
			rev = resp.Header.Revision
		}
		var batch []listedRow[T]
		// Without a liveness filter, the rows after the look-ahead match are
		// not decoded.
		enough := func() bool { return pageSize > 0 && q.ownerLive == nil && len(out.rows)+len(batch) > pageSize }
		for _, kv := range resp.Kvs {
			if enough() {
				break
			}
			o := txn.Observation{Key: string(kv.Key), Present: true, Value: kv.Value, ModRevision: kv.ModRevision,
				CreateRevision: kv.CreateRevision, Version: kv.Version, Revision: rev}
			rec, err := decodeRecord(q.table, o)
			if err != nil {
				return listPage[T]{}, err
			}
			row, ok := rec.Value.(T)
			if !ok {
				return listPage[T]{}, fmt.Errorf("%w: %s holds %T", location.ErrInternal, o.Key, rec.Value)
			}
			if q.match == nil || q.match(&row) {
				batch = append(batch, listedRow[T]{key: o.Key, row: row})
			}
		}
		if q.ownerLive != nil {
			if batch, err = keepLiveOwners(ctx, s, rev, batch, q.ownerLive, live); err != nil {
				return listPage[T]{}, err
			}
		}
		out.rows = append(out.rows, batch...)
		if pageSize > 0 && len(out.rows) > pageSize || !resp.More || len(resp.Kvs) == 0 {
			out.revision = rev
			return out, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// keepLiveOwners keeps the rows whose owner id has an owner key at rev
// (any generation, anomaly A-16). live caches the answers of this scan.
func keepLiveOwners[T any](ctx context.Context, s *Store, rev int64, rows []listedRow[T], owner func(*T) string, live map[string]bool) ([]listedRow[T], error) {
	var ask []string
	for i := range rows {
		id := owner(&rows[i].row)
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
		if live[owner(&r.row)] {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// isFutureRevision reports whether err says a revision is in the future.
func isFutureRevision(err error) bool {
	return errors.Is(err, rpctypes.ErrFutureRev) || strings.Contains(err.Error(), "future revision")
}
