package rules_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

func TestReadAuthority(t *testing.T) {
	t.Run("AUTH-011_missing_key_creates_nothing", func(t *testing.T) {
		f := newAuthF(t)
		f.unchanged(func() { require.Equal(t, f.missing(), f.read(keyS("nobody"))) })
		f.RS("nobody", target(f.NA))
	})
	t.Run("AUTH-012_reserved_row", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("r1", target(f.NA))
		want := location.AuthoritySnapshot{
			StoreVersion: "1", Payload: []byte("creating"), ObjectGeneration: 1, AuthorityOwnerGeneration: 1,
			Owner: f.A,
			Allocation: location.PlacementAllocation{
				State: location.AllocationReserved, ObjectKind: location.ObjectUserSpot, StableType: "room",
				Descriptor: f.NA.Key(), DescriptorLifecycleGeneration: 1, Capacity: vS("room"),
			},
			PendingCreation: &location.PendingCreation{
				ReservationID: r.ReservationID, RequestContentReference: "req:r1", RequestSHA256: digest1(), RequestEncodedSize: 10,
			},
			StoreNow: authT0(),
		}
		require.Equal(t, &want, r.Creating)
		require.Equal(t, snap(want), f.read(keyS("r1")))
	})
	t.Run("AUTH-013_active_row", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("r2", target(f.NA))
		require.Equal(t, location.StoreVersion("2"), s.StoreVersion)
		require.Nil(t, s.PendingCreation)
		require.Equal(t, location.AllocationActive, s.Allocation.State)
		require.Equal(t, snap(s), f.read(keyS("r2")))
	})
	t.Run("AUTH-015_opaque_keys_are_missing", func(t *testing.T) {
		f := newAuthF(t)
		require.Equal(t, f.missing(), f.read("not-a-zla1-key"))
	})
	t.Run("AUTH-016_copies_in_and_out", func(t *testing.T) {
		f := newAuthF(t)
		req := reserveReq(location.ObjectUserSpot, "r3", "room", target(f.NA), vS("room"))
		r := f.reserve(req)
		req.CreatingPayload[0] = 'X'
		req.Intent.RequestSHA256[0] = 0xEE
		req.Capacity.SpotType.Count = 99
		r.Creating.Payload[0] = 'Y'
		r.Creating.PendingCreation.RequestSHA256[1] = 0xEE
		r.Creating.Allocation.Capacity.SpotType.Count = 42
		got := f.current(keyS("r3"))
		require.Equal(t, []byte("creating"), got.Payload)
		require.Equal(t, digest1(), got.PendingCreation.RequestSHA256)
		require.Equal(t, vS("room"), got.Allocation.Capacity)
		got.Payload[0] = 'Z'
		require.Equal(t, []byte("creating"), f.current(keyS("r3")).Payload)
	})
}

