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

// ScanAuthorities lists the records whose key starts with prefix, in byte
// order of the key, limit per page. A continuation cursor is valid only
// while no authority record changed since the first page (the reference's
// scan revision); a cursor that is stale, belongs to another prefix or
// cannot be decoded answers scanExpired (decision E-10). It implements
// storecore.Backend.
func (b backend) ScanAuthorities(_ context.Context, prefix, cursor string, limit int) (location.AuthorityScanResult, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
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
		page.Items = append(page.Items, location.AuthorityEntry{Key: location.AuthorityKey(k), Snapshot: rules.AuthoritySnapshotOf(row, now)})
	}
	if end < len(keys) {
		page.NextCursor = scanCursor{revision: s.scanRevision, offset: end, prefix: prefix}.encode()
	}
	return page, nil
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
