package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

func TestCreationTerminals(t *testing.T) {
	t.Run("AUTH-123_AUTH-129_expired_terminals_read_missing_and_are_purged", func(t *testing.T) {
		f := newAuFix(t)
		r := f.RA("a1", auTarget(f.NA))
		res := f.complete(auCompleteReq("a1", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), auT0().Add(time.Minute))))
		stored := func() bool {
			f.s.mu.Lock()
			defer f.s.mu.Unlock()
			_, ok := f.s.tables[rules.TableOperationTerminals][rules.OperationKey(auOP(1))]
			return ok
		}
		f.clk.Set(res.Terminal.ExpiresAt.Add(-time.Millisecond))
		require.Equal(t, location.KindFound, f.readTerminal(auOP(1)).Kind)
		f.clk.Set(res.Terminal.ExpiresAt)
		require.True(t, stored())
		require.Equal(t, location.TerminalReadResult{Kind: location.KindMissing, StoreNow: res.Terminal.ExpiresAt}, f.readTerminal(auOP(1)))
		require.False(t, stored(), "the expired terminal is purged (D-13)")
		// The original deadline cannot be published any more; a fresh one
		// finds the reservation finished.
		_, err := f.s.CompleteCreation(f.ctx, auCompleteReq("a1", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), auT0().Add(time.Minute))))
		require.ErrorIs(t, err, location.ErrInvalidArgument)
		f.unchanged(func() {
			require.Equal(t, location.KindStale, f.complete(auCompleteReq("a1", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), f.clk.Now().Add(time.Minute)))).Kind)
		})
	})
	t.Run("AUTH-124_replay_after_retention_without_a_read_is_stale_D-06", func(t *testing.T) {
		f := newAuFix(t)
		r := f.RA("a1", auTarget(f.NA))
		f.complete(auCompleteReq("a1", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), auT0().Add(time.Minute))))
		f.clk.Set(auT0().Add(6 * time.Minute))
		f.unchanged(func() {
			require.Equal(t, location.CompleteCreationResult{Kind: location.KindStale},
				f.complete(auCompleteReq("a1", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), f.clk.Now().Add(time.Minute)))))
		})
	})
	t.Run("AUTH-111_AUTH-122_replays_answer_the_stored_record", func(t *testing.T) {
		f := newAuFix(t)
		r3 := f.RA("a3", auTarget(f.NA))
		rej := f.complete(auCompleteReq("a3", r3, auTarget(f.NA), location.TerminalRejected, auPub(auOP(5), auT0().Add(time.Minute))))
		require.Equal(t, location.KindRejected, rej.Kind)
		require.Equal(t, f.missing(), f.read(auKA("a3")))
		r4 := f.RA("a4", auTarget(f.NA))
		f.clk.Advance(time.Second)
		f.unchanged(func() {
			require.Equal(t, location.CompleteCreationResult{Kind: location.KindAlreadyCompleted, Terminal: rej.Terminal},
				f.complete(auCompleteReq("a4", r4, auTarget(f.NA), location.TerminalCreated, auPub(auOP(5), auT0().Add(time.Minute)))))
		})
		require.Equal(t, location.AllocationReserved, f.current(auKA("a4")).Allocation.State)
	})
	t.Run("AUTH-016_copies_in_and_out", func(t *testing.T) {
		f := newAuFix(t)
		req := auReserveReq(location.ObjectUserSpot, "r3", "room", auTarget(f.NA), auVS("room", 1))
		r := f.reserve(req)
		req.CreatingPayload[0], req.Intent.RequestSHA256[0], req.Capacity.SpotType.Count = 'X', 9, 9
		r.Creating.Payload[0], r.Creating.PendingCreation.RequestSHA256[1], r.Creating.Allocation.Capacity.SpotType.Count = 'Y', 9, 9
		got := f.current(auKS("r3"))
		require.Equal(t, []byte("creating"), got.Payload)
		require.Equal(t, auBytes(32, 1), got.PendingCreation.RequestSHA256)
		require.Equal(t, auVS("room", 1), got.Allocation.Capacity)

		c := auCommitReq("r3", r, auTarget(f.NA))
		ready := f.commit(c).Ready
		c.ReadyPayload[0] = 'Z'
		ready.Payload[0] = 'Z'
		require.Equal(t, []byte("ready"), f.current(auKS("r3")).Payload)

		m := auPreserve("p")
		stored := f.CAS(auKS("r3"), ready.StoreVersion, m)
		m.Payload[0] = 'Z'
		stored.Stored.Payload[0] = 'Z'
		require.Equal(t, []byte("p"), f.current(auKS("r3")).Payload)

		ra := f.RA("a1", auTarget(f.NA))
		cr := auCompleteReq("a1", ra, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), auT0().Add(time.Minute)))
		res := f.complete(cr)
		cr.Completion.Terminal.TerminalEnvelope[0] = 'X'
		res.Terminal.TerminalEnvelopeSHA256[0] = 0
		got2 := f.readTerminal(auOP(1)).Record
		require.Equal(t, []byte("env"), got2.TerminalEnvelope)
		require.Equal(t, auPub(auOP(1), time.Time{}).TerminalEnvelopeSHA256, got2.TerminalEnvelopeSHA256)
	})
	t.Run("AUTH-033_AUTH-217_lease_expiry_boundary", func(t *testing.T) {
		f := newAuFix(t)
		s := f.AS("t1", auTarget(f.NA))
		f.clk.Set(auT0().Add(time.Minute - time.Millisecond))
		s1 := f.CAS(auKS("t1"), s.StoreVersion, auPreserve("p"))
		require.Equal(t, location.KindStored, s1.Kind)
		f.clk.Set(auT0().Add(time.Minute))
		f.unchanged(func() {
			require.Equal(t, auConflict(auSnap(f.current(auKS("t1")))), f.CAS(auKS("t1"), s1.Stored.StoreVersion, auDelete()))
		})
	})
	t.Run("AUTH-035_AUTH-221_rebind_after_expiry", func(t *testing.T) {
		f := newAuFix(t)
		s := f.AS("t5", auTarget(f.NA))
		f.expire("owner-a")
		a2 := f.claim("owner-a")
		d := f.NA
		d.LeaseGeneration = a2.LeaseGeneration
		f.publish(d, location.IntentNewClaim)
		res := f.CAS(auKS("t5"), s.StoreVersion, auRebind(f.A, a2, "rebound"))
		want := s
		want.StoreVersion, want.Payload, want.Owner = "3", []byte("rebound"), a2
		require.Equal(t, location.CompareExchangeResult{Kind: location.KindStored, Stored: &want}, res)
	})
}

