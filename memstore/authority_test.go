package memstore

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// TestAuthorityFlow follows one object through every authority method with
// the store's exact, dense numbers.
func TestAuthorityFlow(t *testing.T) {
	t.Run("AUTH-193_store_usage_replaces_published_usage", func(t *testing.T) {
		f := newAuFix(t)
		d := f.NA
		d.DescriptorRevision = 2
		d.PopulationCapacity.Actors.Active, d.PopulationCapacity.Actors.Reserved = 5, 5
		f.publish(d, location.IntentRenew)
		require.Equal(t, auUsage{}, f.U(f.NA))
		page, err := f.s.ListMeshNodes(f.ctx, "m", location.PageRequest{})
		require.NoError(t, err)
		require.Equal(t, location.PopulationCapacity{Limit: 10}, page.Items[0].PopulationCapacity.Actors)
	})
	t.Run("AUTH-012_AUTH-076_AUTH-096_reserve_then_commit", func(t *testing.T) {
		f := newAuFix(t)
		r := f.RS("k1", auTarget(f.NA))
		require.True(t, location.IsUUIDLower(r.ReservationID), r.ReservationID)
		want := location.AuthoritySnapshot{
			StoreVersion: "1", Payload: []byte("creating"), ObjectGeneration: 1, AuthorityOwnerGeneration: 1, Owner: f.A,
			Allocation: location.PlacementAllocation{
				State: location.AllocationReserved, ObjectKind: location.ObjectUserSpot, StableType: "room",
				Descriptor: f.NA.Key(), DescriptorLifecycleGeneration: 1, Capacity: auVS("room", 1),
			},
			PendingCreation: &location.PendingCreation{ReservationID: r.ReservationID, RequestContentReference: "req:k1", RequestSHA256: auBytes(32, 1), RequestEncodedSize: 10},
			StoreNow:        auT0(),
		}
		require.Equal(t, location.ReserveResult{Kind: location.KindReserved, ReservationID: r.ReservationID, Creating: &want}, r)
		require.Equal(t, auSnap(want), f.read(auKS("k1")))
		require.Equal(t, auSpots(0, 1), f.U(f.NA))

		f.clk.Advance(time.Second)
		c := f.commit(auCommitReq("k1", r, auTarget(f.NA)))
		ready := want
		ready.StoreVersion, ready.Payload, ready.PendingCreation, ready.StoreNow = "2", []byte("ready"), nil, auT0().Add(time.Second)
		ready.Allocation.State = location.AllocationActive
		require.Equal(t, location.CommitResult{Kind: location.KindCommitted, Ready: &ready}, c)
		require.Equal(t, auSpots(1, 0), f.U(f.NA))
		require.Equal(t, int64(2), f.state().scanRevision)
		// AUTH-097: replay.
		f.unchanged(func() {
			require.Equal(t, location.CommitResult{Kind: location.KindAlreadyCommitted, Ready: &ready}, f.commit(auCommitReq("k1", r, auTarget(f.NA))))
		})
	})
	t.Run("AUTH-108_AUTH-128_complete_created_and_read_the_terminal", func(t *testing.T) {
		f := newAuFix(t)
		r := f.RA("a1", auTarget(f.NA))
		res := f.complete(auCompleteReq("a1", r, auTarget(f.NA), location.TerminalCreated, auPub(auOP(1), auT0().Add(time.Minute))))
		require.Equal(t, location.KindCreated, res.Kind)
		require.Equal(t, location.StoreVersion("2"), res.Ready.StoreVersion)
		sum := auPub(auOP(1), time.Time{}).TerminalEnvelopeSHA256
		terminal := location.TerminalRecord{
			State: location.TerminalCreated, Operation: auOP(1), ReservationID: r.ReservationID, ObjectKind: location.ObjectActor,
			TerminalEnvelope: []byte("env"), TerminalEnvelopeSHA256: sum, ExpiresAt: auT0().Add(6 * time.Minute), StoreNow: auT0(),
		}
		require.Equal(t, &terminal, res.Terminal)
		f.clk.Advance(time.Minute)
		require.Equal(t, location.TerminalReadResult{Kind: location.KindFound, Record: &terminal}, f.readTerminal(auOP(1)))
		require.Equal(t, auUsage{Actors: auEntry{1, 0}}, f.U(f.NA))
	})
	t.Run("AUTH-048_AUTH-173_move_by_relocation_and_by_aggregate", func(t *testing.T) {
		f := newAuFix(t)
		s1 := f.AS("g1", auTarget(f.NA))
		s2 := f.AS("g2", auTarget(f.NA))
		require.Equal(t, location.RelocationReserveResult{Kind: location.KindReserved, Fence: "R1"}, f.REL(auRelReq("R1", auKS("g1"), s1, f.NA, f.NB, auVS("room", 1))))
		moved := f.CAS(auKS("g1"), s1.StoreVersion, auNewOwner(f.B, "R1", "moved"))
		require.Equal(t, location.KindStored, moved.Kind)
		require.Equal(t, location.StoreVersion("5"), moved.Stored.StoreVersion)
		require.Equal(t, int64(3), moved.Stored.AuthorityOwnerGeneration)
		require.Equal(t, f.B, moved.Stored.Owner)
		require.Equal(t, auSpots(1, 0), f.U(f.NA))
		require.Equal(t, auSpots(1, 0), f.U(f.NB))

		agg := f.aggReq("AG1", 1, auVS("room", 1), auPart{auKS("g2"), s2.StoreVersion, location.TransitionNewOwner})
		require.Equal(t, location.AggregatePrepareResult{Kind: location.KindPrepared, Fence: auFence("AG1", 1)}, f.prepare(agg))
		require.Equal(t, auSpots(1, 1), f.U(f.NB))
		require.Equal(t, location.KindCommitted, f.commitAgg("AG1", 1))
		g2 := f.current(auKS("g2"))
		require.Equal(t, location.StoreVersion("6"), g2.StoreVersion)
		require.Equal(t, int64(4), g2.AuthorityOwnerGeneration)
		require.Equal(t, []byte("agg-0"), g2.Payload)
		require.Equal(t, auUsage{}, f.U(f.NA))
		require.Equal(t, auSpots(2, 0), f.U(f.NB))
	})
	t.Run("AUTH-080_AUTH-095_entry-spot_claims_refuse_spot_reservations", func(t *testing.T) {
		f := newAuFix(t, auNAEntrySpot("lobby"))
		missing := f.missing()
		f.unchanged(func() {
			require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &missing},
				f.reserve(auReserveReq(location.ObjectUserSpot, "lobby", "room", auTarget(f.NA), auVS("room", 1))))
			require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &missing},
				f.reserve(auReserveReq(location.ObjectInstanceSpot, "lobby", "shard", auTarget(f.NA), auVI("shard"))))
		})
		f.RA("lobby", auTarget(f.NA))

		f.AS("lobby2", auTarget(f.NA))
		nc := auNode("node-c", f.B)
		id := "lobby2"
		nc.EntrySpotID = &id
		f.publish(nc, location.IntentNewClaim)
		f.unchanged(func() {
			require.Equal(t, location.ReserveResult{Kind: location.KindConflict, Current: &missing},
				f.reserve(auReserveReq(location.ObjectInstanceSpot, "lobby2", "shard", auTarget(f.NA), auVI("shard"))))
		})
	})
	t.Run("AUTH-092_overall_limit_0_is_unlimited_D-18", func(t *testing.T) {
		f := newAuFix(t, auNALimits(auLimits{0, 0, 10, 10, 10}))
		f.RA("c16", auTarget(f.NA))
		f.RS("c17", auTarget(f.NA))
		require.Equal(t, auUsage{Actors: auEntry{0, 1}, Spots: auEntry{0, 1}, Room: auEntry{0, 1}}, f.U(f.NA))
	})
	t.Run("AUTH-093_usage_is_per_lifecycle", func(t *testing.T) {
		f := newAuFix(t)
		f.AS("c17", auTarget(f.NA))
		d := f.NA
		d.LifecycleGeneration = 2
		f.publish(d, location.IntentTakeover)
		require.Equal(t, auUsage{}, f.U(d))
		f.RS("c18", auTarget(d))
		require.Equal(t, auSpots(0, 1), f.U(d))
	})
	t.Run("AUTH-196_no_re-check_after_admission", func(t *testing.T) {
		f := newAuFix(t)
		r5 := f.RS("u5", auTarget(f.NA))
		r6 := f.RS("u6", auTarget(f.NA))
		d := f.NA
		d.DescriptorRevision = 2
		d.PopulationCapacity = auPopulation(auLimits{10, 10, 1, 10, 10})
		f.publish(d, location.IntentRenew)
		require.Equal(t, location.KindCommitted, f.commit(auCommitReq("u5", r5, auTarget(f.NA))).Kind)
		require.Equal(t, location.KindCommitted, f.commit(auCommitReq("u6", r6, auTarget(f.NA))).Kind)
		require.Equal(t, location.KindPlacementCapacityExhausted,
			f.reserve(auReserveReq(location.ObjectUserSpot, "u7", "room", auTarget(f.NA), auVS("room", 1))).Kind)
	})
	t.Run("AUTH-197_every_exit_returns_capacity_exactly_once", func(t *testing.T) {
		f := newAuFix(t)
		start := f.U(f.NA)
		// reserve → abort
		r := f.RS("e1", auTarget(f.NA))
		require.Equal(t, location.KindAborted, f.abort(auAbortReq(location.ObjectUserSpot, "e1", r, auTarget(f.NA))))
		require.Equal(t, start, f.U(f.NA))
		// reserve → commit → delete
		s := f.AS("e2", auTarget(f.NA))
		require.Equal(t, location.KindDeleted, f.CAS(auKS("e2"), s.StoreVersion, auDelete()).Kind)
		require.Equal(t, start, f.U(f.NA))
		// reserve → rejected
		ra := f.RA("e3", auTarget(f.NA))
		require.Equal(t, location.KindRejected, f.complete(auCompleteReq("e3", ra, auTarget(f.NA), location.TerminalRejected, auPub(auOP(3), auT0().Add(time.Minute)))).Kind)
		require.Equal(t, start, f.U(f.NA))
		// reserve → commit → move → delete
		s = f.AS("e4", auTarget(f.NA))
		f.REL(auRelReq("R4", auKS("e4"), s, f.NA, f.NB, auVS("room", 1)))
		moved := f.CAS(auKS("e4"), s.StoreVersion, auNewOwner(f.B, "R4", "m"))
		require.Equal(t, location.KindDeleted, f.CAS(auKS("e4"), moved.Stored.StoreVersion, auDelete()).Kind)
		require.Equal(t, start, f.U(f.NA))
		require.Equal(t, auUsage{}, f.U(f.NB))
		f.s.mu.Lock()
		defer f.s.mu.Unlock()
		require.Empty(t, f.s.tables[rules.TableLedger], "no empty bucket is kept")
	})
}

