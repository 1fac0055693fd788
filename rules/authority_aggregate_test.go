package rules_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// aggSetup is AS("g1", TA) → S1 and AS("g2", TA) → S2.
func aggSetup(t *testing.T, opts ...authOpt) (*authF, location.AuthoritySnapshot, location.AuthoritySnapshot) {
	f := newAuthF(t, opts...)
	return f, f.AS("g1", target(f.NA)), f.AS("g2", target(f.NA))
}

// ag1 is AUTH-156's request: both rows newOwner to NB, {spots 2, room 2}.
func ag1(f *authF, s1, s2 location.AuthoritySnapshot) location.AggregatePrepareRequest {
	return aggReq("AG1", 1, f.NB, vSn("room", 2),
		part{keyS("g1"), s1.StoreVersion, location.TransitionNewOwner},
		part{keyS("g2"), s2.StoreVersion, location.TransitionNewOwner})
}

// mixed is AUTH-171's request: g1 preserve, g2 newOwner, VS(room).
func mixed(f *authF, s1, s2 location.AuthoritySnapshot) location.AggregatePrepareRequest {
	return aggReq("AG1", 1, f.NB, vS("room"),
		part{keyS("g1"), s1.StoreVersion, location.TransitionPreserve},
		part{keyS("g2"), s2.StoreVersion, location.TransitionNewOwner})
}

// prepared is AUTH-156 done.
func prepared(t *testing.T) (*authF, location.AuthoritySnapshot, location.AuthoritySnapshot) {
	f, s1, s2 := aggSetup(t)
	require.Equal(t, location.AggregatePrepareResult{Kind: location.KindPrepared, Fence: location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 1}}, f.prepare(ag1(f, s1, s2)))
	return f, s1, s2
}

// adoptSetup is AUTH-166: REL("AG2", S1, NA, NB, {2, 2}) adopted by AGG AG2.
func adoptSetup(t *testing.T) (*authF, location.AuthoritySnapshot, location.AuthoritySnapshot) {
	f, s1, s2 := aggSetup(t)
	require.Equal(t, location.KindReserved, f.rel(relReq("AG2", keyS("g1"), s1, f.NA, f.NB, vSn("room", 2))).Kind)
	require.Equal(t, spotUsage(0, 2), f.U(f.NB))
	r := ag1(f, s1, s2)
	r.AggregateID = "AG2"
	require.Equal(t, location.KindPrepared, f.prepare(r).Kind)
	return f, s1, s2
}

// aggConflict is the bare conflict result of prepareAggregate.
func aggConflict() location.AggregatePrepareResult {
	return location.AggregatePrepareResult{Kind: location.KindConflict}
}