func TestSetAuthorityCounters(t *testing.T) {
	ptr := func(v int64) *int64 { return &v }
	t.Run("next_issues_follow_the_set_values", func(t *testing.T) {
		f := newAuFix(t)
		require.NoError(t, f.s.SetAuthorityCounters(ptr(41), ptr(7), nil))
		r := f.RS("c1", auTarget(f.NA))
		require.Equal(t, location.StoreVersion("42"), r.Creating.StoreVersion)
		require.Equal(t, int64(8), r.Creating.ObjectGeneration)
		require.Equal(t, int64(1), r.Creating.AuthorityOwnerGeneration)
		require.NoError(t, f.s.SetAuthorityCounters(nil, nil, ptr(100)))
		require.Equal(t, int64(101), f.RS("c2", auTarget(f.NA)).Creating.AuthorityOwnerGeneration)
	})
	t.Run("AUTH-094_exhaustion_comes_after_capacity", func(t *testing.T) {
		for _, which := range []int{0, 1, 2} {
			f := newAuFix(t, auNALimits(auLimits{10, 1, 10, 10, 10}))
			counters := [3]*int64{}
			counters[which] = ptr(location.MaxGeneration)
			require.NoError(t, f.s.SetAuthorityCounters(counters[0], counters[1], counters[2]))
			f.unchanged(func() {
				require.Equal(t, location.ReserveResult{Kind: location.KindGenerationExhausted},
					f.reserve(auReserveReq(location.ObjectUserSpot, "e1", "room", auTarget(f.NA), auVS("room", 1))))
			})
			require.NoError(t, f.s.SetAuthorityCounters(ptr(0), ptr(0), ptr(0)))
			f.RS("e0", auTarget(f.NA))
			require.NoError(t, f.s.SetAuthorityCounters(counters[0], counters[1], counters[2]))
			f.unchanged(func() {
				require.Equal(t, location.ReserveResult{Kind: location.KindPlacementCapacityExhausted},
					f.reserve(auReserveReq(location.ObjectUserSpot, "e2", "room", auTarget(f.NA), auVS("room", 1))))
			})
		}
	})
	t.Run("AUTH-059_AUTH-060_AUTH-107_AUTH-125_exhausted_writes_change_nothing", func(t *testing.T) {
		f := newAuFix(t)
		s := f.AS("m1", auTarget(f.NA))
		rs := f.RS("k6", auTarget(f.NA))
		ra := f.RA("a8", auTarget(f.NA))
		f.REL(auRelReq("R9", auKS("m1"), s, f.NA, f.NB, auVS("room", 1)))
		require.NoError(t, f.s.SetAuthorityCounters(nil, nil, ptr(location.MaxGeneration)))
		exhausted := location.CompareExchangeResult{Kind: location.KindGenerationExhausted}
		f.unchanged(func() { require.Equal(t, exhausted, f.CAS(auKS("m1"), s.StoreVersion, auNewOwner(f.B, "R9", "m"))) })
		require.NoError(t, f.s.SetAuthorityCounters(ptr(location.MaxGeneration), nil, ptr(5)))
		f.unchanged(func() {
			for _, m := range []location.AuthorityMutation{auPreserve("p"), auRestore(f.A, "r"), auDelete(), auNewOwner(f.B, "R9", "m")} {
				require.Equal(t, exhausted, f.CAS(auKS("m1"), s.StoreVersion, m), "%s", m.Kind)
			}
			require.Equal(t, location.KindGenerationExhausted, f.commit(auCommitReq("k6", rs, auTarget(f.NA))).Kind)
			require.Equal(t, location.KindGenerationExhausted,
				f.complete(auCompleteReq("a8", ra, auTarget(f.NA), location.TerminalCreated, auPub(auOP(6), auT0().Add(time.Minute)))).Kind)
		})
		require.Equal(t, location.KindMissing, f.readTerminal(auOP(6)).Kind)
		require.Equal(t, location.KindAborted, f.abortRel("R9"))
	})
	t.Run("AUTH-179_aggregate_exhaustion_boundary", func(t *testing.T) {
		for _, version := range []bool{true, false} {
			f := newAuFix(t)
			s1, s2 := f.AS("g1", auTarget(f.NA)), f.AS("g2", auTarget(f.NA))
			f.prepare(f.aggReq("AG1", 1, auVS("room", 2),
				auPart{auKS("g1"), s1.StoreVersion, location.TransitionNewOwner},
				auPart{auKS("g2"), s2.StoreVersion, location.TransitionNewOwner}))
			set := func(v int64) {
				if version {
					require.NoError(t, f.s.SetAuthorityCounters(&v, nil, nil))
				} else {
					require.NoError(t, f.s.SetAuthorityCounters(nil, nil, &v))
				}
			}
			set(location.MaxGeneration - 1)
			f.unchanged(func() { require.Equal(t, location.KindGenerationExhausted, f.commitAgg("AG1", 1)) })
			set(location.MaxGeneration - 2)
			require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
			if version {
				require.Equal(t, location.StoreVersion("9223372036854775807"), f.current(auKS("g2")).StoreVersion)
			} else {
				require.Equal(t, location.MaxGeneration, f.current(auKS("g2")).AuthorityOwnerGeneration)
			}
		}
	})
}