func TestCompareExchangeVersions(t *testing.T) {
	t.Run("AUTH-017_reserve_and_commit_issue_versions_keep_generations", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("v1", target(f.NA))
		s := f.commit(commitReq("v1", r, target(f.NA))).Ready
		require.Equal(t, location.StoreVersion("1"), r.Creating.StoreVersion)
		require.Equal(t, location.StoreVersion("2"), s.StoreVersion)
		require.Equal(t, int64(1), s.ObjectGeneration)
		require.Equal(t, int64(1), s.AuthorityOwnerGeneration)
	})
	t.Run("AUTH-018_every_write_a_new_version", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("v2", target(f.NA))
		v := s.StoreVersion
		for i, want := range []location.StoreVersion{"3", "4", "5"} {
			res := f.cas(keyS("v2"), v, preserve("p"))
			require.Equal(t, location.KindStored, res.Kind, "preserve %d", i)
			require.Equal(t, want, res.Stored.StoreVersion)
			require.Equal(t, want, f.current(keyS("v2")).StoreVersion)
			v = want
		}
	})
	t.Run("AUTH-019_re-creation_raises_generations", func(t *testing.T) {
		f := newAuthF(t)
		s1 := f.AS("v3", target(f.NA))
		del := f.cas(keyS("v3"), s1.StoreVersion, deletion())
		require.Equal(t, location.CompareExchangeResult{Kind: location.KindDeleted, DeletedVersion: "3", StoreNow: authT0()}, del)
		s2 := f.AS("v3", target(f.NA))
		require.Equal(t, location.StoreVersion("5"), s2.StoreVersion)
		require.Equal(t, int64(2), s2.ObjectGeneration)
		require.Equal(t, int64(2), s2.AuthorityOwnerGeneration)
	})
	t.Run("AUTH-020_versions_compare_as_exact_strings", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("v4", target(f.NA))
		for _, v := range []location.StoreVersion{"0" + s.StoreVersion, s.StoreVersion + " ", "abc"} {
			f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("v4"), v, preserve("p")), "version %q", v) })
		}
	})
	t.Run("AUTH-021_payload-only_writes_keep_generations", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("v5", target(f.NA))
		s1 := f.cas(keyS("v5"), s.StoreVersion, preserve("p1")).Stored
		s2 := f.cas(keyS("v5"), s1.StoreVersion, restore(f.A, "p2")).Stored
		for _, x := range []*location.AuthoritySnapshot{s1, s2} {
			require.Equal(t, s.ObjectGeneration, x.ObjectGeneration)
			require.Equal(t, s.AuthorityOwnerGeneration, x.AuthorityOwnerGeneration)
			require.Equal(t, s.Owner, x.Owner)
			require.Equal(t, s.Allocation, x.Allocation)
		}
		require.Equal(t, []byte("p2"), s2.Payload)
	})
}

func TestCompareExchangeGate(t *testing.T) {
	t.Run("AUTH-022_missing_row_conflicts_for_every_kind", func(t *testing.T) {
		f := newAuthF(t)
		a2 := location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: 7}
		for _, m := range []location.AuthorityMutation{
			preserve("p"), restore(f.A, "p"), rebind(f.A, a2, "p"), deletion(), newOwner(f.B, "f", "p"),
		} {
			f.unchanged(func() { require.Equal(t, conflictOf(f.missing()), f.cas(keyS("ghost"), "1", m), "%s", m.Kind) })
		}
	})
	t.Run("AUTH-023_reserved_rows_are_not_cas-able", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("g1", target(f.NA))
		for _, m := range []location.AuthorityMutation{preserve("p"), deletion(), restore(f.A, "p")} {
			f.unchanged(func() {
				require.Equal(t, conflictOf(snap(*r.Creating)), f.cas(keyS("g1"), r.Creating.StoreVersion, m), "%s", m.Kind)
			})
		}
	})
	t.Run("AUTH-024_wrong_version", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("g2", target(f.NA))
		other := f.AS("g2-other", target(f.NA))
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("g2"), other.StoreVersion, preserve("p"))) })
	})
	t.Run("AUTH-025_put_shapes_are_refused_before_the_gate", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("g3", target(f.NA))
		fence := location.RelocationFence("f")
		bad := []location.AuthorityMutation{
			{Kind: location.MutationPut, Transition: location.TransitionPreserve, TargetOwner: &f.B},
			{Kind: location.MutationPut, Transition: location.TransitionPreserve, RelocationFence: &fence},
			{Kind: location.MutationPut, Transition: location.TransitionNewOwner, TargetOwner: &f.B},
			{Kind: location.MutationPut, Transition: location.TransitionNewOwner, RelocationFence: &fence},
			{Kind: location.MutationRebindOwnerLease, TargetOwner: &f.B},
			{Kind: location.MutationRestore},
			{Kind: "move"},
		}
		for _, k := range []location.AuthorityKey{keyS("g3"), keyS("missing")} {
			for _, m := range bad {
				f.unchanged(func() {
					_, err := f.casErr(k, s.StoreVersion, m)
					require.ErrorIs(t, err, location.ErrInvalidArgument)
					ie, ok := location.AsInputError(err)
					require.True(t, ok)
					require.Equal(t, "authority.mutation_shape", ie.Code)
				})
			}
		}
	})
}