func TestPrepareAggregate(t *testing.T) {
	t.Run("AUTH-156_prepare_a_two-participant_move", func(t *testing.T) {
		f, s1, s2 := prepared(t)
		require.Equal(t, spotUsage(0, 2), f.U(f.NB))
		require.Equal(t, spotUsage(2, 0), f.U(f.NA))
		require.Equal(t, snap(s1), f.read(keyS("g1")))
		require.Equal(t, snap(s2), f.read(keyS("g2")))
		require.Equal(t, int64(4), f.src.scanRevision, "no scan-revision bump")
	})
	t.Run("AUTH-157_identical_replay", func(t *testing.T) {
		f, s1, s2 := prepared(t)
		f.unchanged(func() {
			require.Equal(t, location.AggregatePrepareResult{Kind: location.KindAlreadyPrepared, Fence: location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 1}}, f.prepare(ag1(f, s1, s2)))
		})
	})
	t.Run("AUTH-158_same_fence_other_content", func(t *testing.T) {
		f, s1, s2 := prepared(t)
		for _, change := range []func(*location.AggregatePrepareRequest){
			func(r *location.AggregatePrepareRequest) { r.Participants[0].AuthorityPayload = []byte("other") },
			func(r *location.AggregatePrepareRequest) { r.Participants[1].MembershipMutation = []byte("other") },
			func(r *location.AggregatePrepareRequest) { r.InventoryDigest = bytesOf(32, 0x08) },
			func(r *location.AggregatePrepareRequest) { r.TargetDescriptorLifecycleGeneration = 2 },
			func(r *location.AggregatePrepareRequest) { r.Participants = r.Participants[:1] },
		} {
			r := ag1(f, s1, s2)
			change(&r)
			f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(r)) })
		}
	})
	t.Run("AUTH-160_target_not_live", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		f.release("owner-b")
		f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(ag1(f, s1, s2))) })
	})
	t.Run("AUTH-161_participant_problems", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		r := f.RS("g0", target(f.NA))
		for _, p := range []part{
			{keyS("g0"), r.Creating.StoreVersion, location.TransitionNewOwner},
			{keyS("g00"), "1", location.TransitionNewOwner},
			{keyS("g1"), s2.StoreVersion, location.TransitionNewOwner},
			{keyS("g1"), s1.StoreVersion + "0", location.TransitionNewOwner},
		} {
			req := aggReq("AGP", 1, f.NB, vSn("room", 2), p, part{keyS("g2"), s2.StoreVersion, location.TransitionNewOwner})
			f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(req)) })
		}
	})
	t.Run("AUTH-162_preserve_participant_needs_a_live_owner", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		f.release("owner-a")
		f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(mixed(f, s1, s2))) })
	})
	t.Run("AUTH-163_capacity_must_equal_the_moved_sum", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		r := ag1(f, s1, s2)
		r.Capacity = vSn("room", 3)
		f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(r)) })
	})
	t.Run("AUTH-164_preserve-only_aggregate_D-04", func(t *testing.T) {
		f, s1, _ := aggSetup(t)
		r := aggReq("AGP", 1, f.NB, vS("room"), part{keyS("g1"), s1.StoreVersion, location.TransitionPreserve})
		f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(r)) })
	})
	t.Run("AUTH-165_target_capacity_insufficient_D-23", func(t *testing.T) {
		f, s1, s2 := aggSetup(t, withLimits("NB", authLimits{10, 1, 10, 10, 10}))
		f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(ag1(f, s1, s2))) })
	})
	t.Run("AUTH-166_adopting_a_relocation_reservation", func(t *testing.T) {
		f, _, _ := adoptSetup(t)
		require.Equal(t, spotUsage(0, 2), f.U(f.NB))
		require.Equal(t, location.KindStale, f.abortRel("AG2"))
		res := storedValue[rules.RelocationRecord](f, rules.TableRelocations, "AG2")
		require.Equal(t, rules.RecordPrepared, res.State)
		require.Equal(t, &location.AggregateFence{AggregateID: "AG2", AggregateGeneration: 1}, res.Aggregate)
	})
	t.Run("AUTH-167_non-matching_reservation_is_not_adopted", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		f.rel(relReq("AG3", keyS("g1"), s1, f.NA, f.NB, vS("room")))
		r := ag1(f, s1, s2)
		r.AggregateID = "AG3"
		require.Equal(t, location.KindPrepared, f.prepare(r).Kind)
		require.Equal(t, spotUsage(0, 3), f.U(f.NB))
		require.Equal(t, location.KindAborted, f.abortRel("AG3"))
		require.Equal(t, spotUsage(0, 2), f.U(f.NB))
	})
	t.Run("AUTH-168_two_spot_types_D-23", func(t *testing.T) {
		f, s1, _ := aggSetup(t)
		h1 := f.AS("h1", target(f.NA), "hall")
		r := aggReq("AGH", 1, f.NB, vSn("room", 2),
			part{keyS("g1"), s1.StoreVersion, location.TransitionNewOwner},
			part{keyS("h1"), h1.StoreVersion, location.TransitionNewOwner})
		f.unchanged(func() {
			_, err := decideOn(f.src, func(tx *rules.Tx) (location.AggregatePrepareResult, error) { return rules.PrepareAggregate(tx, r) })
			ie, ok := location.AsInputError(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, location.ClassType, ie.Class)
			require.Equal(t, "aggregate.spot_types", ie.Code)
		})
	})
	t.Run("AUTH-169_re-prepare_after_commit_D-25", func(t *testing.T) {
		f, s1, s2 := prepared(t)
		require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
		f.unchanged(func() {
			require.Equal(t, location.AggregatePrepareResult{Kind: location.KindStale}, f.prepare(ag1(f, s1, s2)))
		})
	})
	t.Run("AUTH-170_re-prepare_after_abort_D-25", func(t *testing.T) {
		f, s1, s2 := prepared(t)
		require.Equal(t, location.KindAborted, f.abortAgg("AG1", 1))
		f.unchanged(func() { require.Equal(t, aggConflict(), f.prepare(ag1(f, s1, s2))) })
		r := ag1(f, s1, s2)
		r.AggregateGeneration = 2
		require.Equal(t, location.AggregatePrepareResult{Kind: location.KindPrepared, Fence: location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 2}}, f.prepare(r))
	})
	t.Run("AUTH-171_mixed_transitions", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		require.Equal(t, location.KindPrepared, f.prepare(mixed(f, s1, s2)).Kind)
		require.Equal(t, spotUsage(0, 1), f.U(f.NB))
	})
	t.Run("AUTH-172_participants_are_not_locked_D-26", func(t *testing.T) {
		f, s1, _ := prepared(t)
		require.Equal(t, location.KindStored, f.cas(keyS("g1"), s1.StoreVersion, preserve("p")).Kind)
		f.unchanged(func() { require.Equal(t, location.KindStale, f.commitAgg("AG1", 1)) })
		require.Equal(t, location.KindAborted, f.abortAgg("AG1", 1))
		require.Equal(t, authUsage{}, f.U(f.NB))
	})
	t.Run("stored_request_is_a_copy", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		r := ag1(f, s1, s2)
		f.prepare(r)
		r.Participants[0].AuthorityPayload[0] = 'X'
		r.InventoryDigest[0] = 0
		require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
		require.Equal(t, []byte("agg-0"), f.current(keyS("g1")).Payload)
	})
}

