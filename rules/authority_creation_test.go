package rules_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// claimEntrySpot stores an entry-spot claim on id's spot key held by the
// node's owner.
func (f *authF) claimEntrySpot(id string, d location.MeshNodeDescriptor) {
	f.src.put(rules.TableEntryClaims, string(keyS(id)), rules.EntryClaim{
		Descriptor: d.Key(), OwnerID: d.OwnerID, LeaseGeneration: d.LeaseGeneration, LifecycleGeneration: d.LifecycleGeneration,
	})
}

// reserveKind reserves with a result the caller checks.
func (f *authF) reserveKind(kind location.ObjectKind, id, stableType string, t location.CreationTarget, v location.CapacityVector) location.ReserveResult {
	f.t.Helper()
	return f.reserve(reserveReq(kind, id, stableType, t, v))
}

func TestReserve(t *testing.T) {
	t.Run("AUTH-076_reserve_a_user_spot", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("c1", target(f.NA))
		require.True(t, location.IsUUIDLower(r.ReservationID), r.ReservationID)
		require.Equal(t, authT0(), r.Creating.StoreNow)
		require.Equal(t, spotUsage(0, 1), f.U(f.NA))
		require.Equal(t, authUsage{}, f.U(f.NB))
		require.Equal(t, int64(1), f.src.scanRevision)
	})
	t.Run("AUTH-077_reserve_an_actor", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("c2", target(f.NA))
		require.Equal(t, location.PlacementAllocation{
			State: location.AllocationReserved, ObjectKind: location.ObjectActor, StableType: "player",
			Descriptor: f.NA.Key(), DescriptorLifecycleGeneration: 1, Capacity: vA(),
		}, r.Creating.Allocation)
		require.Equal(t, authUsage{Actors: ae(0, 1)}, f.U(f.NA))
	})
	t.Run("AUTH-080_entry-spot_identity_claims", func(t *testing.T) {
		f := newAuthF(t)
		f.claimEntrySpot("lobby", f.NA)
		missing := f.missing()
		f.unchanged(func() {
			require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &missing},
				f.reserveKind(location.ObjectUserSpot, "lobby", "room", target(f.NA), vS("room")))
			require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &missing},
				f.reserveKind(location.ObjectInstanceSpot, "lobby", "shard", target(f.NA), vI("shard")))
		})
		f.RA("lobby", target(f.NA))
	})
	t.Run("A-03_claim_of_a_dead_holder_is_free", func(t *testing.T) {
		f := newAuthF(t)
		f.claimEntrySpot("lobby", f.NB)
		f.release("owner-b")
		f.RS("lobby", target(f.NA))
	})
	t.Run("AUTH-081_already_active", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("c3", target(f.NA))
		f.unchanged(func() {
			cur := snap(s)
			require.Equal(t, location.ReserveResult{Kind: location.KindAlreadyExists, Current: &cur},
				f.reserveKind(location.ObjectUserSpot, "c3", "room", target(f.NA), vS("room")))
		})
	})
	t.Run("AUTH-082_already_reserved", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("c4", target(f.NA))
		f.unchanged(func() {
			cur := snap(*r.Creating)
			require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &cur},
				f.reserveKind(location.ObjectUserSpot, "c4", "room", target(f.NB), vS("room")))
		})
	})
	t.Run("AUTH-083_user_spot_vs_instance_spot", func(t *testing.T) {
		f := newAuthF(t)
		s := f.AS("c5", target(f.NA))
		f.unchanged(func() {
			cur := snap(s)
			require.Equal(t, location.ReserveResult{Kind: location.KindTypeMismatch, Current: &cur},
				f.reserveKind(location.ObjectInstanceSpot, "c5", "room", target(f.NA), vI("shard")))
		})
	})
	t.Run("AUTH-084_stable_type_differs", func(t *testing.T) {
		f := newAuthF(t)
		s6 := f.AS("c6", target(f.NA))
		r7 := f.RS("c7", target(f.NA))
		for id, cur := range map[string]location.AuthoritySnapshot{"c6": s6, "c7": *r7.Creating} {
			f.unchanged(func() {
				c := snap(cur)
				require.Equal(t, location.ReserveResult{Kind: location.KindTypeMismatch, Current: &c},
					f.reserveKind(location.ObjectUserSpot, id, "hall", target(f.NA), vS("hall")))
			})
		}
	})
	t.Run("AUTH-085_AUTH-086_AUTH-087_target_not_live", func(t *testing.T) {
		for name, c := range map[string]struct {
			change func(*authF)
			target func(*authF) location.CreationTarget
		}{
			"AUTH-085_lease_released": {func(f *authF) { f.release("owner-a") }, func(f *authF) location.CreationTarget { return target(f.NA) }},
			"AUTH-086_lifecycle_2": {nil, func(f *authF) location.CreationTarget {
				tg := target(f.NA)
				tg.NodeLifecycleGeneration = 2
				return tg
			}},
			"AUTH-087_owner_b_on_node_a": {nil, func(f *authF) location.CreationTarget {
				tg := target(f.NA)
				tg.Owner = f.B
				return tg
			}},
			"node_removed": {func(f *authF) { f.unpublish(f.NA) }, func(f *authF) location.CreationTarget { return target(f.NA) }},
		} {
			t.Run(name, func(t *testing.T) {
				f := newAuthF(t)
				if c.change != nil {
					c.change(f)
				}
				missing := f.missing()
				f.unchanged(func() {
					require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &missing},
						f.reserveKind(location.ObjectUserSpot, "c8", "room", c.target(f), vS("room")))
				})
			})
		}
	})
	t.Run("AUTH-088_overall_spot_limit", func(t *testing.T) {
		f := newAuthF(t, withLimits("NA", authLimits{10, 1, 10, 10, 10}))
		r := f.RS("c11", target(f.NA))
		f.unchanged(func() {
			require.Equal(t, location.ReserveResult{Kind: location.KindPlacementCapacityExhausted},
				f.reserveKind(location.ObjectUserSpot, "c12", "room", target(f.NA), vS("room")))
		})
		require.Equal(t, location.KindAborted, f.abort(abortReq(location.ObjectUserSpot, "c11", r, target(f.NA))))
		f.RS("c12", target(f.NA))
	})
	t.Run("AUTH-089_per-type_limit", func(t *testing.T) {
		f := newAuthF(t, withLimits("NA", authLimits{10, 10, 1, 10, 10}))
		f.RS("c13", target(f.NA))
		require.Equal(t, location.KindPlacementCapacityExhausted, f.reserveKind(location.ObjectUserSpot, "c14", "room", target(f.NA), vS("room")).Kind)
		f.RS("c15", target(f.NA), "hall")
	})
	t.Run("AUTH-090_type_not_offered", func(t *testing.T) {
		f := newAuthF(t)
		require.Equal(t, location.KindPlacementCapacityExhausted, f.reserveKind(location.ObjectUserSpot, "c16", "arena", target(f.NA), vS("arena")).Kind)
	})
	t.Run("AUTH-091_per-type_limit_0_is_unlimited", func(t *testing.T) {
		f := newAuthF(t, withLimits("NA", authLimits{10, 2, 0, 10, 10}))
		f.RS("c17", target(f.NA))
		f.RS("c18", target(f.NA))
		require.Equal(t, location.KindPlacementCapacityExhausted, f.reserveKind(location.ObjectUserSpot, "c19", "room", target(f.NA), vS("room")).Kind)
	})
	t.Run("AUTH-092_overall_limit_0_is_unlimited_D-18", func(t *testing.T) {
		f := newAuthF(t, withLimits("NA", authLimits{0, 0, 0, 10, 10}))
		for i := range 12 {
			f.RA("a"+string(rune('a'+i)), target(f.NA))
			f.RS("s"+string(rune('a'+i)), target(f.NA))
		}
		require.Equal(t, authUsage{Actors: ae(0, 12), Spots: ae(0, 12), Room: ae(0, 12)}, f.U(f.NA))
	})
	t.Run("AUTH-093_usage_is_per_lifecycle", func(t *testing.T) {
		f := newAuthF(t)
		f.AS("c17", target(f.NA))
		d := f.NA
		d.LifecycleGeneration = 2
		f.publish(d)
		require.Equal(t, authUsage{}, f.U(d))
		f.RS("c18", target(d))
		require.Equal(t, spotUsage(0, 1), f.U(d))
		require.Equal(t, spotUsage(1, 0), f.U(f.NA))
	})
	t.Run("AUTH-094_exhaustion_comes_after_capacity", func(t *testing.T) {
		for _, counter := range []string{"version", "object", "owner"} {
			t.Run(counter, func(t *testing.T) {
				f := newAuthF(t, withLimits("NA", authLimits{10, 1, 10, 10, 10}))
				setMax := func() {
					switch counter {
					case "version":
						f.src.version = location.MaxGeneration
					case "object":
						f.src.object = location.MaxGeneration
					default:
						f.src.owner = location.MaxGeneration
					}
				}
				saved := f.src.state()
				setMax()
				f.unchanged(func() {
					require.Equal(t, location.ReserveResult{Kind: location.KindGenerationExhausted},
						f.reserveKind(location.ObjectUserSpot, "e1", "room", target(f.NA), vS("room")))
				})
				f.src.version, f.src.object, f.src.owner = saved.version, saved.object, saved.owner
				f.RS("e0", target(f.NA))
				setMax()
				f.unchanged(func() {
					require.Equal(t, location.ReserveResult{Kind: location.KindPlacementCapacityExhausted},
						f.reserveKind(location.ObjectUserSpot, "e2", "room", target(f.NA), vS("room")))
				})
			})
		}
	})
	t.Run("AUTH-095_claim_beats_an_existing_row", func(t *testing.T) {
		f := newAuthF(t)
		f.AS("lobby2", target(f.NA))
		nc := authNode("node-c", f.B, authLimits{10, 10, 10, 10, 10})
		f.publish(nc)
		f.claimEntrySpot("lobby2", nc)
		missing := f.missing()
		f.unchanged(func() {
			require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &missing},
				f.reserveKind(location.ObjectInstanceSpot, "lobby2", "shard", target(f.NA), vI("shard")))
		})
	})
	t.Run("AUTH-194_typed_buckets_are_separate", func(t *testing.T) {
		f := newAuthF(t)
		f.RS("u1", target(f.NA))
		require.Equal(t, location.KindReserved, f.reserveKind(location.ObjectInstanceSpot, "u2", "shard", target(f.NA), vI("shard")).Kind)
		require.Equal(t, authUsage{Spots: ae(0, 2), Room: ae(0, 1), Shard: ae(0, 1)}, f.U(f.NA))
	})
	t.Run("AUTH-195_actor_and_spot_buckets_are_separate", func(t *testing.T) {
		f := newAuthF(t)
		f.RA("u3", target(f.NA))
		f.RS("u4", target(f.NA))
		require.Equal(t, authUsage{Actors: ae(0, 1), Spots: ae(0, 1), Room: ae(0, 1)}, f.U(f.NA))
	})
	t.Run("AUTH-196_no_re-check_after_admission", func(t *testing.T) {
		f := newAuthF(t)
		r5 := f.RS("u5", target(f.NA))
		r6 := f.RS("u6", target(f.NA))
		d := f.NA
		d.DescriptorRevision = 2
		d.PopulationCapacity = authPopulation(authLimits{10, 10, 1, 10, 10})
		f.publish(d)
		require.Equal(t, location.KindCommitted, f.commit(commitReq("u5", r5, target(f.NA))).Kind)
		require.Equal(t, location.KindCommitted, f.commit(commitReq("u6", r6, target(f.NA))).Kind)
		require.Equal(t, location.KindPlacementCapacityExhausted, f.reserveKind(location.ObjectUserSpot, "u7", "room", target(f.NA), vS("room")).Kind)
	})
	t.Run("overall_limit_counts_existing_usage_even_for_a_zero_request", func(t *testing.T) {
		// The reference's hook compares every overall limit, also one the
		// request does not use: a node over its (lowered) spot limit takes
		// no actor either.
		f := newAuthF(t)
		f.AS("o1", target(f.NA))
		f.AS("o2", target(f.NA))
		d := f.NA
		d.DescriptorRevision = 2
		d.PopulationCapacity = authPopulation(authLimits{10, 1, 10, 10, 10})
		f.publish(d)
		require.Equal(t, location.KindPlacementCapacityExhausted, f.reserveKind(location.ObjectActor, "x", "player", target(f.NA), vA()).Kind)
	})
}