func TestCompareExchangeDelete(t *testing.T) {
	t.Run("AUTH-030_delete_an_active_row", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("d1", target(f.NA))
		require.Equal(t, spotUsage(1, 0), f.U(f.NA))
		res := f.cas(keyS("d1"), s.StoreVersion, deletion())
		require.Equal(t, location.CompareExchangeResult{Kind: location.KindDeleted, DeletedVersion: "3", StoreNow: authT0()}, res)
		require.Equal(t, f.missing(), f.read(keyS("d1")))
		require.Equal(t, authUsage{}, f.U(f.NA))
		require.Empty(t, f.src.tables[rules.TableLedger], "empty buckets are deleted")
		require.Equal(t, int64(3), f.src.scanRevision)
	})
	t.Run("AUTH-031_owner_lease_released", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("d2", target(f.NA))
		f.release("owner-a")
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("d2"), s.StoreVersion, deletion())) })
	})
	t.Run("AUTH-032_owner_node_not_usable", func(t *testing.T) {
		for name, change := range map[string]func(f *authF){
			"removed":     func(f *authF) { f.unpublish(f.NA) },
			"draining":    func(f *authF) { d := f.NA; d.State = location.StateDraining; d.DescriptorRevision = 2; f.publish(d) },
			"lifecycle_2": func(f *authF) { d := f.NA; d.LifecycleGeneration = 2; f.publish(d) },
			"client_role": func(f *authF) { d := f.NA; d.ObjectRole = location.RoleClient; f.publish(d) },
			"other_owner": func(f *authF) {
				d := f.NA
				d.OwnerID, d.LeaseGeneration = f.B.OwnerID, f.B.LeaseGeneration
				f.publish(d)
			},
		} {
			t.Run(name, func(t *testing.T) {
				f := newAuthF(t)
				s := f.AS("d3", target(f.NA))
				change(f)
				f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("d3"), s.StoreVersion, deletion())) })
			})
		}
	})
	t.Run("AUTH-033_owner_lease_expired_boundary", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("d4", target(f.NA))
		f.src.now = authT0().Add(time.Minute)
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(f.current(keyS("d4")))), f.cas(keyS("d4"), s.StoreVersion, deletion()))
		})
		f.src.now = authT0().Add(time.Minute - time.Millisecond)
		require.Equal(t, location.KindDeleted, f.cas(keyS("d4"), s.StoreVersion, deletion()).Kind)
	})
	t.Run("AUTH-034_old_version_after_delete", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("d5", target(f.NA))
		f.cas(keyS("d5"), s.StoreVersion, deletion())
		require.Equal(t, conflictOf(f.missing()), f.cas(keyS("d5"), s.StoreVersion, preserve("p")))
	})
}

// rebindSetup is AUTH-035's set-up: the row of owner-a with lease A, then
// A released, A2 claimed and NA republished with A2 (unless republish is
// false or lifecycle differs).
func rebindSetup(t *testing.T, republish bool, lifecycle int64) (*authF, location.AuthoritySnapshot, location.OwnerToken) {
	f := newAuthF(t)
	s := f.AS("b1", target(f.NA))
	f.release("owner-a")
	a2 := f.claim("owner-a", 3)
	if republish {
		d := f.NA
		d.OwnerID, d.LeaseGeneration, d.LifecycleGeneration = a2.OwnerID, a2.LeaseGeneration, lifecycle
		f.publish(d)
	}
	return f, s, a2
}

