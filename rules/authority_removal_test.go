package rules_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// TestRemoveAuthorityRow checks the rule RemoveAllByOwner applies to each of
// an owner's authority rows: the row and its capacity go, no version is
// issued, the scan revision is bumped once, and a missing row plans
// nothing.
func TestRemoveAuthorityRow(t *testing.T) {
	t.Run("rows and their capacity go", func(t *testing.T) {
		f := newAuthF(t)
		TA := fixture.Target(f.NA)
		f.AS("o1", TA)
		f.AS("o2", TA)
		f.RS("o3", TA)
		ob := f.AS("ob", fixture.Target(f.NB))
		require.Equal(t, authUsage{Spots: rules.LedgerEntry{Active: 2, Reserved: 1}, Room: rules.LedgerEntry{Active: 2, Reserved: 1}}, f.U(f.NA))
		version, revision := f.src.version, f.src.scanRevision
		bumped := decided(f, func(tx *rules.Tx) (bool, error) {
			for _, id := range []string{"o1", "o2", "o3"} {
				if err := rules.RemoveAuthorityRow(tx, fixture.KS(id)); err != nil {
					return false, err
				}
			}
			return tx.Plan().ScanRevisionBumped, nil
		})
		require.True(t, bumped)
		for _, id := range []string{"o1", "o2", "o3"} {
			require.Equal(t, location.KindMissing, f.read(fixture.KS(id)).Kind)
		}
		require.Equal(t, ob, f.read(fixture.KS("ob")).Snapshot)
		require.Equal(t, authUsage{}, f.U(f.NA))
		require.Equal(t, version, f.src.version, "no version issued")
		require.Equal(t, revision+1, f.src.scanRevision, "one scan-revision bump")
	})
	t.Run("a missing row plans nothing", func(t *testing.T) {
		f := newAuthF(t)
		f.unchanged(func() {
			decided(f, func(tx *rules.Tx) (bool, error) {
				err := rules.RemoveAuthorityRow(tx, fixture.KS("none"))
				require.True(t, tx.Plan().Empty())
				return true, err
			})
		})
	})
}

func TestTargetLive(t *testing.T) {
	f := newAuthF(t)
	live := func() bool { return rules.TargetLive(rules.NewTx(f.src), f.NA.Key(), 1, f.A) }
	require.True(t, live())
	for name, c := range map[string]struct {
		change func(d *location.MeshNodeDescriptor)
		lease  *authLease
	}{
		"1_no_descriptor":       {change: nil},
		"2_lifecycle":           {change: func(d *location.MeshNodeDescriptor) { d.LifecycleGeneration = 2 }},
		"3_owner_id":            {change: func(d *location.MeshNodeDescriptor) { d.OwnerID = "owner-b" }},
		"3_lease_generation":    {change: func(d *location.MeshNodeDescriptor) { d.LeaseGeneration = 5 }},
		"4_role":                {change: func(d *location.MeshNodeDescriptor) { d.ObjectRole = location.RoleNone }},
		"5_state":               {change: func(d *location.MeshNodeDescriptor) { d.State = location.StatePreparing }},
		"6_no_lease":            {change: func(*location.MeshNodeDescriptor) {}, lease: &authLease{}},
		"7_other_generation":    {change: func(*location.MeshNodeDescriptor) {}, lease: &authLease{generation: 9, expiresAt: fixture.T0().Add(1)}},
		"8_expires_exactly_now": {change: func(*location.MeshNodeDescriptor) {}, lease: &authLease{generation: 1, expiresAt: fixture.T0()}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newAuthF(t)
			if c.change == nil {
				f.unpublish(f.NA)
			} else {
				d := f.NA
				c.change(&d)
				f.publish(d)
			}
			if c.lease != nil {
				if c.lease.generation == 0 {
					f.release("owner-a")
				} else {
					f.src.leases["owner-a"] = *c.lease
				}
			}
			require.False(t, rules.TargetLive(rules.NewTx(f.src), f.NA.Key(), 1, f.A))
		})
	}
}

func TestCapacityUsage(t *testing.T) {
	f := newAuthF(t)
	f.RA("a", fixture.Target(f.NA))
	f.RS("s", fixture.Target(f.NA))
	tx := rules.NewTx(f.src)
	k := f.NA.Key()
	require.Equal(t, rules.LedgerEntry{Reserved: 1}, rules.CapacityUsage(tx, k, 1, "actor", "ignored"))
	require.Equal(t, rules.LedgerEntry{Reserved: 1}, rules.CapacityUsage(tx, k, 1, "spot", "room"), "spot bucket ignores the stable type")
	require.Equal(t, rules.LedgerEntry{Reserved: 1}, rules.CapacityUsage(tx, k, 1, "anything", ""), "unknown kinds read the spot bucket")
	require.Equal(t, rules.LedgerEntry{Reserved: 1}, rules.CapacityUsage(tx, k, 1, "user_spot", "room"))
	require.Equal(t, rules.LedgerEntry{}, rules.CapacityUsage(tx, k, 1, "instance_spot", "room"))
	require.Equal(t, rules.LedgerEntry{}, rules.CapacityUsage(tx, k, 2, "actor", ""))
	require.Equal(t, rules.LedgerEntry{Reserved: 1}, rules.LedgerUsage(tx, rules.Bucket{Descriptor: k, Lifecycle: 1, Name: rules.BucketActor}))
}