func TestCommit(t *testing.T) {
	t.Run("AUTH-096_commit_a_reservation", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("k1", target(f.NA))
		res := f.commit(commitReq("k1", r, target(f.NA)))
		want := *r.Creating
		want.StoreVersion, want.Payload, want.PendingCreation = "2", []byte("ready"), nil
		want.Allocation.State = location.AllocationActive
		require.Equal(t, location.CommitResult{Kind: location.KindCommitted, Ready: &want}, res)
		require.Equal(t, spotUsage(1, 0), f.U(f.NA))
		require.Equal(t, int64(2), f.src.scanRevision)
	})
	t.Run("AUTH-097_replay", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("k1", target(f.NA))
		ready := f.commit(commitReq("k1", r, target(f.NA))).Ready
		f.unchanged(func() {
			require.Equal(t, location.CommitResult{Kind: location.KindAlreadyCommitted, Ready: ready}, f.commit(commitReq("k1", r, target(f.NA))))
		})
	})
	t.Run("AUTH-100_AUTH-101_AUTH-102_mismatches_are_stale", func(t *testing.T) {
		changes := map[string]func(*location.CommitRequest, *authF){
			"AUTH-100_reservation_id": func(c *location.CommitRequest, _ *authF) { c.ReservationID = "other" },
			"AUTH-101_version":        func(c *location.CommitRequest, _ *authF) { c.ExpectedStoreVersion = "9" },
			"AUTH-102_lifecycle":      func(c *location.CommitRequest, _ *authF) { c.Target.NodeLifecycleGeneration = 2 },
			"AUTH-102_owner_b":        func(c *location.CommitRequest, f *authF) { c.Target.Owner = f.B },
			"AUTH-102_rid":            func(c *location.CommitRequest, _ *authF) { c.Target.NodeRID = "node-b" },
			"AUTH-102_mesh":           func(c *location.CommitRequest, _ *authF) { c.Target.MeshName = "other" },
			"AUTH-102_lease":          func(c *location.CommitRequest, _ *authF) { c.Target.Owner.LeaseGeneration = 9 },
		}
		for name, change := range changes {
			t.Run(name, func(t *testing.T) {
				f := newAuthF(t)
				r := f.RS("k2", target(f.NA))
				c := commitReq("k2", r, target(f.NA))
				change(&c, f)
				f.unchanged(func() { require.Equal(t, location.CommitResult{Kind: location.KindStale}, f.commit(c)) })
			})
		}
	})
	t.Run("AUTH-103_target_no_longer_live", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("k3", target(f.NA))
		f.release("owner-a")
		f.unchanged(func() { require.Equal(t, location.KindStale, f.commit(commitReq("k3", r, target(f.NA))).Kind) })
		require.Equal(t, location.KindAborted, f.abort(abortReq(location.ObjectUserSpot, "k3", r, target(f.NA))))
	})
	t.Run("AUTH-104_commit_after_abort", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("k4", target(f.NA))
		f.abort(abortReq(location.ObjectUserSpot, "k4", r, target(f.NA)))
		require.Equal(t, location.KindStale, f.commit(commitReq("k4", r, target(f.NA))).Kind)
	})
	t.Run("AUTH-105_commit_after_owner_removal", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("k4", target(f.NA))
		f.removeRow(keyS("k4"))
		require.Equal(t, location.KindStale, f.commit(commitReq("k4", r, target(f.NA))).Kind)
	})
	t.Run("AUTH-106_old_replay_after_re-creation_is_stale_D-05", func(t *testing.T) {
		f := newAuthF(t)
		r1 := f.RS("k5", target(f.NA))
		s1 := f.commit(commitReq("k5", r1, target(f.NA))).Ready
		f.cas(keyS("k5"), s1.StoreVersion, deletion())
		f.AS("k5", target(f.NA))
		f.unchanged(func() { require.Equal(t, location.KindStale, f.commit(commitReq("k5", r1, target(f.NA))).Kind) })
	})
	t.Run("AUTH-107_versions_exhausted", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("k6", target(f.NA))
		f.src.version = location.MaxGeneration
		f.unchanged(func() {
			require.Equal(t, location.KindGenerationExhausted, f.commit(commitReq("k6", r, target(f.NA))).Kind)
		})
	})
	t.Run("D-28_spot_kinds_share_the_row", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("k7", target(f.NA))
		c := commitReq("k7", r, target(f.NA))
		c.Key.Kind = location.ObjectInstanceSpot
		require.Equal(t, location.KindCommitted, f.commit(c).Kind)
	})
	t.Run("AUTH-220_creation_across_expiry", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("t4", target(f.NA))
		f.src.now = authT0().Add(time.Minute)
		require.Equal(t, location.KindStale, f.commit(commitReq("t4", r, target(f.NA))).Kind)
		require.Equal(t, location.KindAborted, f.abort(abortReq(location.ObjectUserSpot, "t4", r, target(f.NA))))
	})
}

