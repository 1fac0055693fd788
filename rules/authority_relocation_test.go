package rules_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func relocationConflict(cur location.AuthorityReadResult) location.RelocationReserveResult {
	return location.RelocationReserveResult{Kind: location.KindConflict, Current: &cur}
}

func TestReserveRelocationCapacity(t *testing.T) {
	t.Run("AUTH-140_AUTH-141_reserve_target_capacity_and_replay", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("r1", target(f.NA))
		req := relReq("R1", keyS("r1"), s, f.NA, f.NB, vS("room"))
		require.Equal(t, location.RelocationReserveResult{Kind: location.KindReserved, Fence: "R1"}, f.rel(req))
		require.Equal(t, snap(s), f.read(keyS("r1")))
		require.Equal(t, spotUsage(0, 1), f.U(f.NB))
		require.Equal(t, int64(2), f.src.scanRevision, "no scan-revision bump")
		require.Equal(t, int64(2), f.src.version, "no version consumed")
		f.unchanged(func() {
			require.Equal(t, location.RelocationReserveResult{Kind: location.KindAlreadyReserved, Fence: "R1"}, f.rel(req))
		})
	})
	t.Run("AUTH-142_same_id_other_content", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("r1", target(f.NA))
		f.rel(relReq("R1", keyS("r1"), s, f.NA, f.NB, vS("room")))
		other := relReq("R1", keyS("r1"), s, f.NA, f.NB, vS("room"))
		other.TargetNodeLifecycleGeneration = 2
		bigger := relReq("R1", keyS("r1"), s, f.NA, f.NB, vSn("room", 2))
		for _, r := range []location.RelocationReserveResult{f.rel(other), f.rel(bigger)} {
			require.Equal(t, relocationConflict(snap(s)), r)
		}
		require.Equal(t, spotUsage(0, 1), f.U(f.NB))
	})
	t.Run("AUTH-144_authority_missing_or_reserved", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("r9", target(f.NA))
		f.unchanged(func() {
			require.Equal(t, relocationConflict(f.missing()), f.rel(relReq("R1", keyS("nope"), *r.Creating, f.NA, f.NB, vS("room"))))
			require.Equal(t, relocationConflict(snap(*r.Creating)), f.rel(relReq("R2", keyS("r9"), *r.Creating, f.NA, f.NB, vS("room"))))
		})
	})
	t.Run("AUTH-145_stale_expected_version", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("r1", target(f.NA))
		s2 := f.cas(keyS("r1"), s.StoreVersion, preserve("p")).Stored
		f.unchanged(func() {
			require.Equal(t, relocationConflict(snap(*s2)), f.rel(relReq("R1", keyS("r1"), s, f.NA, f.NB, vS("room"))))
		})
	})
	t.Run("AUTH-146_source_mismatch", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("r1", target(f.NA))
		for _, change := range []func(*location.RelocationReservationRequest){
			func(r *location.RelocationReservationRequest) { r.ObjectKind = location.ObjectInstanceSpot },
			func(r *location.RelocationReservationRequest) { r.StableType = "hall" },
			func(r *location.RelocationReservationRequest) { r.SourceDescriptor.RID = "node-b" },
			func(r *location.RelocationReservationRequest) { r.SourceNodeLifecycleGeneration = 2 },
			func(r *location.RelocationReservationRequest) { r.SourceOwner = f.B },
			func(r *location.RelocationReservationRequest) { r.AuthorityKey = keyA("r1") },
		} {
			req := relReq("R1", keyS("r1"), s, f.NA, f.NB, vS("room"))
			change(&req)
			f.unchanged(func() {
				want := relocationConflict(snap(s))
				if req.AuthorityKey != keyS("r1") {
					want = relocationConflict(f.missing())
				}
				require.Equal(t, want, f.rel(req))
			})
		}
	})
	t.Run("AUTH-147_target_and_source_liveness", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("r1", target(f.NA))
		f.release("owner-b")
		f.unchanged(func() {
			require.Equal(t, location.RelocationReserveResult{Kind: location.KindTargetUnavailable}, f.rel(relReq("R1", keyS("r1"), s, f.NA, f.NB, vS("room"))))
		})
		f.claim("owner-b", 2)
		f.release("owner-a")
		require.Equal(t, location.KindReserved, f.rel(relReq("R1", keyS("r1"), s, f.NA, f.NB, vS("room"))).Kind)
	})
	t.Run("AUTH-148_target_full", func(t *testing.T) {
		f := newAuthF(t, withLimits("NB", authLimits{10, 1, 10, 10, 10}))
		s := f.AS("r1", target(f.NA))
		f.AS("r2", target(f.NB))
		f.unchanged(func() {
			require.Equal(t, location.RelocationReserveResult{Kind: location.KindPlacementCapacityExhausted}, f.rel(relReq("R2", keyS("r1"), s, f.NA, f.NB, vS("room"))))
		})
	})
	t.Run("AUTH-149_replay_after_use_D-10", func(t *testing.T) {
		f, s := moveSetup(t, "m1", "R1")
		f.cas(keyS("m1"), s.StoreVersion, newOwner(f.B, "R1", "moved"))
		f.unchanged(func() {
			require.Equal(t, location.RelocationReserveResult{Kind: location.KindAlreadyReserved, Fence: "R1"}, f.rel(relReq("R1", keyS("m1"), s, f.NA, f.NB, vS("room"))))
		})
	})
	t.Run("AUTH-150_competing_reservations", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("r3", target(f.NA))
		f.rel(relReq("RA1", keyS("r3"), s, f.NA, f.NB, vS("room")))
		f.rel(relReq("RA2", keyS("r3"), s, f.NA, f.NB, vS("room")))
		require.Equal(t, spotUsage(0, 2), f.U(f.NB))
		moved := f.cas(keyS("r3"), s.StoreVersion, newOwner(f.B, "RA1", "m"))
		require.Equal(t, location.KindStored, moved.Kind)
		require.Equal(t, location.KindConflict, f.cas(keyS("r3"), moved.Stored.StoreVersion, newOwner(f.B, "RA2", "m")).Kind)
		require.Equal(t, location.KindAborted, f.abortRel("RA2"))
		require.Equal(t, spotUsage(1, 0), f.U(f.NB))
	})
}

