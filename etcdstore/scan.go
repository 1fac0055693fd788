package etcdstore

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/leasemap"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// ScanPart names the part of a store's key layout (docs/key-layout.md)
// that Scan reads: ScanRows, ScanOwnerLeases or ScanOwnerIndex.
type ScanPart struct {
	kind    scanKind
	table   rules.Table
	ownerID string
}

type scanKind int

const (
	scanRows scanKind = iota + 1
	scanOwnerLeases
	scanOwnerIndex
)

// ScanRows is the rows of table t, decoded (Entry.Row).
func ScanRows(t rules.Table) ScanPart { return ScanPart{kind: scanRows, table: t} }

// ScanOwnerLeases is the owner leases, decoded (Entry.OwnerID,
// Entry.OwnerLease).
func ScanOwnerLeases() ScanPart { return ScanPart{kind: scanOwnerLeases} }

// ScanOwnerIndex is the owner-index entries of ownerID, or of every owner
// when ownerID is "" (Entry.OwnerID, Entry.Table, Entry.TableKey). Only
// keys are read: an entry's value is its write's nonce.
func ScanOwnerIndex(ownerID string) ScanPart { return ScanPart{kind: scanOwnerIndex, ownerID: ownerID} }

// Entry is one stored key as Scan decodes it.
type Entry struct {
	// Key is the etcd key; ModRevision, CreateRevision, Version and Lease
	// its metadata.
	Key                                         string
	ModRevision, CreateRevision, Version, Lease int64
	// Table and TableKey name a row (ScanRows), or the row an owner-index
	// entry lists (ScanOwnerIndex).
	Table    rules.Table
	TableKey string
	// Row is a row's value (of the table's Go type, rules.TableSpec.Type)
	// and row generation. An authority row's StoreVersion is its key's
	// ModRevision, as the store reports it.
	Row rules.Record
	// OwnerID is an owner lease's owner id (ScanOwnerLeases), or the owner
	// of an owner-index entry (ScanOwnerIndex).
	OwnerID string
	// OwnerLease is an owner lease's stored value (ScanOwnerLeases). Its
	// ExpiresAtMs is stale when KeepAlive is set: the lease's expiry is then
	// the etcd lease's (leasemap.KeptExpiry).
	OwnerLease leasemap.Record
}

// Scan reads one part of the store whose keys layout describes, through kv
// (the store's client, or another one of the same cluster), at one
// revision, and calls fn with every key decoded with the store's own
// decoders (the table registry's value types, leasemap's owner-lease
// record, the layout's key parsing). It returns the revision read. It is
// the read-only scan that tools use (inspect, gc); like every read of the
// store's ranges it pages through ScanRange. A value that does not decode
// is an error wrapping location.ErrInternal that names its key; other
// errors are kv's or fn's. opts.KeysOnly is implied for ScanOwnerIndex and
// refused for the others.
func Scan(ctx context.Context, kv clientv3.KV, layout keys.Layout, part ScanPart, opts ScanOptions, fn func(Entry) error) (int64, error) {
	var prefix string
	switch part.kind {
	case scanRows:
		if _, ok := rules.Lookup(part.table); !ok {
			return 0, fmt.Errorf("%w: scan of unknown table %q", location.ErrInvalidArgument, part.table)
		}
		prefix = layout.TablePrefix(string(part.table))
	case scanOwnerLeases:
		prefix = layout.OwnerPrefix()
	case scanOwnerIndex:
		prefix, opts.KeysOnly = layout.ByOwnerPrefix(), true
		if part.ownerID != "" {
			prefix = layout.OwnerIndexPrefix(part.ownerID)
		}
	default:
		return 0, fmt.Errorf("%w: scan of an unnamed part (use ScanRows, ScanOwnerLeases, ScanOwnerIndex)", location.ErrInvalidArgument)
	}
	if opts.KeysOnly && part.kind != scanOwnerIndex {
		return 0, fmt.Errorf("%w: a keys-only scan cannot decode values", location.ErrInvalidArgument)
	}
	return ScanRange(ctx, kv, prefix, keys.PrefixEnd(prefix), opts, func(p ScanPage) (bool, error) {
		for _, kv := range p.KVs {
			e := Entry{Key: string(kv.Key), ModRevision: kv.ModRevision, CreateRevision: kv.CreateRevision,
				Version: kv.Version, Lease: kv.Lease}
			keep, err := decodeEntry(layout, part, kv.Value, p.Revision, &e)
			if err != nil {
				return true, err
			}
			if keep {
				if err := fn(e); err != nil {
					return true, err
				}
			}
		}
		return false, nil
	})
}

// decodeEntry fills e from its key and value; keep is false for a key the
// part does not own (an owner-index key that does not parse).
func decodeEntry(layout keys.Layout, part ScanPart, value []byte, rev int64, e *Entry) (keep bool, err error) {
	switch part.kind {
	case scanRows:
		e.Table, e.TableKey = part.table, e.Key[len(layout.TablePrefix(string(part.table))):]
		e.Row, err = decodeFresh(part.table, txn.Observation{Key: e.Key, Present: true, Value: value,
			ModRevision: e.ModRevision, CreateRevision: e.CreateRevision, Version: e.Version, Revision: rev})
		return err == nil, err
	case scanOwnerLeases:
		if e.OwnerLease, err = leasemap.DecodeRecord(value); err != nil {
			return false, fmt.Errorf("owner lease %q: %w", e.Key, err)
		}
		owner, ok := layout.OwnerIDOfKey(e.Key)
		if !ok {
			owner = e.OwnerLease.OwnerID
		}
		e.OwnerID = owner
		return true, nil
	default:
		owner, table, key, ok := layout.SplitOwnerIndexKey(e.Key)
		e.OwnerID, e.Table, e.TableKey = owner, rules.Table(table), key
		return ok, nil
	}
}
