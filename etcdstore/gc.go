package etcdstore

import (
	"context"
	"slices"
	"time"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// DefaultReservationTerminalAge is how long the garbage collector keeps
// reservation terminals (decision Q5).
const DefaultReservationTerminalAge = 7 * 24 * time.Hour

// purgeBatch is how many keys one purge transaction deletes at most.
const purgeBatch = 64

// GCOptions configure CollectGarbage.
type GCOptions struct {
	// DryRun reports what would be removed without removing anything.
	DryRun bool
	// ReservationTerminalAge: reservation terminals written longer ago are
	// purged; 0 means DefaultReservationTerminalAge, a negative value keeps
	// them all.
	ReservationTerminalAge time.Duration
}

// GCReport is what a collection removed (or, in a dry run, would remove).
type GCReport struct {
	DryRun bool
	// DeadOwners are the owner ids that hold rows but no owner lease.
	DeadOwners []string
	// Rows counts the dead owners' location rows.
	Rows int64
	// StaleIndexEntries counts owner-index entries whose row is gone or has
	// another owner.
	StaleIndexEntries int64
	// OperationTerminals counts creation terminals past their expiry
	// (decision E-11: invisible already).
	OperationTerminals int64
	// ReservationTerminals counts reservation terminals older than the age.
	ReservationTerminals int64
}

// CollectGarbage is the operators' garbage collection (decision E-1): rows
// are durable, so the location rows (descriptors, peers, spots, actors,
// routes, with their entry-spot claims and stamps) of owners whose lease is
// gone stay until taken over or removed; this removes them. Authority
// records never expire and are kept (D-20). It also purges creation
// terminals past their expiry and old reservation terminals (Q5), and owner
// index entries that no longer match their row.
//
// Every removal is guarded: a dead owner's rows go in batches that each
// re-assert that the owner key is still absent (an owner that claims its
// lease again keeps the rest), and each row, terminal or entry is removed
// only if unchanged since it was judged.
//
// It runs as one operation of the store (storecore.Do): observed, its
// context checked first, its errors prefixed like every other operation's.
func (s *Store) CollectGarbage(ctx context.Context, opts GCOptions) (GCReport, error) {
	rep, err := storecore.Do(ctx, &s.Store, storecore.Op{Name: "CollectGarbage"}, nil,
		func(ctx context.Context) (GCReport, error) { return s.collectGarbage(ctx, opts) })
	rep.DryRun = opts.DryRun
	return rep, err
}

// collectGarbage is CollectGarbage's work; on an error, the report says what
// was done before it.
func (s *Store) collectGarbage(ctx context.Context, opts GCOptions) (GCReport, error) {
	const op = "CollectGarbage"
	rep := GCReport{DryRun: opts.DryRun}
	now := s.now()
	entries, err := s.indexEntries(ctx, "")
	if err != nil {
		return rep, txn.Unavailable("read the owner index", err)
	}
	byOwner := map[string][]indexEntry{}
	var owners []string
	for _, e := range entries {
		if _, ok := byOwner[e.ownerID]; !ok {
			owners = append(owners, e.ownerID)
		}
		byOwner[e.ownerID] = append(byOwner[e.ownerID], e)
	}
	ownerKeys := make([]string, len(owners))
	for i, owner := range owners {
		ownerKeys[i] = s.layout.OwnerKey(owner)
	}
	got, err := s.engine.ReadKeys(ctx, ownerKeys, 0)
	if err != nil {
		return rep, txn.Unavailable("read the owner keys", err)
	}
	for i, owner := range owners {
		if got.Keys[ownerKeys[i]].Present {
			continue
		}
		rep.DeadOwners = append(rep.DeadOwners, owner)
		if err := s.collectOwner(ctx, op, owner, byOwner[owner], &rep); err != nil {
			return rep, err
		}
	}
	slices.Sort(rep.DeadOwners)

	terminals, err := s.purge(ctx, op, rules.TableOperationTerminals, opts.DryRun, func(o txn.Observation) (bool, error) {
		rec, err := decodeRecord(rules.TableOperationTerminals, o)
		if err != nil {
			return false, err
		}
		t, ok := rec.Value.(location.TerminalRecord)
		return ok && !now.Before(t.ExpiresAt), nil
	})
	rep.OperationTerminals = terminals
	if err != nil {
		return rep, err
	}
	age := opts.ReservationTerminalAge
	if age == 0 {
		age = DefaultReservationTerminalAge
	}
	if age > 0 {
		rep.ReservationTerminals, err = s.purge(ctx, op, rules.TableReservationTerminals, opts.DryRun, func(o txn.Observation) (bool, error) {
			at, err := writtenAt(o)
			return err == nil && !now.Before(at.Add(age)), err
		})
	}
	return rep, err
}

// collectOwner removes (or counts) a dead owner's location rows and stale
// index entries.
func (s *Store) collectOwner(ctx context.Context, op, owner string, entries []indexEntry, rep *GCReport) error {
	if rep.DryRun {
		return s.countOwner(ctx, op, owner, entries, rep)
	}
	removed, stale, err := s.removeInBatches(ctx, op, owner, entries,
		func(tx *rules.Tx) bool {
			_, live := tx.Source().LiveLease(owner)
			return !live
		},
		func(tx *rules.Tx, e indexEntry) (bool, error) {
			if e.table == rules.TableAuthority {
				return false, nil // authority records never expire
			}
			return true, rules.RemoveLocationRow(tx, e.table, e.key)
		})
	rep.Rows += removed
	rep.StaleIndexEntries += stale
	return err
}

// countOwner is collectOwner's dry run: it reads the rows and counts.
func (s *Store) countOwner(ctx context.Context, op, owner string, entries []indexEntry, rep *GCReport) error {
	rowKeys := make([]string, len(entries))
	for i, e := range entries {
		rowKeys[i] = s.tableKey(e.table, e.key)
	}
	got, err := s.engine.ReadKeys(ctx, rowKeys, 0)
	if err != nil {
		return txn.Unavailable("read the owners' rows", err)
	}
	for i, e := range entries {
		o := got.Keys[rowKeys[i]]
		if !o.Present {
			rep.StaleIndexEntries++
			continue
		}
		rec, _, err := sharedRecord(e.table, o)
		if err != nil {
			return err
		}
		if id, ok := ownerOf(e.table, rec.Value); !ok || id != owner {
			rep.StaleIndexEntries++
		} else if e.table != rules.TableAuthority {
			rep.Rows++
		}
	}
	return nil
}

// purge deletes (or, dry, counts) the rows of table that doomed accepts,
// each only if unchanged since it was judged.
func (s *Store) purge(ctx context.Context, op string, table rules.Table, dry bool, doomed func(txn.Observation) (bool, error)) (int64, error) {
	prefix := s.layout.TablePrefix(string(table))
	var candidates []string
	var judged error
	_, err := ScanRange(ctx, s.kv, prefix, keys.PrefixEnd(prefix), ScanOptions{Batch: listBatch}, func(p ScanPage) (bool, error) {
		for _, kv := range p.KVs {
			o := txn.Observation{Key: string(kv.Key), Present: true, Value: kv.Value, ModRevision: kv.ModRevision}
			ok, err := doomed(o)
			if err != nil {
				judged = err
				return true, nil
			}
			if ok {
				candidates = append(candidates, o.Key)
			}
		}
		return false, nil
	})
	switch {
	case judged != nil:
		return 0, judged
	case err != nil:
		return 0, txn.Unavailable("read "+string(table), err)
	}
	if dry {
		return int64(len(candidates)), nil
	}
	var removed int64
	for i := 0; i < len(candidates); i += purgeBatch {
		part := candidates[i:min(i+purgeBatch, len(candidates))]
		n, _, err := txn.Run(ctx, s.engine, op, part, func(v *txn.View) (int64, txn.Commit, error) {
			var c txn.Commit
			for _, k := range part {
				o, ok := v.Get(k)
				if !ok {
					continue
				}
				if d, err := doomed(o); err != nil || !d {
					if err != nil {
						return 0, txn.Commit{}, err
					}
					continue
				}
				c.Writes = append(c.Writes, txn.Delete(k))
			}
			return int64(len(c.Writes)), c, nil
		})
		if err != nil {
			return removed, err
		}
		removed += n
	}
	return removed, nil
}