func TestCommitAggregate(t *testing.T) {
	t.Run("AUTH-173_commit_the_move", func(t *testing.T) {
		f, s1, s2 := prepared(t)
		require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
		for i, c := range []struct {
			key     location.AuthorityKey
			before  location.AuthoritySnapshot
			version location.StoreVersion
			owner   int64
		}{{keyS("g1"), s1, "5", 3}, {keyS("g2"), s2, "6", 4}} {
			want := c.before
			want.StoreVersion, want.AuthorityOwnerGeneration, want.Owner = c.version, c.owner, f.B
			want.Payload = []byte("agg-" + string(rune('0'+i)))
			want.Allocation.Descriptor = f.NB.Key()
			require.Equal(t, snap(want), f.read(c.key))
		}
		require.Equal(t, authUsage{}, f.U(f.NA))
		require.Equal(t, spotUsage(2, 0), f.U(f.NB))
		require.Equal(t, int64(5), f.src.scanRevision, "one bump")
	})
	t.Run("AUTH-174_replay", func(t *testing.T) {
		f, _, _ := prepared(t)
		f.commitAgg("AG1", 1)
		f.unchanged(func() { require.Equal(t, location.KindAlreadyCommitted, f.commitAgg("AG1", 1)) })
	})
	t.Run("AUTH-175_unknown_or_aborted_aggregate", func(t *testing.T) {
		f, _, _ := prepared(t)
		f.unchanged(func() { require.Equal(t, location.KindStale, f.commitAgg("nope", 1)) })
		f.abortAgg("AG1", 1)
		f.unchanged(func() { require.Equal(t, location.KindStale, f.commitAgg("AG1", 1)) })
	})
	t.Run("AUTH-176_participant_changed_after_prepare", func(t *testing.T) {
		f, _, s2 := prepared(t)
		f.cas(keyS("g2"), s2.StoreVersion, preserve("p"))
		f.unchanged(func() {
			require.Equal(t, location.KindStale, f.commitAgg("AG1", 1))
			require.Equal(t, location.KindStale, f.commitAgg("AG1", 1))
		})
		require.Equal(t, location.KindAborted, f.abortAgg("AG1", 1))
		require.Equal(t, authUsage{}, f.U(f.NB))
	})
	t.Run("AUTH-177_target_no_longer_live", func(t *testing.T) {
		f, _, _ := prepared(t)
		f.release("owner-b")
		f.unchanged(func() { require.Equal(t, location.KindStale, f.commitAgg("AG1", 1)) })
	})
	t.Run("AUTH-178_preserve_participant_owner_gone", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		f.prepare(mixed(f, s1, s2))
		f.release("owner-a")
		f.unchanged(func() { require.Equal(t, location.KindStale, f.commitAgg("AG1", 1)) })
	})
	t.Run("AUTH-179_exhaustion_boundary", func(t *testing.T) {
		for _, counter := range []string{"version", "owner"} {
			t.Run(counter, func(t *testing.T) {
				f, _, _ := prepared(t)
				set := func(v int64) {
					if counter == "version" {
						f.src.version = v
					} else {
						f.src.owner = v
					}
				}
				set(location.MaxGeneration - 1)
				f.unchanged(func() { require.Equal(t, location.KindGenerationExhausted, f.commitAgg("AG1", 1)) })
				set(location.MaxGeneration - 2)
				require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
			})
		}
	})
	t.Run("AUTH-180_adopted_reservation_follows_the_aggregate", func(t *testing.T) {
		f, _, _ := adoptSetup(t)
		require.Equal(t, location.KindCommitted, f.commitAgg("AG2", 1))
		require.Equal(t, location.KindAlreadyCommitted, f.abortRel("AG2"))
		require.Equal(t, spotUsage(2, 0), f.U(f.NB))
	})
	t.Run("AUTH-181_preserve_participant_in_a_committed_aggregate", func(t *testing.T) {
		f, s1, s2 := aggSetup(t)
		f.prepare(mixed(f, s1, s2))
		require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
		g1 := s1
		g1.StoreVersion, g1.Payload = "5", []byte("agg-0")
		require.Equal(t, snap(g1), f.read(keyS("g1")))
		g2 := f.current(keyS("g2"))
		require.Equal(t, f.B, g2.Owner)
		require.Equal(t, int64(3), g2.AuthorityOwnerGeneration)
		require.Equal(t, spotUsage(1, 0), f.U(f.NA))
		require.Equal(t, spotUsage(1, 0), f.U(f.NB))
	})
	t.Run("AUTH-182_source_owner_may_be_dead", func(t *testing.T) {
		f, _, _ := prepared(t)
		f.release("owner-a")
		require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
	})
	t.Run("D-12_ledger_underflow_applies_nothing", func(t *testing.T) {
		f, _, _ := prepared(t)
		// Corrupt NB's reserved typed bucket so that the last delta would
		// underflow after the participants' source deltas.
		f.src.put(rules.TableLedger, bucketKey(f.NB, "user_spot", "room"), rules.LedgerEntry{Reserved: 1})
		f.unchanged(func() {
			_, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) {
				return rules.CommitAggregate(tx, location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 1})
			})
			require.ErrorIs(t, err, location.ErrInternal)
		})
	})
}