func TestAuthorityRemoveAllByOwner(t *testing.T) {
	removeAll := func(f *auFix, tok location.OwnerToken) int64 {
		f.t.Helper()
		n, err := f.s.RemoveAllByOwner(f.ctx, tok)
		require.NoError(f.t, err)
		return n
	}
	t.Run("AUTH-187_remove_an_owners_rows", func(t *testing.T) {
		f := newAuFix(t)
		f.AS("o1", auTarget(f.NA))
		f.AS("o2", auTarget(f.NA))
		f.RS("o3", auTarget(f.NA))
		ob := f.AS("ob", auTarget(f.NB))
		revision := f.state().scanRevision
		require.Equal(t, int64(4), removeAll(f, f.A))
		for _, id := range []string{"o1", "o2", "o3"} {
			require.Equal(t, f.missing(), f.read(auKS(id)))
		}
		require.Equal(t, auSnap(ob), f.read(auKS("ob")))
		require.Equal(t, revision+1, f.state().scanRevision)
		f.publish(f.NA, location.IntentNewClaim)
		require.Equal(t, auUsage{}, f.U(f.NA))
	})
	t.Run("AUTH-188_exact_lease_generation_only", func(t *testing.T) {
		f := newAuFix(t)
		s := f.AS("o1", auTarget(f.NA))
		f.release(f.A)
		a2 := f.claim("owner-a")
		removeAll(f, a2)
		require.Equal(t, auSnap(s), f.read(auKS("o1")))
	})
	t.Run("AUTH-189_AUTH-190_owner_lease_not_live", func(t *testing.T) {
		for _, expire := range []bool{false, true} {
			f := newAuFix(t)
			f.AS("o1", auTarget(f.NA))
			if expire {
				f.expire("owner-a")
			} else {
				f.release(f.A)
			}
			f.unchanged(func() { require.Zero(t, removeAll(f, f.A)) })
		}
	})
	t.Run("AUTH-191_removed_reservations_cannot_be_finished_D-32", func(t *testing.T) {
		f := newAuFix(t)
		r := f.RS("o4", auTarget(f.NA))
		removeAll(f, f.A)
		require.Equal(t, location.KindStale, f.commit(auCommitReq("o4", r, auTarget(f.NA))).Kind)
		require.Equal(t, location.KindStale, f.abort(auAbortReq(location.ObjectUserSpot, "o4", r, auTarget(f.NA))))
	})
	t.Run("AUTH-192_relocation_reservations_survive_D-11", func(t *testing.T) {
		f := newAuFix(t)
		s := f.AS("o5", auTarget(f.NA))
		f.REL(auRelReq("R5", auKS("o5"), s, f.NA, f.NB, auVS("room", 1)))
		removeAll(f, f.A)
		require.Equal(t, f.missing(), f.read(auKS("o5")))
		require.Equal(t, auSpots(0, 1), f.U(f.NB))
		require.Equal(t, location.KindAborted, f.abortRel("R5"))
		require.Equal(t, auUsage{}, f.U(f.NB))
	})
}