func TestCompareExchangeRebind(t *testing.T) {
	t.Run("AUTH-035_same_owner_recovered_lease", func(t *testing.T) {
		f, s, a2 := rebindSetup(t, true, 1)
		res := f.cas(keyS("b1"), s.StoreVersion, rebind(f.A, a2, "rebound"))
		want := s
		want.StoreVersion, want.Payload, want.Owner = "3", []byte("rebound"), a2
		require.Equal(t, location.CompareExchangeResult{Kind: location.KindStored, Stored: &want}, res)
		require.Equal(t, spotUsage(1, 0), f.U(f.NA))
	})
	t.Run("AUTH-036_target_lease_not_published_on_the_node", func(t *testing.T) {
		f, s, a2 := rebindSetup(t, false, 1)
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("b1"), s.StoreVersion, rebind(f.A, a2, "x"))) })
	})
	t.Run("AUTH-037_expected_owner_mismatch", func(t *testing.T) {
		f, s, a2 := rebindSetup(t, true, 1)
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("b1"), s.StoreVersion, rebind(a2, f.A, "x"))) })
	})
	t.Run("AUTH-038_node_restarted_with_another_lifecycle", func(t *testing.T) {
		f, s, a2 := rebindSetup(t, true, 2)
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("b1"), s.StoreVersion, rebind(f.A, a2, "x"))) })
	})
	t.Run("AUTH-039_wrong_version", func(t *testing.T) {
		f, s, a2 := rebindSetup(t, true, 1)
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("b1"), "1", rebind(f.A, a2, "x"))) })
	})
	t.Run("AUTH-221_rebind_after_expiry", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("t5", target(f.NA))
		f.src.leases["owner-a"] = authLease{generation: 1, expiresAt: authT0()}
		a2 := f.claim("owner-a", 3)
		d := f.NA
		d.LeaseGeneration = a2.LeaseGeneration
		f.publish(d)
		require.Equal(t, location.KindStored, f.cas(keyS("t5"), s.StoreVersion, rebind(f.A, a2, "r")).Kind)
	})
}

func TestCompareExchangeRestore(t *testing.T) {
	t.Run("AUTH-040_restore_rewrites_payload_only", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("s1", target(f.NA))
		want := s
		want.StoreVersion, want.Payload = "3", []byte("restored")
		require.Equal(t, location.CompareExchangeResult{Kind: location.KindStored, Stored: &want}, f.cas(keyS("s1"), s.StoreVersion, restore(f.A, "restored")))
		require.Equal(t, int64(3), f.src.scanRevision)
	})
	t.Run("AUTH-041_restore_needs_no_liveness", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("s2", target(f.NA))
		f.release("owner-a")
		require.Equal(t, location.KindStored, f.cas(keyS("s2"), s.StoreVersion, restore(f.A, "r")).Kind)
	})
	t.Run("AUTH-042_restore_requires_the_exact_owner_token", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("s3", target(f.NA))
		for _, o := range []location.OwnerToken{{OwnerID: "owner-a", LeaseGeneration: 9}, {OwnerID: "owner-b", LeaseGeneration: f.A.LeaseGeneration}} {
			f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("s3"), s.StoreVersion, restore(o, "r"))) })
		}
	})
	t.Run("AUTH-043_restore_with_a_wrong_version", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("s4", target(f.NA))
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("s4"), "1", restore(f.A, "r"))) })
	})
	t.Run("AUTH-218_restore_after_expiry", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("t2", target(f.NA))
		f.src.now = authT0().Add(2 * time.Minute)
		require.Equal(t, location.KindStored, f.cas(keyS("t2"), s.StoreVersion, restore(f.A, "r")).Kind)
	})
}

