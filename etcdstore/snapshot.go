package etcdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// snapshot is a read-only rules.Source over keys read at one revision, for
// the parts of lists that the rules compute (mesh-node capacity projection,
// owner liveness). A key it does not hold is recorded as a miss; readAt
// fetches the misses at the same revision and runs again.
type snapshot struct {
	s      *Store
	now    time.Time
	rev    int64
	obs    map[string]txn.Observation
	misses []string
	err    error
}

func (sn *snapshot) lookup(key string) (txn.Observation, bool) {
	o, ok := sn.obs[key]
	if !ok {
		sn.misses = append(sn.misses, key)
	}
	return o, ok && o.Present
}

func (sn *snapshot) Now() time.Time { return sn.now }

func (sn *snapshot) Get(t rules.Table, key string) (rules.Record, bool) {
	o, ok := sn.lookup(sn.s.tableKey(t, key))
	if !ok {
		return rules.Record{}, false
	}
	rec, err := decodeRecord(t, o)
	if err != nil {
		if sn.err == nil {
			sn.err = err
		}
		return rules.Record{}, false
	}
	return rec, true
}

func (sn *snapshot) LiveLease(ownerID string) (int64, bool) {
	o, ok := sn.lookup(sn.s.layout.OwnerKey(ownerID))
	return o.CreateRevision, ok
}

func (sn *snapshot) NextGeneration(rules.Table, string) int64          { return sn.rev + 1 }
func (sn *snapshot) CanIssue(int64, int64, int64) bool                 { return false }
func (sn *snapshot) IssueVersion() location.StoreVersion               { return pendingVersion }
func (sn *snapshot) IssueObjectGeneration(location.AuthorityKey) int64 { return sn.rev + 1 }
func (sn *snapshot) IssueOwnerGeneration(location.AuthorityKey) int64  { return sn.rev + 1 }
func (sn *snapshot) NewReservationID() string                          { return newUUID() }

// maxSnapshotRounds bounds how often one read asks for keys it has not seen.
const maxSnapshotRounds = 16

// readAt runs a read-only computation over the store as of revision rev:
// known holds observations made at rev already (present or absent); any
// other key the computation asks for is read at rev. The computation must
// not plan writes.
func readAt[R any](ctx context.Context, s *Store, rev int64, now time.Time, known map[string]txn.Observation, run func(tx *rules.Tx) (R, error)) (R, error) {
	var zero R
	sn := &snapshot{s: s, now: now, rev: rev, obs: known}
	if sn.obs == nil {
		sn.obs = map[string]txn.Observation{}
	}
	var fetch []string
	for range maxSnapshotRounds {
		if len(fetch) > 0 {
			got, err := s.engine.ReadKeys(ctx, fetch, rev)
			if err != nil {
				return zero, readError(err)
			}
			for k, o := range got.Keys {
				sn.obs[k] = o
			}
		}
		sn.misses, sn.err = nil, nil
		tx := rules.NewTx(sn)
		res, err := run(tx)
		if err == nil {
			err = sn.err
		}
		if err != nil && len(sn.misses) == 0 {
			return zero, err
		}
		if len(sn.misses) == 0 {
			if !tx.Plan().Empty() {
				return zero, fmt.Errorf("%w: a read planned writes", location.ErrInternal)
			}
			return res, nil
		}
		fetch = sn.misses
	}
	return zero, fmt.Errorf("%w: the read kept asking for keys it had not read", location.ErrInternal)
}

// readError wraps an etcd read error: a compacted revision becomes
// location.ErrScanExpired, anything else location.ErrUnavailable.
func readError(err error) error {
	if txn.IsCompacted(err) {
		return fmt.Errorf("%w: %w", location.ErrScanExpired, err)
	}
	return txn.Unavailable("read", err)
}

// ledgerBatch is how many keys one range request of observeAt reads (the
// capacity ledger buckets of a page of mesh-node descriptors).
const ledgerBatch = 4096

// observeAt reads the rows and owner keys refs name at revision rev, with
// one range read per table (from its smallest named key to its largest)
// instead of one read per key: cheap when the keys lie close together, as
// the capacity ledger buckets of a page of mesh-node descriptors do (a
// bucket's key starts with its descriptor's key, rules.Bucket.Key). Every
// named key is in the answer, present or absent; the other keys of the
// ranges (buckets of other node incarnations, of descriptors removed since)
// are left out.
func (s *Store) observeAt(ctx context.Context, refs []storecore.Ref, rev int64) (map[string]txn.Observation, error) {
	out := make(map[string]txn.Observation, len(refs))
	type span struct{ first, last string }
	var tables []rules.Table
	spans := map[rules.Table]*span{}
	for _, r := range refs {
		k := s.refKey(r)
		out[k] = txn.Observation{Key: k, Revision: rev}
		sp, ok := spans[r.Table]
		if !ok {
			tables = append(tables, r.Table)
			spans[r.Table] = &span{first: k, last: k}
			continue
		}
		sp.first, sp.last = min(sp.first, k), max(sp.last, k)
	}
	for _, t := range tables {
		_, err := ScanRange(ctx, s.kv, spans[t].first, spans[t].last+"\x00", ScanOptions{Revision: rev, Batch: ledgerBatch}, func(p ScanPage) (bool, error) {
			s.engine.NoteRevision(p.HeaderRevision)
			for _, kv := range p.KVs {
				k := string(kv.Key)
				if _, wanted := out[k]; wanted {
					out[k] = txn.Observation{Key: k, Present: true, Value: kv.Value, ModRevision: kv.ModRevision,
						CreateRevision: kv.CreateRevision, Version: kv.Version, Revision: rev}
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
