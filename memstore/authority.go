package memstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// ReadAuthority returns the authority record under key, or missing. It
// implements location.AuthorityStore.
func (s *Store) ReadAuthority(ctx context.Context, key location.AuthorityKey) (location.AuthorityReadResult, error) {
	return decide(ctx, s, "ReadAuthority",
		func() error { return location.ValidateCanonicalAuthorityKey(key) },
		func(tx *rules.Tx) (location.AuthorityReadResult, error) { return rules.ReadAuthority(tx, key), nil })
}

// CompareExchangeAuthority applies m to the record under key if its version
// is expected. It implements location.AuthorityStore.
func (s *Store) CompareExchangeAuthority(ctx context.Context, key location.AuthorityKey, expected location.StoreVersion, m location.AuthorityMutation) (location.CompareExchangeResult, error) {
	return decide(ctx, s, "CompareExchangeAuthority",
		func() error { return location.ValidateCompareExchange(key, m) },
		func(tx *rules.Tx) (location.CompareExchangeResult, error) {
			return rules.CompareExchangeAuthority(tx, key, expected, m)
		})
}

// ListAuthorities lists the records whose key starts with prefix, in byte
// order of the key, limit per page. A continuation cursor is valid only
// while no authority record changed since the first page (the reference's
// scan revision); a cursor that is stale, belongs to another prefix or
// cannot be decoded answers scanExpired (decision E-10). It implements
// location.AuthorityStore.
func (s *Store) ListAuthorities(ctx context.Context, prefix, cursor string, limit int) (location.AuthorityScanResult, error) {
	return decide(ctx, s, "ListAuthorities",
		func() error { return location.ValidateListAuthorities(prefix, cursor, limit) },
		func(tx *rules.Tx) (location.AuthorityScanResult, error) {
			offset := 0
			if cursor != "" {
				c, ok := decodeScanCursor(cursor)
				if !ok || c.revision != s.scanRevision || c.prefix != prefix {
					return location.AuthorityScanResult{Kind: location.KindScanExpired}, nil
				}
				offset = c.offset
			}
			var keys []string
			for k := range s.tables[rules.TableAuthority] {
				if strings.HasPrefix(k, prefix) {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			page := location.AuthorityScanResult{Kind: location.KindPage, Items: []location.AuthorityEntry{}}
			start := min(offset, len(keys))
			end := start + min(limit, len(keys)-start)
			for _, k := range keys[start:end] {
				row, ok := s.tables[rules.TableAuthority][k].Value.(rules.AuthorityRow)
				if !ok {
					return location.AuthorityScanResult{}, fmt.Errorf("authority key %q holds %T: %w", k, s.tables[rules.TableAuthority][k].Value, location.ErrInternal)
				}
				page.Items = append(page.Items, location.AuthorityEntry{Key: location.AuthorityKey(k), Snapshot: rules.AuthoritySnapshotOf(row, tx.Now())})
			}
			if end < len(keys) {
				page.NextCursor = scanCursor{revision: s.scanRevision, offset: end, prefix: prefix}.encode()
			}
			return page, nil
		})
}

// scanCursor is the position of a ListAuthorities scan: the scan revision it
// was issued at, the next offset, and the scan's prefix.
type scanCursor struct {
	revision int64
	offset   int
	prefix   string
}

// scanCursorTag starts every memstore cursor (format version 1).
const scanCursorTag = "m1:"

// encode returns the cursor as opaque URL-safe text.
func (c scanCursor) encode() string {
	raw := scanCursorTag + strconv.FormatInt(c.revision, 10) + ":" + strconv.Itoa(c.offset) + ":" + c.prefix
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeScanCursor parses a cursor made by encode.
func decodeScanCursor(text string) (scanCursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return scanCursor{}, false
	}
	rest, ok := strings.CutPrefix(string(raw), scanCursorTag)
	if !ok {
		return scanCursor{}, false
	}
	rev, rest, ok1 := strings.Cut(rest, ":")
	off, prefix, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return scanCursor{}, false
	}
	revision, err1 := strconv.ParseInt(rev, 10, 64)
	offset, err2 := strconv.Atoi(off)
	if err1 != nil || err2 != nil || offset < 0 {
		return scanCursor{}, false
	}
	return scanCursor{revision: revision, offset: offset, prefix: prefix}, true
}
