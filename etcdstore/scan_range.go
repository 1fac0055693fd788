package etcdstore

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultScanBatch is how many keys one range request of ScanRange reads
// when ScanOptions names no batch.
const DefaultScanBatch = 500

// ScanOptions configure ScanRange and Scan. The zero value reads every key
// of the range, with its value, at the latest revision, from the leader.
type ScanOptions struct {
	// Revision is the revision to read at; 0 means the latest, which the
	// first page then pins for the rest of the scan.
	Revision int64
	// Batch is the most keys one request reads; 0 means DefaultScanBatch.
	// BatchFor, when set, is asked before each request instead (a scan
	// that stops after so many matches reads no more than it needs); a
	// result of 0 or less means Batch.
	Batch    int64
	BatchFor func() int64
	// KeysOnly reads keys and their metadata without values.
	KeysOnly bool
	// Serializable reads from the member the client talks to, without the
	// leader (possibly stale; works without a quorum).
	Serializable bool
}

// ScanPage is one page of a ScanRange.
type ScanPage struct {
	// KVs are the page's keys, in key order.
	KVs []*mvccpb.KeyValue
	// Revision is the scan's revision; HeaderRevision the store's revision
	// when the page was read (never lower).
	Revision, HeaderRevision int64
}

// ScanRange reads every key in [start, end) in key order, page by page, all
// at one revision (opts.Revision, or the first page's), and calls fn with
// each page; fn returns stop to end the scan early. It returns the scan's
// revision. It is the one paging loop over etcd ranges of this module:
// every list, scan and sweep of a store (and inspect's, gc's and scratch's
// reads) pages through it. Errors are kv's, unwrapped (a compacted
// revision among them), or fn's.
func ScanRange(ctx context.Context, kv clientv3.KV, start, end string, opts ScanOptions, fn func(ScanPage) (stop bool, err error)) (int64, error) {
	rev := opts.Revision
	for {
		batch := opts.Batch
		if opts.BatchFor != nil {
			if b := opts.BatchFor(); b > 0 {
				batch = b
			}
		}
		if batch <= 0 {
			batch = DefaultScanBatch
		}
		ops := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(batch)}
		if rev > 0 {
			ops = append(ops, clientv3.WithRev(rev))
		}
		if opts.KeysOnly {
			ops = append(ops, clientv3.WithKeysOnly())
		}
		if opts.Serializable {
			ops = append(ops, clientv3.WithSerializable())
		}
		resp, err := kv.Get(ctx, start, ops...)
		if err != nil {
			return rev, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		stop, err := fn(ScanPage{KVs: resp.Kvs, Revision: rev, HeaderRevision: resp.Header.Revision})
		if err != nil || stop || !resp.More || len(resp.Kvs) == 0 {
			return rev, err
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
