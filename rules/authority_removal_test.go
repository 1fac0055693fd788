package rules_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

func TestRemoveAuthorityRow(t *testing.T) {
	t.Run("AUTH-187_rows_and_their_capacity_go", func(t *testing.T) {
		f := newAuthF(t)
		f.AS("o1", target(f.NA))
		f.AS("o2", target(f.NA))
		f.RS("o3", target(f.NA))
		ob := f.AS("ob", target(f.NB))
		require.Equal(t, spotUsage(2, 1), f.U(f.NA))
		version, revision := f.src.version, f.src.scanRevision
		res, err := decideOn(f.src, func(tx *rules.Tx) (bool, error) {
			for _, id := range []string{"o1", "o2", "o3"} {
				if err := rules.RemoveAuthorityRow(tx, keyS(id)); err != nil {
					return false, err
				}
			}
			return tx.Plan().ScanRevisionBumped, nil
		})
		require.NoError(t, err)
		require.True(t, res)
		for _, id := range []string{"o1", "o2", "o3"} {
			require.Equal(t, f.missing(), f.read(keyS(id)))
		}
		require.Equal(t, snap(ob), f.read(keyS("ob")))
		require.Equal(t, authUsage{}, f.U(f.NA))
		require.Equal(t, version, f.src.version, "no version consumed")
		require.Equal(t, revision+1, f.src.scanRevision, "one scan-revision bump")
	})
	t.Run("missing_row_changes_nothing", func(t *testing.T) {
		f := newAuthF(t)
		f.unchanged(func() {
			_, err := decideOn(f.src, func(tx *rules.Tx) (bool, error) {
				err := rules.RemoveAuthorityRow(tx, keyS("none"))
				require.True(t, tx.Plan().Empty())
				return true, err
			})
			require.NoError(t, err)
		})
	})
	t.Run("AUTH-191_removed_reservations_cannot_be_finished_D-32", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("o4", target(f.NA))
		f.removeRow(keyS("o4"))
		require.Equal(t, location.KindStale, f.commit(commitReq("o4", r, target(f.NA))).Kind)
		require.Equal(t, location.KindStale, f.abort(abortReq(location.ObjectUserSpot, "o4", r, target(f.NA))))
	})
	t.Run("underflow_is_internal", func(t *testing.T) {
		f := newAuthF(t)
		f.RS("o5", target(f.NA))
		delete(f.src.tables[rules.TableLedger], bucketKey(f.NA, "user_spot", "room"))
		f.unchanged(func() {
			_, err := decideOn(f.src, func(tx *rules.Tx) (struct{}, error) { return struct{}{}, rules.RemoveAuthorityRow(tx, keyS("o5")) })
			require.ErrorIs(t, err, location.ErrInternal)
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
		"7_other_generation":    {change: func(*location.MeshNodeDescriptor) {}, lease: &authLease{generation: 9, expiresAt: authT0().Add(1)}},
		"8_expires_exactly_now": {change: func(*location.MeshNodeDescriptor) {}, lease: &authLease{generation: 1, expiresAt: authT0()}},
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
	f.RA("a", target(f.NA))
	f.RS("s", target(f.NA))
	tx := rules.NewTx(f.src)
	k := f.NA.Key()
	require.Equal(t, ae(0, 1), rules.CapacityUsage(tx, k, 1, "actor", "ignored"))
	require.Equal(t, ae(0, 1), rules.CapacityUsage(tx, k, 1, "spot", "room"), "spot bucket ignores the stable type")
	require.Equal(t, ae(0, 1), rules.CapacityUsage(tx, k, 1, "anything", ""), "unknown kinds read the spot bucket")
	require.Equal(t, ae(0, 1), rules.CapacityUsage(tx, k, 1, "user_spot", "room"))
	require.Equal(t, ae(0, 0), rules.CapacityUsage(tx, k, 1, "instance_spot", "room"))
	require.Equal(t, ae(0, 0), rules.CapacityUsage(tx, k, 2, "actor", ""))
	require.Equal(t, ae(0, 1), rules.LedgerUsage(tx, rules.Bucket{Descriptor: k, Lifecycle: 1, Name: rules.BucketActor}))
}