func TestAuthorityCancellation(t *testing.T) {
	f := newAuFix(t)
	s := f.AS("c1", auTarget(f.NA))
	r := f.RS("c2", auTarget(f.NA))
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	calls := map[string]func() error{
		"ReadAuthority": func() error { _, err := f.s.ReadAuthority(ctx, auKS("c1")); return err },
		"CompareExchangeAuthority": func() error {
			_, err := f.s.CompareExchangeAuthority(ctx, auKS("c1"), s.StoreVersion, auPreserve("p"))
			return err
		},
		"ListAuthorities": func() error { _, err := f.s.ListAuthorities(ctx, "", "", 10); return err },
		"Reserve": func() error {
			_, err := f.s.Reserve(ctx, auReserveReq(location.ObjectUserSpot, "c3", "room", auTarget(f.NA), auVS("room", 1)))
			return err
		},
		"Commit": func() error { _, err := f.s.Commit(ctx, auCommitReq("c2", r, auTarget(f.NA))); return err },
		"CompleteCreation": func() error {
			_, err := f.s.CompleteCreation(ctx, auCompleteReq("c2", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), auT0().Add(time.Minute))))
			return err
		},
		"ReadCreationTerminal": func() error { _, err := f.s.ReadCreationTerminal(ctx, auOP(1)); return err },
		"AbortCreation": func() error {
			_, err := f.s.AbortCreation(ctx, auAbortReq(location.ObjectUserSpot, "c2", r, auTarget(f.NA)))
			return err
		},
		"ReserveRelocationCapacity": func() error {
			_, err := f.s.ReserveRelocationCapacity(ctx, auRelReq("R", auKS("c1"), s, f.NA, f.NB, auVS("room", 1)))
			return err
		},
		"AbortRelocationCapacity": func() error { _, err := f.s.AbortRelocationCapacity(ctx, "R"); return err },
		"PrepareAggregate": func() error {
			_, err := f.s.PrepareAggregate(ctx, f.aggReq("A", 1, auVS("room", 1), auPart{auKS("c1"), s.StoreVersion, location.TransitionNewOwner}))
			return err
		},
		"CommitAggregate": func() error { _, err := f.s.CommitAggregate(ctx, auFence("A", 1)); return err },
		"AbortAggregate":  func() error { _, err := f.s.AbortAggregate(ctx, auFence("A", 1)); return err },
	}
	for name, call := range calls {
		t.Run("AUTH-226_"+name, func(t *testing.T) {
			f := f.with(t)
			f.unchanged(func() { require.ErrorIs(t, call(), context.Canceled) })
		})
	}
}