// deadline is the catalogue's default operation deadline, T0 + 60 s.
func deadline() time.Time { return authT0().Add(time.Minute) }

func TestCompleteCreation(t *testing.T) {
	t.Run("AUTH-108_created", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a1", target(f.NA))
		res := f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline())))
		ready := *r.Creating
		ready.StoreVersion, ready.Payload, ready.PendingCreation = "2", []byte("ready-actor"), nil
		ready.Allocation.State = location.AllocationActive
		p := pub(op(1), deadline())
		terminal := location.TerminalRecord{
			State: location.TerminalCreated, Operation: op(1), ReservationID: r.ReservationID, ObjectKind: location.ObjectActor,
			TerminalEnvelope: p.TerminalEnvelope, TerminalEnvelopeSHA256: p.TerminalEnvelopeSHA256,
			ExpiresAt: deadline().Add(5 * time.Minute), StoreNow: authT0(),
		}
		require.Equal(t, location.CompleteCreationResult{Kind: location.KindCreated, Ready: &ready, Terminal: &terminal}, res)
		require.Equal(t, location.TerminalReadResult{Kind: location.KindFound, Record: &terminal}, f.readTerminal(op(1)))
		require.Equal(t, authUsage{Actors: ae(1, 0)}, f.U(f.NA))
		require.Equal(t, snap(ready), f.read(keyA("a1")))
	})
	for _, kind := range []location.TerminalState{location.TerminalRejected, location.TerminalFailed} {
		name := map[location.TerminalState]string{location.TerminalRejected: "AUTH-109_rejected", location.TerminalFailed: "AUTH-110_failed"}[kind]
		t.Run(name, func(t *testing.T) {
			f := newAuthF(t)
			r := f.RA("a2", target(f.NA))
			res := f.complete(completeReq("a2", r, target(f.NA), kind, pub(op(2), deadline())))
			require.Equal(t, location.ResultKind(kind), res.Kind)
			require.Nil(t, res.Ready)
			require.Equal(t, kind, res.Terminal.State)
			require.Equal(t, f.missing(), f.read(keyA("a2")))
			require.Equal(t, authUsage{}, f.U(f.NA))
			require.Equal(t, int64(2), f.src.version, "the hidden version is consumed (D-29)")
			got := f.readTerminal(op(2))
			require.Equal(t, location.KindFound, got.Kind)
			require.Equal(t, res.Terminal, got.Record)
			// AUTH-126: the identity is free again, with a larger object generation.
			again := f.RA("a2", target(f.NA))
			require.Greater(t, again.Creating.ObjectGeneration, r.Creating.ObjectGeneration)
		})
	}
	t.Run("AUTH-111_replay", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a1", target(f.NA))
		req := completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline()))
		first := f.complete(req)
		f.src.now = authT0().Add(time.Second)
		f.unchanged(func() {
			require.Equal(t, location.CompleteCreationResult{Kind: location.KindAlreadyCompleted, Terminal: first.Terminal}, f.complete(req))
		})
	})
	t.Run("AUTH-116_publication_window", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a5", target(f.NA))
		f.unchanged(func() {
			_, err := decideOn(f.src, func(tx *rules.Tx) (location.CompleteCreationResult, error) {
				return rules.CompleteCreation(tx, completeReq("a5", r, target(f.NA), location.TerminalCreated, pub(op(3), authT0().Add(-5*time.Minute))))
			})
			ie, ok := location.AsInputError(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, location.ClassRange, ie.Class)
			require.Equal(t, "terminal.window", ie.Code)
		})
		res := f.complete(completeReq("a5", r, target(f.NA), location.TerminalCreated, pub(op(3), authT0().Add(-5*time.Minute+time.Millisecond))))
		require.Equal(t, location.KindCreated, res.Kind)
		require.Equal(t, authT0().Add(time.Millisecond), res.Terminal.ExpiresAt)
	})
	t.Run("AUTH-118_AUTH-119_AUTH-120_stale", func(t *testing.T) {
		for name, c := range map[string]func(f *authF, r location.ReserveResult, req *location.CompleteCreationRequest){
			"AUTH-118_wrong_version": func(_ *authF, _ location.ReserveResult, req *location.CompleteCreationRequest) {
				req.ExpectedStoreVersion = "7"
			},
			"AUTH-119_target_dead": func(f *authF, _ location.ReserveResult, _ *location.CompleteCreationRequest) { f.release("owner-a") },
			"AUTH-120_after_abort": func(f *authF, r location.ReserveResult, _ *location.CompleteCreationRequest) {
				f.abort(abortReq(location.ObjectActor, "a6", r, target(f.NA)))
			},
			"wrong_reservation_id": func(_ *authF, _ location.ReserveResult, req *location.CompleteCreationRequest) {
				req.ReservationID = "nope"
			},
			"target_lifecycle_differs": func(_ *authF, _ location.ReserveResult, req *location.CompleteCreationRequest) {
				req.Target.NodeLifecycleGeneration = 3
			},
		} {
			t.Run(name, func(t *testing.T) {
				f := newAuthF(t)
				r := f.RA("a6", target(f.NA))
				req := completeReq("a6", r, target(f.NA), location.TerminalCreated, pub(op(4), deadline()))
				c(f, r, &req)
				f.unchanged(func() {
					require.Equal(t, location.CompleteCreationResult{Kind: location.KindStale}, f.complete(req))
					require.Equal(t, location.KindMissing, f.readTerminal(op(4)).Kind)
				})
			})
		}
	})
	t.Run("AUTH-121_second_completion_with_another_operation", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a1", target(f.NA))
		f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline())))
		f.unchanged(func() {
			require.Equal(t, location.KindStale, f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(9), deadline()))).Kind)
			require.Equal(t, location.KindMissing, f.readTerminal(op(9)).Kind)
		})
	})
	t.Run("AUTH-122_operation_identity_reused_D-07", func(t *testing.T) {
		f := newAuthF(t)
		r3 := f.RA("a3", target(f.NA))
		rejected := f.complete(completeReq("a3", r3, target(f.NA), location.TerminalRejected, pub(op(5), deadline())))
		r4 := f.RA("a4", target(f.NA))
		f.unchanged(func() {
			require.Equal(t, location.CompleteCreationResult{Kind: location.KindAlreadyCompleted, Terminal: rejected.Terminal},
				f.complete(completeReq("a4", r4, target(f.NA), location.TerminalCreated, pub(op(5), deadline()))))
		})
		require.Equal(t, location.AllocationReserved, f.current(keyA("a4")).Allocation.State)
	})
	t.Run("AUTH-123_replay_after_retention_after_a_read", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a1", target(f.NA))
		f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline())))
		f.src.now = deadline().Add(5 * time.Minute)
		require.Equal(t, location.TerminalReadResult{Kind: location.KindMissing, StoreNow: f.src.now}, f.readTerminal(op(1)))
		_, err := decideOn(f.src, func(tx *rules.Tx) (location.CompleteCreationResult, error) {
			return rules.CompleteCreation(tx, completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline())))
		})
		require.ErrorIs(t, err, location.ErrInvalidArgument)
		require.Equal(t, location.KindStale, f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), f.src.now.Add(time.Minute)))).Kind)
	})
	t.Run("AUTH-124_replay_after_retention_no_read_is_stale_D-06", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a1", target(f.NA))
		f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline())))
		f.src.now = deadline().Add(5 * time.Minute)
		f.unchanged(func() {
			require.Equal(t, location.CompleteCreationResult{Kind: location.KindStale},
				f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), f.src.now.Add(time.Minute)))))
		})
	})
	t.Run("expired_identity_may_be_published_again", func(t *testing.T) {
		// After retention an identity counts as unused: a new reservation may
		// publish under it, replacing the expired record.
		f := newAuthF(t)
		r := f.RA("a1", target(f.NA))
		f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline())))
		f.src.now = deadline().Add(5 * time.Minute)
		f.src.leases["owner-a"] = authLease{generation: 1, expiresAt: f.src.now.Add(time.Minute)}
		r2 := f.RA("a7", target(f.NA))
		res := f.complete(completeReq("a7", r2, target(f.NA), location.TerminalFailed, pub(op(1), f.src.now.Add(time.Minute))))
		require.Equal(t, location.KindFailed, res.Kind)
		require.Equal(t, res.Terminal, f.readTerminal(op(1)).Record)
	})
	t.Run("AUTH-125_versions_exhausted", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a8", target(f.NA))
		f.src.version = location.MaxGeneration
		f.unchanged(func() {
			require.Equal(t, location.KindGenerationExhausted, f.complete(completeReq("a8", r, target(f.NA), location.TerminalCreated, pub(op(6), deadline()))).Kind)
		})
	})
	t.Run("unknown_completion_kind_is_invalid", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a9", target(f.NA))
		f.unchanged(func() {
			_, err := decideOn(f.src, func(tx *rules.Tx) (location.CompleteCreationResult, error) {
				return rules.CompleteCreation(tx, completeReq("a9", r, target(f.NA), "aborted", pub(op(7), deadline())))
			})
			require.ErrorIs(t, err, location.ErrInvalidArgument)
		})
	})
}

