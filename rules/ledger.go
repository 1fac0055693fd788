package rules

import (
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// LedgerUsage returns the active and reserved counts of one capacity bucket
// (zero when the bucket is absent).
func LedgerUsage(tx *Tx, b Bucket) LedgerEntry {
	e, _ := valueAt[LedgerEntry](tx, TableLedger, b.Key())
	return e
}

// CapacityUsage is the reference's capacityUsage accessor (04 §1.6.5), which
// listMeshNodes reads: objectKind "actor" selects the actor bucket,
// "user_spot" and "instance_spot" the typed bucket of stableType, anything
// else (the location store passes "spot") the spot bucket.
func CapacityUsage(tx *Tx, d location.MeshNodeKey, lifecycle int64, objectKind, stableType string) LedgerEntry {
	b := Bucket{Descriptor: d, Lifecycle: lifecycle, Name: BucketSpot}
	switch location.ObjectKind(objectKind) {
	case location.ObjectActor:
		b.Name = BucketActor
	case location.ObjectUserSpot, location.ObjectInstanceSpot:
		b.Name, b.StableType = objectKind, stableType
	}
	return LedgerUsage(tx, b)
}

// typedBucket is the bucket of a spot-type delta.
func typedBucket(d location.MeshNodeKey, lifecycle int64, t location.SpotTypeDelta) Bucket {
	return Bucket{Descriptor: d, Lifecycle: lifecycle, Name: string(t.ObjectKind), StableType: t.StableType}
}

// ledgerDelta is the pending change of one bucket.
type ledgerDelta struct {
	bucket           Bucket
	active, reserved int64
}

// ledgerChanges collects every ledger movement of one decision, merged per
// bucket, so that they can be checked together and then written (D-12
// fixed: an underflow anywhere applies nothing).
type ledgerChanges struct {
	order  []string
	deltas map[string]*ledgerDelta
}

// newLedgerChanges returns an empty change set.
func newLedgerChanges() *ledgerChanges {
	return &ledgerChanges{deltas: map[string]*ledgerDelta{}}
}

// reserved moves the reserved ledger by sign × the vector at the allocation's
// node incarnation.
func (c *ledgerChanges) reserved(d location.MeshNodeKey, lifecycle int64, v location.CapacityVector, sign int64) {
	c.add(d, lifecycle, v, 0, sign)
}

// active moves the active ledger by sign × the vector.
func (c *ledgerChanges) active(d location.MeshNodeKey, lifecycle int64, v location.CapacityVector, sign int64) {
	c.add(d, lifecycle, v, sign, 0)
}

// add records the vector's entries (04 §1.6.2): actors and spots when
// positive, the typed bucket when present.
func (c *ledgerChanges) add(d location.MeshNodeKey, lifecycle int64, v location.CapacityVector, activeSign, reservedSign int64) {
	if v.Actors != 0 {
		c.bucket(Bucket{Descriptor: d, Lifecycle: lifecycle, Name: BucketActor}, v.Actors*activeSign, v.Actors*reservedSign)
	}
	if v.Spots != 0 {
		c.bucket(Bucket{Descriptor: d, Lifecycle: lifecycle, Name: BucketSpot}, v.Spots*activeSign, v.Spots*reservedSign)
	}
	if v.SpotType != nil {
		t := *v.SpotType
		c.bucket(typedBucket(d, lifecycle, t), t.Count*activeSign, t.Count*reservedSign)
	}
}

// bucket adds to one bucket's pending change.
func (c *ledgerChanges) bucket(b Bucket, active, reserved int64) {
	key := b.Key()
	d, ok := c.deltas[key]
	if !ok {
		d = &ledgerDelta{bucket: b}
		c.deltas[key] = d
		c.order = append(c.order, key)
	}
	d.active += active
	d.reserved += reserved
}

// write checks that no bucket would go below zero, then plans the new
// entries; a bucket that reaches 0/0 is deleted, an unchanged one is not
// written. An underflow is a broken invariant (INV-7): it returns an error
// wrapping location.ErrInternal and plans nothing.
func (c *ledgerChanges) write(tx *Tx) error {
	next := make([]LedgerEntry, len(c.order))
	for i, key := range c.order {
		d := c.deltas[key]
		cur := LedgerUsage(tx, d.bucket)
		n := LedgerEntry{Active: cur.Active + d.active, Reserved: cur.Reserved + d.reserved}
		if n.Active < 0 || n.Reserved < 0 {
			return fmt.Errorf("rules: capacity ledger %s/%s/%d %s %q would become negative (active %d%+d, reserved %d%+d): %w",
				d.bucket.Descriptor.MeshName, d.bucket.Descriptor.RID, d.bucket.Lifecycle, d.bucket.Name, d.bucket.StableType,
				cur.Active, d.active, cur.Reserved, d.reserved, location.ErrInternal)
		}
		next[i] = n
	}
	for i, key := range c.order {
		d := c.deltas[key]
		switch {
		case d.active == 0 && d.reserved == 0:
		case next[i] == (LedgerEntry{}):
			tx.Delete(TableLedger, key)
		default:
			tx.Put(TableLedger, key, next[i], 0)
		}
	}
	return nil
}