func TestAuthorityValidation(t *testing.T) {
	f := newAuFix(t)
	s := f.AS("g3", auTarget(f.NA))
	r := f.RS("g4", auTarget(f.NA))
	ra := f.RA("g5", auTarget(f.NA))
	mib := 1 << 20
	big := make([]byte, mib+1)
	t.Run("AUTH-014_AUTH-029_key_text", func(t *testing.T) {
		f := f.with(t)
		for _, k := range []location.AuthorityKey{"", "a\x00b"} {
			f.invalid(location.ClassType, "authority.key_text", func() error { _, err := f.s.ReadAuthority(f.ctx, k); return err })
			f.invalid(location.ClassType, "authority.key_text", func() error {
				_, err := f.s.CompareExchangeAuthority(f.ctx, k, "1", auPreserve("p"))
				return err
			})
		}
	})
	t.Run("Q10_read_and_cas_accept_only_canonical_keys", func(t *testing.T) {
		f := f.with(t)
		f.invalid(location.ClassType, "", func() error { _, err := f.s.ReadAuthority(f.ctx, "not-a-zla1-key"); return err })
		f.invalid(location.ClassType, "", func() error {
			_, err := f.s.CompareExchangeAuthority(f.ctx, "zla1:a:1:%41", "1", auDelete())
			return err
		})
	})
	t.Run("AUTH-025_AUTH-026_mutation_shapes", func(t *testing.T) {
		f := f.with(t)
		fence := location.RelocationFence("f")
		a2 := location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: 7}
		zero := location.OwnerToken{OwnerID: "owner-a"}
		other := location.OwnerToken{OwnerID: "owner-x", LeaseGeneration: 7}
		for _, m := range []location.AuthorityMutation{
			{Kind: location.MutationPut, Transition: location.TransitionPreserve, TargetOwner: &f.B},
			{Kind: location.MutationPut, Transition: location.TransitionPreserve, RelocationFence: &fence},
			{Kind: location.MutationPut, Transition: location.TransitionNewOwner, TargetOwner: &f.B},
			{Kind: location.MutationPut, Transition: location.TransitionNewOwner, RelocationFence: &fence},
			auRebind(f.A, other, "p"), auRebind(f.A, f.A, "p"), auRebind(zero, a2, "p"), auRebind(a2, zero, "p"),
		} {
			for _, k := range []location.AuthorityKey{auKS("g3"), auKS("missing")} {
				f.invalid(location.ClassType, "authority.mutation_shape", func() error {
					_, err := f.s.CompareExchangeAuthority(f.ctx, k, s.StoreVersion, m)
					return err
				})
			}
		}
	})
	t.Run("AUTH-027_AUTH-028_payload_size_is_checked_first_D-02", func(t *testing.T) {
		f := f.with(t)
		for _, v := range []location.StoreVersion{s.StoreVersion, "stale"} {
			for _, m := range []location.AuthorityMutation{
				{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: big},
				auRestore(f.A, string(big)),
				{Kind: location.MutationRebindOwnerLease, ExpectedOwner: &f.A, TargetOwner: &location.OwnerToken{OwnerID: "owner-a", LeaseGeneration: 9}, Payload: big},
			} {
				f.invalid(location.ClassRange, "authority.payload", func() error {
					_, err := f.s.CompareExchangeAuthority(f.ctx, auKS("g3"), v, m)
					return err
				})
			}
		}
		empty := f.CAS(auKS("g3"), s.StoreVersion, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: []byte{}})
		require.Equal(t, location.KindStored, empty.Kind)
		require.Equal(t, []byte{}, empty.Stored.Payload)
		full := f.CAS(auKS("g3"), empty.Stored.StoreVersion, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: big[:mib]})
		require.Equal(t, location.KindStored, full.Kind)
		s = *full.Stored
	})
	t.Run("AUTH-062_scan_limit", func(t *testing.T) {
		f := f.with(t)
		for _, limit := range []int{0, -1, 1001} {
			f.invalid(location.ClassRange, "authority.scan_limit", func() error { _, err := f.s.ListAuthorities(f.ctx, "", "", limit); return err })
		}
		require.Equal(t, location.KindPage, f.list("", "", 1).Kind)
		require.Equal(t, location.KindPage, f.list("", "", 1000).Kind)
	})
	t.Run("AUTH-078_AUTH-079_reserve_inputs", func(t *testing.T) {
		f := f.with(t)
		base := func() location.ReserveRequest {
			return auReserveReq(location.ObjectUserSpot, "new", "room", auTarget(f.NA), auVS("room", 1))
		}
		for name, c := range map[string]struct {
			class location.ErrorClass
			code  string
			edit  func(*location.ReserveRequest)
		}{
			"id_empty":         {location.ClassType, "authority.identity_text", func(r *location.ReserveRequest) { r.Key.GlobalID = "" }},
			"id_nul":           {location.ClassType, "authority.identity_text", func(r *location.ReserveRequest) { r.Key.GlobalID = "a\x00b" }},
			"id_256_bytes":     {location.ClassRange, "authority.identity_length", func(r *location.ReserveRequest) { r.Key.GlobalID = strings.Repeat("x", 256) }},
			"id_128_e_acute":   {location.ClassRange, "authority.identity_length", func(r *location.ReserveRequest) { r.Key.GlobalID = strings.Repeat("é", 128) }},
			"stable_type":      {location.ClassType, "authority.intent_text", func(r *location.ReserveRequest) { r.Intent.StableType = "" }},
			"content_ref":      {location.ClassType, "authority.intent_text", func(r *location.ReserveRequest) { r.Intent.RequestContentReference = "" }},
			"digest_31":        {location.ClassType, "authority.receipt", func(r *location.ReserveRequest) { r.Intent.RequestSHA256 = auBytes(31, 1) }},
			"digest_33":        {location.ClassType, "authority.receipt", func(r *location.ReserveRequest) { r.Intent.RequestSHA256 = auBytes(33, 1) }},
			"size_negative":    {location.ClassType, "authority.receipt", func(r *location.ReserveRequest) { r.Intent.RequestEncodedSize = -1 }},
			"size_over":        {location.ClassType, "authority.receipt", func(r *location.ReserveRequest) { r.Intent.RequestEncodedSize = int64(mib) + 1 }},
			"payload_over":     {location.ClassRange, "authority.payload", func(r *location.ReserveRequest) { r.CreatingPayload = big }},
			"capacity_zero":    {location.ClassRange, "authority.capacity", func(r *location.ReserveRequest) { r.Capacity = location.CapacityVector{} }},
			"capacity_neg":     {location.ClassRange, "authority.capacity", func(r *location.ReserveRequest) { r.Capacity = location.CapacityVector{Actors: -1, Spots: 1} }},
			"spot_type_count0": {location.ClassRange, "authority.capacity", func(r *location.ReserveRequest) { r.Capacity.SpotType.Count = 0 }},
			"actors_2_31":      {location.ClassRange, "authority.capacity", func(r *location.ReserveRequest) { r.Capacity = location.CapacityVector{Actors: 1 << 31} }},
		} {
			t.Run(name, func(t *testing.T) {
				f := f.with(t)
				req := base()
				c.edit(&req)
				f.invalid(c.class, c.code, func() error { _, err := f.s.Reserve(f.ctx, req); return err })
			})
		}
		ok := base()
		ok.Key.GlobalID, ok.Intent.RequestEncodedSize, ok.CreatingPayload = "max-ok", int64(mib), big[:mib]
		require.Equal(t, location.KindReserved, f.reserve(ok).Kind)
	})
	t.Run("AUTH-098_AUTH-099_commit_inputs", func(t *testing.T) {
		f := f.with(t)
		c := auCommitReq("g5", ra, auTarget(f.NA))
		c.Key.Kind = location.ObjectActor
		f.invalid(location.ClassType, "authority.kind_path", func() error { _, err := f.s.Commit(f.ctx, c); return err })
		c = auCommitReq("g4", r, auTarget(f.NA))
		c.ReadyPayload = big
		f.invalid(location.ClassRange, "authority.payload", func() error { _, err := f.s.Commit(f.ctx, c); return err })
		require.Equal(t, location.AllocationReserved, f.current(auKA("g5")).Allocation.State)
	})
	t.Run("AUTH-112_to_AUTH-117_AUTH-228_completion_inputs", func(t *testing.T) {
		f := f.with(t)
		deadline := auT0().Add(time.Minute)
		base := func() location.CompleteCreationRequest {
			return auCompleteReq("g5", ra, auTarget(f.NA), location.TerminalCreated, auPub(auOP(50), deadline))
		}
		for name, c := range map[string]struct {
			class location.ErrorClass
			code  string
			edit  func(*location.CompleteCreationRequest)
		}{
			"AUTH-112_spot_key":      {location.ClassType, "authority.kind_path", func(r *location.CompleteCreationRequest) { r.Key.Kind = location.ObjectUserSpot }},
			"AUTH-113_ready_payload": {location.ClassRange, "authority.payload", func(r *location.CompleteCreationRequest) { r.Completion.ReadyPayload = big }},
			"AUTH-114_envelope_size": {location.ClassRange, "terminal.envelope", func(r *location.CompleteCreationRequest) { r.Completion.Terminal.TerminalEnvelope = big }},
			"AUTH-114_digest_31": {location.ClassRange, "terminal.envelope", func(r *location.CompleteCreationRequest) {
				r.Completion.Terminal.TerminalEnvelopeSHA256 = auBytes(31, 0)
			}},
			"AUTH-114_digest_other": {location.ClassType, "terminal.digest_mismatch", func(r *location.CompleteCreationRequest) {
				r.Completion.Terminal.TerminalEnvelopeSHA256 = auBytes(32, 0)
			}},
			"AUTH-115_rid_empty": {location.ClassType, "terminal.operation_rid", func(r *location.CompleteCreationRequest) { r.Completion.Terminal.Operation.SourceNodeRID = "" }},
			"AUTH-115_rid_nul":   {location.ClassType, "terminal.operation_rid", func(r *location.CompleteCreationRequest) { r.Completion.Terminal.Operation.SourceNodeRID = "s\x00" }},
			"AUTH-115_rid_256": {location.ClassType, "terminal.operation_rid", func(r *location.CompleteCreationRequest) {
				r.Completion.Terminal.Operation.SourceNodeRID = location.RoutingID(strings.Repeat("r", 256))
			}},
			"AUTH-115_generation_0": {location.ClassRange, "terminal.operation_ids", func(r *location.CompleteCreationRequest) { r.Completion.Terminal.Operation.SourceNodeGeneration = 0 }},
			"AUTH-115_id_zero": {location.ClassRange, "terminal.operation_ids", func(r *location.CompleteCreationRequest) {
				r.Completion.Terminal.Operation.OperationID = location.OperationID{}
			}},
			"AUTH-116_window_closed": {location.ClassRange, "terminal.window", func(r *location.CompleteCreationRequest) {
				r.Completion.Terminal.OperationDeadline = auT0().Add(-5 * time.Minute)
			}},
			"AUTH-117_reservation_id": {location.ClassType, "terminal.reservation_id", func(r *location.CompleteCreationRequest) { r.ReservationID = "" }},
			"AUTH-228_no_publication": {location.ClassType, "", func(r *location.CompleteCreationRequest) { r.Completion.Terminal = location.TerminalPublication{} }},
			"AUTH-228_rejected_no_pub": {location.ClassType, "", func(r *location.CompleteCreationRequest) {
				r.Completion = location.CreationCompletion{Kind: location.TerminalRejected}
			}},
		} {
			t.Run(name, func(t *testing.T) {
				f := f.with(t)
				req := base()
				c.edit(&req)
				f.invalid(c.class, c.code, func() error { _, err := f.s.CompleteCreation(f.ctx, req); return err })
			})
		}
		require.Equal(t, location.KindMissing, f.readTerminal(auOP(50)).Kind)
		for _, op := range []location.OperationIdentity{
			{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{High: 1}},
			{SourceNodeRID: "src", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: 1}},
		} {
			require.Equal(t, location.KindMissing, f.readTerminal(op).Kind)
		}
		res := f.complete(auCompleteReq("g5", ra, auTarget(f.NA), location.TerminalCreated, auPub(auOP(50), auT0().Add(-5*time.Minute+time.Millisecond))))
		require.Equal(t, location.KindCreated, res.Kind)
		require.Equal(t, auT0().Add(time.Millisecond), res.Terminal.ExpiresAt)
	})
	t.Run("AUTH-130_terminal_identity", func(t *testing.T) {
		f := f.with(t)
		for _, op := range []location.OperationIdentity{
			{SourceNodeRID: "", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: 1}},
			{SourceNodeRID: "s\x00", SourceNodeGeneration: 1, OperationID: location.OperationID{Low: 1}},
			{SourceNodeRID: location.RoutingID(strings.Repeat("r", 256)), SourceNodeGeneration: 1, OperationID: location.OperationID{Low: 1}},
			{SourceNodeRID: "src", SourceNodeGeneration: 0, OperationID: location.OperationID{Low: 1}},
			{SourceNodeRID: "src", SourceNodeGeneration: 1},
		} {
			f.invalid(0, "", func() error { _, err := f.s.ReadCreationTerminal(f.ctx, op); return err })
		}
	})
	t.Run("AUTH-138_invalid_key_first_D-22", func(t *testing.T) {
		f := f.with(t)
		rx := f.RS("x1", auTarget(f.NA))
		require.Equal(t, location.KindAborted, f.abort(auAbortReq(location.ObjectUserSpot, "x1", rx, auTarget(f.NA))))
		f.unchanged(func() {
			require.Equal(t, location.KindAlreadyAborted, f.abort(auAbortReq(location.ObjectActor, "other", rx, auTarget(f.NA))))
		})
		f.invalid(location.ClassRange, "authority.identity_length", func() error {
			_, err := f.s.AbortCreation(f.ctx, auAbortReq(location.ObjectUserSpot, "", rx, auTarget(f.NA)))
			return err
		})
	})
	t.Run("AUTH-143_relocation_inputs", func(t *testing.T) {
		f := f.with(t)
		for _, edit := range []func(*location.RelocationReservationRequest){
			func(r *location.RelocationReservationRequest) { r.ReservationID = "" },
			func(r *location.RelocationReservationRequest) { r.ReservationID = "a\x00" },
			func(r *location.RelocationReservationRequest) { r.StableType = "" },
			func(r *location.RelocationReservationRequest) { r.Capacity = location.CapacityVector{} },
		} {
			req := auRelReq("R1", auKS("g3"), s, f.NA, f.NB, auVS("room", 1))
			edit(&req)
			f.invalid(0, "", func() error { _, err := f.s.ReserveRelocationCapacity(f.ctx, req); return err })
		}
	})
	t.Run("AUTH-159_AUTH-164_AUTH-227_aggregate_inputs", func(t *testing.T) {
		f := f.with(t)
		p := auPart{auKS("g3"), s.StoreVersion, location.TransitionNewOwner}
		q := auPart{auKS("zz"), "1", location.TransitionNewOwner}
		for name, c := range map[string]struct {
			class location.ErrorClass
			code  string
			req   location.AggregatePrepareRequest
		}{
			"id_empty":          {location.ClassType, "aggregate.id", f.aggReq("", 1, auVS("room", 1), p)},
			"generation_0":      {location.ClassRange, "aggregate.shape", f.aggReq("A", 0, auVS("room", 1), p)},
			"no_participants":   {location.ClassRange, "aggregate.shape", f.aggReq("A", 1, auVS("room", 1))},
			"capacity_zero":     {location.ClassRange, "authority.capacity", f.aggReq("A", 1, location.CapacityVector{}, p)},
			"AUTH-164_preserve": {location.ClassRange, "authority.capacity", f.aggReq("A", 1, location.CapacityVector{}, auPart{auKS("g3"), s.StoreVersion, location.TransitionPreserve})},
			"duplicate":         {location.ClassType, "aggregate.participant_order", f.aggReq("A", 1, auVS("room", 1), p, p)},
			"not_sorted":        {location.ClassType, "aggregate.participant_order", f.aggReq("A", 1, auVS("room", 1), q, p)},
			"AUTH-227_payload": {location.ClassRange, "authority.payload", func() location.AggregatePrepareRequest {
				r := f.aggReq("A", 1, auVS("room", 1), p)
				r.Participants[0].AuthorityPayload = big
				return r
			}()},
			"digest_31": {location.ClassType, "aggregate.digest", func() location.AggregatePrepareRequest {
				r := f.aggReq("A", 1, auVS("room", 1), p)
				r.InventoryDigest = auBytes(31, 7)
				return r
			}()},
		} {
			t.Run(name, func(t *testing.T) {
				f := f.with(t)
				f.invalid(c.class, c.code, func() error { _, err := f.s.PrepareAggregate(f.ctx, c.req); return err })
			})
		}
	})
	t.Run("AUTH-168_two_spot_types_D-23", func(t *testing.T) {
		f := f.with(t)
		h := f.AS("h1", auTarget(f.NA), "hall")
		req := f.aggReq("AGH", 1, auVS("room", 2),
			auPart{auKS("g3"), s.StoreVersion, location.TransitionNewOwner},
			auPart{auKS("h1"), h.StoreVersion, location.TransitionNewOwner})
		f.invalid(location.ClassType, "aggregate.spot_types", func() error { _, err := f.s.PrepareAggregate(f.ctx, req); return err })
	})
	t.Run("SetAuthorityCounters_rejects_negative_values", func(t *testing.T) {
		f := f.with(t)
		neg := int64(-1)
		f.invalid(location.ClassRange, "", func() error { return f.s.SetAuthorityCounters(nil, &neg, nil) })
	})
}