func TestReadCreationTerminal(t *testing.T) {
	t.Run("AUTH-127_unknown_operation", func(t *testing.T) {
		f := newAuthF(t)
		require.Equal(t, location.TerminalReadResult{Kind: location.KindMissing, StoreNow: authT0()}, f.readTerminal(op(77)))
	})
	t.Run("AUTH-128_AUTH-129_found_until_the_retention_boundary", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a1", target(f.NA))
		res := f.complete(completeReq("a1", r, target(f.NA), location.TerminalCreated, pub(op(1), deadline())))
		f.src.now = res.Terminal.ExpiresAt.Add(-time.Millisecond)
		got := f.readTerminal(op(1))
		require.Equal(t, location.TerminalReadResult{Kind: location.KindFound, Record: res.Terminal}, got)
		got.Record.TerminalEnvelope[0] = 'X'
		require.Equal(t, []byte("env"), f.readTerminal(op(1)).Record.TerminalEnvelope)
		f.src.now = res.Terminal.ExpiresAt
		require.Equal(t, location.TerminalReadResult{Kind: location.KindMissing, StoreNow: f.src.now}, f.readTerminal(op(1)))
		tx := rules.NewTx(f.src)
		require.True(t, rules.ExpiredCreationTerminal(tx, op(1)))
		require.False(t, rules.ExpiredCreationTerminal(tx, op(2)))
	})
	t.Run("AUTH-131_identities_are_exact", func(t *testing.T) {
		f := newAuthF(t)
		f.AA("a1", target(f.NA), 1)
		for _, o := range []location.OperationIdentity{
			{SourceNodeRID: "src2", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: 1}},
			{SourceNodeRID: "src", SourceNodeGeneration: 2, OperationID: location.OperationID{Low: 1}},
			{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{High: 1, Low: 1}},
		} {
			require.Equal(t, location.KindMissing, f.readTerminal(o).Kind, "%+v", o)
		}
	})
}