func TestCompareExchangePreserve(t *testing.T) {
	t.Run("AUTH-044_preserve_rewrites_payload_only", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("p1", target(f.NA))
		want := s
		want.StoreVersion, want.Payload = "3", []byte("p")
		require.Equal(t, location.CompareExchangeResult{Kind: location.KindStored, Stored: &want}, f.cas(keyS("p1"), s.StoreVersion, preserve("p")))
		require.Equal(t, spotUsage(1, 0), f.U(f.NA))
	})
	t.Run("AUTH-045_preserve_needs_a_live_owner", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("p2", target(f.NA))
		f.release("owner-a")
		f.unchanged(func() { require.Equal(t, conflictOf(snap(s)), f.cas(keyS("p2"), s.StoreVersion, preserve("p"))) })
	})
	t.Run("AUTH-046_chained_preserves_stale_reuse", func(t *testing.T) {
		f := newAuthF(t)
		s1 := f.AS("p3", target(f.NA))
		s2 := f.cas(keyS("p3"), s1.StoreVersion, preserve("a")).Stored
		s3 := f.cas(keyS("p3"), s2.StoreVersion, preserve("b")).Stored
		require.Equal(t, conflictOf(snap(*s3)), f.cas(keyS("p3"), s1.StoreVersion, preserve("c")))
	})
	t.Run("AUTH-047_node_leaves_and_re-enters_serving", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("p4", target(f.NA))
		d := f.NA
		d.State, d.DescriptorRevision = location.StateDraining, 2
		f.publish(d)
		require.Equal(t, location.KindConflict, f.cas(keyS("p4"), s.StoreVersion, preserve("p")).Kind)
		d.State, d.DescriptorRevision = location.StateServing, 3
		f.publish(d)
		require.Equal(t, location.KindStored, f.cas(keyS("p4"), s.StoreVersion, preserve("p")).Kind)
	})
	t.Run("AUTH-217_lease_boundary_for_owner_liveness", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("t1", target(f.NA))
		f.src.now = authT0().Add(time.Minute - time.Millisecond)
		s1 := f.cas(keyS("t1"), s.StoreVersion, preserve("p"))
		require.Equal(t, location.KindStored, s1.Kind)
		require.Equal(t, f.src.now, s1.Stored.StoreNow)
		f.src.now = authT0().Add(time.Minute)
		require.Equal(t, location.KindConflict, f.cas(keyS("t1"), s1.Stored.StoreVersion, preserve("q")).Kind)
	})
}

// moveSetup is AS(id, TA) and REL(rid, S, NA, to).
func moveSetup(t *testing.T, id, rid string, opts ...authOpt) (*authF, location.AuthoritySnapshot) {
	f := newAuthF(t, opts...)
	s := f.AS(id, target(f.NA))
	res := f.rel(relReq(rid, keyS(id), s, f.NA, f.NB, vS("room")))
	require.Equal(t, location.RelocationReserveResult{Kind: location.KindReserved, Fence: location.RelocationFence(rid)}, res)
	return f, s
}