func TestAbortRelocationCapacity(t *testing.T) {
	t.Run("AUTH-151_AUTH-152_abort_and_abort_again", func(t *testing.T) {
		f, s := moveSetup(t, "r1", "R1")
		require.Equal(t, location.KindAborted, f.abortRel("R1"))
		require.Equal(t, authUsage{}, f.U(f.NB))
		require.Equal(t, snap(s), f.read(keyS("r1")))
		f.unchanged(func() { require.Equal(t, location.KindAlreadyAborted, f.abortRel("R1")) })
	})
	t.Run("AUTH-153_abort_after_use", func(t *testing.T) {
		f, s := moveSetup(t, "m1", "R1")
		f.cas(keyS("m1"), s.StoreVersion, newOwner(f.B, "R1", "moved"))
		f.unchanged(func() { require.Equal(t, location.KindAlreadyCommitted, f.abortRel("R1")) })
	})
	t.Run("AUTH-154_unknown_fence", func(t *testing.T) {
		f := newAuthF(t)
		f.unchanged(func() { require.Equal(t, location.KindStale, f.abortRel("nope")) })
	})
	t.Run("AUTH-155_adopted_reservation", func(t *testing.T) {
		f, _, _ := adoptSetup(t)
		f.unchanged(func() { require.Equal(t, location.KindStale, f.abortRel("AG2")) })
		require.Equal(t, spotUsage(0, 2), f.U(f.NB))
	})
	t.Run("AUTH-192_relocation_reservations_survive_row_removal", func(t *testing.T) {
		f, _ := moveSetup(t, "o5", "R5")
		f.removeRow(keyS("o5"))
		require.Equal(t, f.missing(), f.read(keyS("o5")))
		require.Equal(t, spotUsage(0, 1), f.U(f.NB))
		require.Equal(t, location.KindAborted, f.abortRel("R5"))
		require.Equal(t, authUsage{}, f.U(f.NB))
	})
}