func TestAbortCreation(t *testing.T) {
	t.Run("AUTH-132_AUTH-133_abort_and_replay", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("x1", target(f.NA))
		require.Equal(t, location.KindAborted, f.abort(abortReq(location.ObjectUserSpot, "x1", r, target(f.NA))))
		require.Equal(t, f.missing(), f.read(keyS("x1")))
		require.Equal(t, authUsage{}, f.U(f.NA))
		require.Equal(t, int64(1), f.src.version, "abort consumes no version")
		require.Equal(t, int64(2), f.src.scanRevision)
		f.unchanged(func() {
			require.Equal(t, location.KindAlreadyAborted, f.abort(abortReq(location.ObjectUserSpot, "x1", r, target(f.NA))))
		})
	})
	t.Run("AUTH-134_no_liveness_needed", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("x2", target(f.NA))
		f.release("owner-a")
		f.unpublish(f.NA)
		require.Equal(t, location.KindAborted, f.abort(abortReq(location.ObjectUserSpot, "x2", r, target(f.NA))))
	})
	t.Run("AUTH-135_mismatches", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("x5", target(f.NA))
		for _, change := range []func(*location.AbortRequest){
			func(a *location.AbortRequest) { a.ExpectedStoreVersion = "9" },
			func(a *location.AbortRequest) { a.ReservationID = "other" },
			func(a *location.AbortRequest) { a.Target.NodeLifecycleGeneration = 2 },
		} {
			a := abortReq(location.ObjectUserSpot, "x5", r, target(f.NA))
			change(&a)
			f.unchanged(func() { require.Equal(t, location.KindStale, f.abort(a)) })
		}
	})
	t.Run("AUTH-136_abort_after_commit", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("x3", target(f.NA))
		f.commit(commitReq("x3", r, target(f.NA)))
		f.unchanged(func() {
			require.Equal(t, location.KindStale, f.abort(abortReq(location.ObjectUserSpot, "x3", r, target(f.NA))))
		})
	})
	t.Run("AUTH-137_actors", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("x4", target(f.NA))
		require.Equal(t, location.KindAborted, f.abort(abortReq(location.ObjectActor, "x4", r, target(f.NA))))
		require.Equal(t, authUsage{}, f.U(f.NA))
	})
	t.Run("AUTH-138_replay_under_another_key_D-22", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RS("x1", target(f.NA))
		f.abort(abortReq(location.ObjectUserSpot, "x1", r, target(f.NA)))
		f.unchanged(func() {
			require.Equal(t, location.KindAlreadyAborted, f.abort(abortReq(location.ObjectActor, "other", r, target(f.NA))))
		})
	})
	t.Run("AUTH-139_abort_after_a_rejected_completion", func(t *testing.T) {
		f := newAuthF(t)
		r := f.RA("a2", target(f.NA))
		f.complete(completeReq("a2", r, target(f.NA), location.TerminalRejected, pub(op(2), deadline())))
		require.Equal(t, location.KindStale, f.abort(abortReq(location.ObjectActor, "a2", r, target(f.NA))))
	})
}
