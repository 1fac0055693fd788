package etcdstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Authority records (04; 05): one key per record under the authority table,
// the authority key raw and last, so that a listing prefix is a key range.
// A record's store version is its key's ModRevision (decision E-4).

// Authority scan pages (decision E-10): byte order of the key, read at the
// first page's revision. A cursor carries that revision, a digest of the
// prefix and the last returned key; a cursor that cannot be decoded, belongs
// to another prefix, or whose revision was compacted answers scanExpired.
// A page stops early (with a cursor) once it holds maxPageBytes of values.

// maxPageBytes bounds the values of one authority page (framework spec 21:
// 4 MiB); at least one record is always returned.
const maxPageBytes = 4 << 20

// authorityBatch is how many records one range request of a scan reads.
const authorityBatch = 64

// scanCursorVersion tags the current cursor format.
const scanCursorVersion = 1

// scanCursor is a decoded authority cursor.
type scanCursor struct {
	revision int64
	digest   [8]byte
	lastKey  string
}

func prefixDigest(prefix string) [8]byte {
	h := sha256.Sum256([]byte(prefix))
	return [8]byte(h[:8])
}

// encode returns the cursor as opaque URL-safe text: version, revision
// (uvarint), prefix digest, last key.
func (c scanCursor) encode() string {
	b := []byte{scanCursorVersion}
	b = binary.AppendUvarint(b, uint64(c.revision))
	b = append(b, c.digest[:]...)
	b = append(b, c.lastKey...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeScanCursor parses a cursor made by encode.
func decodeScanCursor(text string) (scanCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || len(b) < 1 || b[0] != scanCursorVersion {
		return scanCursor{}, false
	}
	rev, n := binary.Uvarint(b[1:])
	if n <= 0 || rev == 0 || rev > uint64(location.MaxGeneration) || len(b) < 1+n+8+1 {
		return scanCursor{}, false
	}
	c := scanCursor{revision: int64(rev), lastKey: string(b[1+n+8:])}
	copy(c.digest[:], b[1+n:1+n+8])
	return c, true
}

// ScanAuthorities lists the records whose key starts with prefix, in byte
// order, limit per page (storecore.Store.ListAuthorities). It implements
// storecore.Backend.
func (b backend) ScanAuthorities(ctx context.Context, prefix, cursor string, limit int) (location.AuthorityScanResult, error) {
	s := b.s
	now := s.now()
	expired := location.AuthorityScanResult{Kind: location.KindScanExpired}
	table := s.layout.TablePrefix(string(rules.TableAuthority))
	start, rev := table+prefix, int64(0)
	if cursor != "" {
		c, ok := decodeScanCursor(cursor)
		if !ok || c.digest != prefixDigest(prefix) || !strings.HasPrefix(c.lastKey, prefix) {
			return expired, nil
		}
		start, rev = table+c.lastKey+"\x00", c.revision
	}
	page := location.AuthorityScanResult{Kind: location.KindPage, Items: []location.AuthorityEntry{}}
	size := 0
	batch := func() int64 { return int64(min(limit+1-len(page.Items), authorityBatch)) }
	rev, err := ScanRange(ctx, s.kv, start, keys.PrefixEnd(table+prefix), ScanOptions{Revision: rev, BatchFor: batch}, func(p ScanPage) (bool, error) {
		s.engine.NoteRevision(p.HeaderRevision)
		for _, kv := range p.KVs {
			if len(page.Items) == limit || len(page.Items) > 0 && size >= maxPageBytes {
				last := page.Items[len(page.Items)-1].Key
				page.NextCursor = scanCursor{revision: p.Revision, digest: prefixDigest(prefix), lastKey: string(last)}.encode()
				return true, nil
			}
			o := txn.Observation{Key: string(kv.Key), Present: true, Value: kv.Value, ModRevision: kv.ModRevision, Revision: p.Revision}
			rec, err := decodeRecord(rules.TableAuthority, o)
			if err != nil {
				return true, err
			}
			row, ok := rec.Value.(rules.AuthorityRow)
			if !ok {
				return true, fmt.Errorf("%w: %s holds %T", location.ErrInternal, o.Key, rec.Value)
			}
			page.Items = append(page.Items, location.AuthorityEntry{
				Key:      location.AuthorityKey(strings.TrimPrefix(o.Key, table)),
				Snapshot: rules.AuthoritySnapshotOf(row, now),
			})
			size += len(kv.Value)
		}
		return false, nil
	})
	switch {
	case err == nil:
		return page, nil
	case errors.Is(err, location.ErrInternal):
		return location.AuthorityScanResult{}, err
	case rev > 0 && (txn.IsCompacted(err) || isFutureRevision(err)):
		return expired, nil
	}
	return location.AuthorityScanResult{}, txn.Unavailable("read", err)
}