func TestCompareExchangeNewOwner(t *testing.T) {
	t.Run("AUTH-048_relocation_commit", func(t *testing.T) {
		f, s := moveSetup(t, "m1", "R1")
		require.Equal(t, spotUsage(0, 1), f.U(f.NB))
		res := f.cas(keyS("m1"), s.StoreVersion, newOwner(f.B, "R1", "moved"))
		want := location.AuthoritySnapshot{
			StoreVersion: "3", Payload: []byte("moved"), ObjectGeneration: s.ObjectGeneration, AuthorityOwnerGeneration: 2,
			Owner: f.B,
			Allocation: location.PlacementAllocation{
				State: location.AllocationActive, ObjectKind: location.ObjectUserSpot, StableType: "room",
				Descriptor: f.NB.Key(), DescriptorLifecycleGeneration: 1, Capacity: vS("room"),
			},
			StoreNow: authT0(),
		}
		require.Equal(t, location.CompareExchangeResult{Kind: location.KindStored, Stored: &want}, res)
		require.Equal(t, authUsage{}, f.U(f.NA))
		require.Equal(t, spotUsage(1, 0), f.U(f.NB))
		require.Equal(t, location.KindAlreadyCommitted, f.abortRel("R1"))
	})
	t.Run("AUTH-049_source_owner_may_be_dead", func(t *testing.T) {
		f, s := moveSetup(t, "m2", "R2")
		f.release("owner-a")
		require.Equal(t, location.KindStored, f.cas(keyS("m2"), s.StoreVersion, newOwner(f.B, "R2", "m")).Kind)
	})
	t.Run("AUTH-050_unknown_fence", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("m3", target(f.NA))
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(s)), f.cas(keyS("m3"), s.StoreVersion, newOwner(f.B, "never-issued", "m")))
		})
	})
	t.Run("AUTH-051_aborted_reservation", func(t *testing.T) {
		f, s := moveSetup(t, "m4", "R3")
		require.Equal(t, location.KindAborted, f.abortRel("R3"))
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(s)), f.cas(keyS("m4"), s.StoreVersion, newOwner(f.B, "R3", "m")))
		})
	})
	t.Run("AUTH-052_fence_used_twice", func(t *testing.T) {
		f, s := moveSetup(t, "m1", "R1")
		moved := f.cas(keyS("m1"), s.StoreVersion, newOwner(f.B, "R1", "moved")).Stored
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(*moved)), f.cas(keyS("m1"), moved.StoreVersion, newOwner(f.B, "R1", "again")))
		})
	})
	t.Run("AUTH-053_target_owner_differs_from_the_reservation", func(t *testing.T) {
		f, s := moveSetup(t, "m4", "R4")
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(s)), f.cas(keyS("m4"), s.StoreVersion, newOwner(f.A, "R4", "m")))
		})
		require.Equal(t, location.KindAborted, f.abortRel("R4"))
	})
	t.Run("AUTH-054_row_changed_after_the_reservation", func(t *testing.T) {
		f, s := moveSetup(t, "m5", "R5")
		s2 := f.cas(keyS("m5"), s.StoreVersion, preserve("p")).Stored
		for _, v := range []location.StoreVersion{s2.StoreVersion, s.StoreVersion} {
			f.unchanged(func() { require.Equal(t, conflictOf(snap(*s2)), f.cas(keyS("m5"), v, newOwner(f.B, "R5", "m"))) })
		}
		require.Equal(t, location.KindAborted, f.abortRel("R5"))
		require.Equal(t, authUsage{}, f.U(f.NB))
	})
	t.Run("AUTH-055_target_lease_released_before_the_cas", func(t *testing.T) {
		f, s := moveSetup(t, "m6", "R6")
		f.release("owner-b")
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(s)), f.cas(keyS("m6"), s.StoreVersion, newOwner(f.B, "R6", "m")))
		})
		require.Equal(t, location.KindAborted, f.abortRel("R6"))
	})
	t.Run("AUTH-056_reservation_capacity_replaces_row_capacity", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("m7", target(f.NA))
		require.Equal(t, location.KindReserved, f.rel(relReq("R7", keyS("m7"), s, f.NA, f.NB, vSn("room", 2))).Kind)
		res := f.cas(keyS("m7"), s.StoreVersion, newOwner(f.B, "R7", "m"))
		require.Equal(t, vSn("room", 2), res.Stored.Allocation.Capacity)
		require.Equal(t, authUsage{}, f.U(f.NA))
		require.Equal(t, spotUsage(2, 0), f.U(f.NB))
	})
	t.Run("AUTH-057_reservation_for_another_authority", func(t *testing.T) {
		f := newAuthF(t)
		s8 := f.AS("m8", target(f.NA))
		s9 := f.AS("m9", target(f.NA))
		f.rel(relReq("R8", keyS("m8"), s8, f.NA, f.NB, vS("room")))
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(s9)), f.cas(keyS("m9"), s9.StoreVersion, newOwner(f.B, "R8", "m")))
		})
	})
	t.Run("AUTH-058_reservation_adopted_by_an_aggregate", func(t *testing.T) {
		f, s := moveSetup(t, "m12", "AGX")
		agg := aggReq("AGX", 1, f.NB, vS("room"), part{keyS("m12"), s.StoreVersion, location.TransitionNewOwner})
		require.Equal(t, location.KindPrepared, f.prepare(agg).Kind)
		f.unchanged(func() {
			require.Equal(t, conflictOf(snap(s)), f.cas(keyS("m12"), s.StoreVersion, newOwner(f.B, "AGX", "m")))
		})
	})
	t.Run("AUTH-059_owner_generations_exhausted", func(t *testing.T) {
		f, s := moveSetup(t, "m9", "R9")
		f.src.owner = location.MaxGeneration
		f.unchanged(func() {
			require.Equal(t, location.CompareExchangeResult{Kind: location.KindGenerationExhausted}, f.cas(keyS("m9"), s.StoreVersion, newOwner(f.B, "R9", "m")))
		})
		f.src.owner = location.MaxGeneration - 1
		require.Equal(t, location.MaxGeneration, f.cas(keyS("m9"), s.StoreVersion, newOwner(f.B, "R9", "m")).Stored.AuthorityOwnerGeneration)
	})
	t.Run("AUTH-060_versions_exhausted", func(t *testing.T) {
		f, s, a2 := rebindSetup(t, true, 1)
		require.Equal(t, location.KindReserved, f.rel(relReq("R11", keyS("b1"), s, f.NA, f.NB, vS("room"))).Kind)
		// b1's owner A is not live any more (NA now carries A2), so preserve
		// and delete use a second row owned by A2.
		d := f.NA
		d.OwnerID, d.LeaseGeneration = a2.OwnerID, a2.LeaseGeneration
		s2 := f.AS("b2", target(d))
		f.src.version = location.MaxGeneration
		exhausted := location.CompareExchangeResult{Kind: location.KindGenerationExhausted}
		for _, c := range []struct {
			key location.AuthorityKey
			v   location.StoreVersion
			m   location.AuthorityMutation
		}{
			{keyS("b1"), s.StoreVersion, restore(f.A, "r")},
			{keyS("b1"), s.StoreVersion, rebind(f.A, a2, "r")},
			{keyS("b1"), s.StoreVersion, newOwner(f.B, "R11", "m")},
			{keyS("b2"), s2.StoreVersion, preserve("p")},
			{keyS("b2"), s2.StoreVersion, deletion()},
		} {
			f.unchanged(func() { require.Equal(t, exhausted, f.cas(c.key, c.v, c.m), "%s", c.m.Kind) })
		}
		require.Equal(t, location.KindAborted, f.abortRel("R11"))
	})
	t.Run("AUTH-061_relocation_onto_the_same_node", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("m10", target(f.NA))
		require.Equal(t, location.KindReserved, f.rel(relReq("R10", keyS("m10"), s, f.NA, f.NA, vS("room"))).Kind)
		require.Equal(t, spotUsage(1, 1), f.U(f.NA))
		res := f.cas(keyS("m10"), s.StoreVersion, newOwner(f.A, "R10", "m"))
		require.Equal(t, location.KindStored, res.Kind)
		require.Equal(t, int64(2), res.Stored.AuthorityOwnerGeneration)
		require.Equal(t, spotUsage(1, 0), f.U(f.NA))
	})
	t.Run("AUTH-219_relocation_from_an_expired_source", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("t3", target(f.NA))
		f.src.leases["owner-a"] = authLease{generation: 1, expiresAt: authT0()}
		require.Equal(t, location.KindReserved, f.rel(relReq("R", keyS("t3"), s, f.NA, f.NB, vS("room"))).Kind)
		require.Equal(t, location.KindStored, f.cas(keyS("t3"), s.StoreVersion, newOwner(f.B, "R", "m")).Kind)
	})
}

func TestCompareExchangeLedgerUnderflow(t *testing.T) {
	// D-12 fixed: a ledger that would go negative is ErrInternal and nothing
	// is applied, not even the counters.
	f := newAuthF(t)
	s := f.AS("u1", target(f.NA))
	delete(f.src.tables[rules.TableLedger], bucketKey(f.NA, rules.BucketSpot, ""))
	f.unchanged(func() {
		_, err := f.casErr(keyS("u1"), s.StoreVersion, deletion())
		require.True(t, errors.Is(err, location.ErrInternal), "got %v", err)
	})
}
