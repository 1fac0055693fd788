package rules

import "github.com/zlink-systems/zlink-etcd/location"

// RemoveAuthorityRow removes one authority row for removeAllByOwner's
// authority part (04 §2.14): its capacity leaves the active ledger (active
// rows) or the reserved ledger (reserved rows), the row is deleted and the
// scan revision moves (once per plan, however many rows go). No version is
// consumed and no reservation terminal is written (D-32); relocation
// reservations and aggregates are untouched (D-11). The caller selects the
// rows of the exact owner token. A missing row changes nothing.
func RemoveAuthorityRow(tx *Tx, key location.AuthorityKey) error {
	k := string(key)
	row, ok := authorityRow(tx, k)
	if !ok {
		return nil
	}
	a := row.Allocation
	ledger := newLedgerChanges()
	if a.State == location.AllocationActive {
		ledger.active(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, -1)
	} else {
		ledger.reserved(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, -1)
	}
	if err := ledger.write(tx); err != nil {
		return err
	}
	tx.Delete(TableAuthority, k)
	tx.BumpScanRevision()
	return nil
}