func TestAbortAggregate(t *testing.T) {
	t.Run("AUTH-183_AUTH-184_abort_and_abort_again", func(t *testing.T) {
		f, s1, s2 := prepared(t)
		require.Equal(t, location.KindAborted, f.abortAgg("AG1", 1))
		require.Equal(t, authUsage{}, f.U(f.NB))
		require.Equal(t, snap(s1), f.read(keyS("g1")))
		require.Equal(t, snap(s2), f.read(keyS("g2")))
		f.unchanged(func() { require.Equal(t, location.KindAlreadyAborted, f.abortAgg("AG1", 1)) })
	})
	t.Run("AUTH-185_abort_a_committed_or_unknown_aggregate", func(t *testing.T) {
		f, _, _ := prepared(t)
		f.commitAgg("AG1", 1)
		f.unchanged(func() {
			require.Equal(t, location.KindStale, f.abortAgg("AG1", 1))
			require.Equal(t, location.KindStale, f.abortAgg("nope", 1))
		})
	})
	t.Run("AUTH-186_adopted_reservation_is_released_once", func(t *testing.T) {
		f, _, _ := adoptSetup(t)
		require.Equal(t, location.KindAborted, f.abortAgg("AG2", 1))
		require.Equal(t, location.KindAlreadyAborted, f.abortRel("AG2"))
		require.Equal(t, authUsage{}, f.U(f.NB))
	})
}

// storedValue reads a stored value of the fake source.
func storedValue[T any](f *authF, t rules.Table, key string) T {
	f.t.Helper()
	rec, ok := f.src.Get(t, key)
	require.True(f.t, ok, "%s %q", t, key)
	v, ok := rec.Value.(T)
	require.True(f.t, ok, "%s %q holds %T", t, key, rec.Value)
	return v
}
