package rules_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// TestScanRevisionBumps checks which authority decisions bump the scan
// revision (Plan.ScanRevisionBumped): exactly those that change an
// authority row. A store expires the cursors of ListAuthorities on a bump
// (memstore) or reads a snapshot (etcd); conformance checks the effect.
func TestScanRevisionBumps(t *testing.T) {
	type setup struct {
		f    *authF
		S    *location.AuthoritySnapshot // active row s1 on NA
		R    location.ReserveResult      // reserved spot s2 on NA
		RA   location.ReserveResult      // reserved actor a1 on NA
		A2   location.OwnerToken         // owner-a's next lease, published on NA
		aggS *location.AuthoritySnapshot // active row g1 on NA, prepared in AG1
	}
	newSetup := func(t *testing.T) setup {
		f := newAuthF(t)
		s := setup{f: f, S: f.AS("s1", fixture.Target(f.NA)), R: f.RS("s2", fixture.Target(f.NA)), RA: f.RA("a1", fixture.Target(f.NA))}
		s.aggS = f.AS("g1", fixture.Target(f.NA))
		f.prepared(fixture.AGG(f.NB, "AG1", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), s.aggS)}, fixture.VS("room")))
		f.REL("R1", fixture.KS("s1"), s.S)
		return s
	}
	TA := func(s setup) location.CreationTarget { return fixture.Target(s.f.NA) }
	pub := fixture.P(fixture.OP(1), fixture.T0().Add(time.Minute))
	for _, c := range []struct {
		name   string
		bumped bool
		decide func(s setup, tx *rules.Tx) error
	}{
		{"reserve", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.Reserve(tx, fixture.SpotRequest(location.ObjectUserSpot, "s3", TA(s), "room"))
			return err
		}},
		{"commit", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.Commit(tx, fixture.CommitRequest("s2", s.R, TA(s)))
			return err
		}},
		{"abort", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.AbortCreation(tx, fixture.AbortRequest(location.ObjectUserSpot, "s2", s.R, TA(s)))
			return err
		}},
		{"complete created", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.CompleteCreation(tx, fixture.CompleteRequest("a1", s.RA, TA(s), location.TerminalCreated, pub))
			return err
		}},
		{"complete rejected", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.CompleteCreation(tx, fixture.CompleteRequest("a1", s.RA, TA(s), location.TerminalRejected, pub))
			return err
		}},
		{"preserve", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.CompareExchangeAuthority(tx, fixture.KS("s1"), s.S.StoreVersion, fixture.Preserve("p"))
			return err
		}},
		{"restore", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.CompareExchangeAuthority(tx, fixture.KS("s1"), s.S.StoreVersion, fixture.Restore("p", s.f.A))
			return err
		}},
		{"delete", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.CompareExchangeAuthority(tx, fixture.KS("s1"), s.S.StoreVersion, fixture.Delete())
			return err
		}},
		{"newOwner", true, func(s setup, tx *rules.Tx) error {
			_, err := rules.CompareExchangeAuthority(tx, fixture.KS("s1"), s.S.StoreVersion, fixture.NewOwner("m", s.f.B, "R1"))
			return err
		}},
		{"commitAggregate", true, func(_ setup, tx *rules.Tx) error {
			_, err := rules.CommitAggregate(tx, location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 1})
			return err
		}},
		{"RemoveAuthorityRow", true, func(_ setup, tx *rules.Tx) error { return rules.RemoveAuthorityRow(tx, fixture.KS("s1")) }},
		{"reserveRelocationCapacity", false, func(s setup, tx *rules.Tx) error {
			_, err := rules.ReserveRelocationCapacity(tx, fixture.RelRequest("R2", fixture.KS("s1"), s.S, s.f.NA, s.f.NB, fixture.VS("room")))
			return err
		}},
		{"abortRelocationCapacity", false, func(_ setup, tx *rules.Tx) error {
			_, err := rules.AbortRelocationCapacity(tx, "R1")
			return err
		}},
		{"prepareAggregate", false, func(s setup, tx *rules.Tx) error {
			_, err := rules.PrepareAggregate(tx, fixture.AGG(s.f.NB, "AG2", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("s1"), s.S)}, fixture.VS("room")))
			return err
		}},
		{"abortAggregate", false, func(_ setup, tx *rules.Tx) error {
			_, err := rules.AbortAggregate(tx, location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 1})
			return err
		}},
		{"readAuthority", false, func(_ setup, tx *rules.Tx) error { rules.ReadAuthority(tx, fixture.KS("s1")); return nil }},
		{"a conflicting preserve", false, func(_ setup, tx *rules.Tx) error {
			_, err := rules.CompareExchangeAuthority(tx, fixture.KS("s1"), "stale", fixture.Preserve("p"))
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSetup(t)
			tx := rules.NewTx(s.f.src)
			require.NoError(t, c.decide(s, tx))
			p := tx.Plan()
			require.Equal(t, c.bumped, p.ScanRevisionBumped, "%s: writes %d", c.name, len(p.Writes))
		})
	}
}

// TestAuthorityRecords checks the rules' own records: a relocation
// reservation adopted by an aggregate stays prepared and names the
// aggregate; a prepared aggregate keeps a copy of the request; a read of a
// key that is not a canonical authority key finds nothing (the store
// rejects such keys before the rules see them); ledger buckets are kept per
// node lifecycle and deleted when empty.
func TestAuthorityRecords(t *testing.T) {
	t.Run("an adopted relocation reservation names its aggregate", func(t *testing.T) {
		f := newAuthF(t)
		S1, S2 := f.AS("g1", fixture.Target(f.NA)), f.AS("g2", fixture.Target(f.NA))
		rel := fixture.RelRequest("AG2", fixture.KS("g1"), S1, f.NA, f.NB, fixture.VSpots(location.ObjectUserSpot, "room", 2))
		require.Equal(t, location.KindReserved, decided(f, func(tx *rules.Tx) (location.RelocationReserveResult, error) {
			return rules.ReserveRelocationCapacity(tx, rel)
		}).Kind)
		f.prepared(fixture.AGG(f.NB, "AG2", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("g2"), S2)},
			fixture.VSpots(location.ObjectUserSpot, "room", 2)))
		rec := storedValue[rules.RelocationRecord](f, rules.TableRelocations, "AG2")
		require.Equal(t, rules.RecordPrepared, rec.State)
		require.Equal(t, &location.AggregateFence{AggregateID: "AG2", AggregateGeneration: 1}, rec.Aggregate)
	})
	t.Run("a prepared aggregate keeps a copy of the request", func(t *testing.T) {
		f := newAuthF(t)
		S1 := f.AS("g1", fixture.Target(f.NA))
		req := fixture.AGG(f.NB, "AG1", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S1)}, fixture.VS("room"))
		f.prepared(req)
		req.Participants[0].AuthorityPayload[0] = 'X'
		req.InventoryDigest[0] = 0
		require.Equal(t, location.KindCommitted, decided(f, func(tx *rules.Tx) (location.ResultKind, error) {
			return rules.CommitAggregate(tx, location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 1})
		}))
		require.Equal(t, []byte("agg-0"), f.read(fixture.KS("g1")).Snapshot.Payload)
	})
	t.Run("a non-canonical key reads as missing", func(t *testing.T) {
		f := newAuthF(t)
		f.unchanged(func() {
			require.Equal(t, location.AuthorityReadResult{Kind: location.KindMissing, StoreNow: fixture.T0()}, f.read("not-a-zla1-key"))
		})
	})
	t.Run("ledger usage is kept per node lifecycle", func(t *testing.T) {
		f := newAuthF(t)
		f.AS("c17", fixture.Target(f.NA))
		restarted := f.NA
		restarted.LifecycleGeneration = 2
		f.publish(restarted)
		f.RS("c18", fixture.Target(restarted))
		one := rules.LedgerEntry{Active: 1}
		require.Equal(t, authUsage{Spots: one, Room: one}, f.U(f.NA), "lifecycle 1 keeps its usage")
		one = rules.LedgerEntry{Reserved: 1}
		require.Equal(t, authUsage{Spots: one, Room: one}, f.U(restarted), "lifecycle 2 starts from its own")
	})
	t.Run("an empty ledger bucket is deleted", func(t *testing.T) {
		f := newAuthF(t)
		S := f.AS("d1", fixture.Target(f.NA))
		require.Equal(t, location.KindDeleted, decided(f, func(tx *rules.Tx) (location.CompareExchangeResult, error) {
			return rules.CompareExchangeAuthority(tx, fixture.KS("d1"), S.StoreVersion, fixture.Delete())
		}).Kind)
		require.Empty(t, f.src.tables[rules.TableLedger])
	})
}

// TestLedgerUnderflowIsInternal checks D-12 (fixed): a decision whose ledger
// would go negative fails with ErrInternal and nothing is applied, not even
// the counters.
func TestLedgerUnderflowIsInternal(t *testing.T) {
	for name, c := range map[string]func(f *authF) func() error{
		"delete of a row whose bucket is gone": func(f *authF) func() error {
			S := f.AS("u1", fixture.Target(f.NA))
			delete(f.src.tables[rules.TableLedger], bucketKey(f.NA, rules.BucketSpot, ""))
			return func() error {
				_, err := decideOn(f.src, func(tx *rules.Tx) (location.CompareExchangeResult, error) {
					return rules.CompareExchangeAuthority(tx, fixture.KS("u1"), S.StoreVersion, fixture.Delete())
				})
				return err
			}
		},
		"commitAggregate onto a short reserved bucket": func(f *authF) func() error {
			S1 := f.AS("g1", fixture.Target(f.NA))
			S2 := f.AS("g2", fixture.Target(f.NA))
			f.prepared(fixture.AGG(f.NB, "AG1", 1, []fixture.Part{fixture.NewOwnerPart(fixture.KS("g1"), S1), fixture.NewOwnerPart(fixture.KS("g2"), S2)},
				fixture.VSpots(location.ObjectUserSpot, "room", 2)))
			// The last delta of the commit would underflow after the
			// participants' source deltas.
			f.src.put(rules.TableLedger, bucketKey(f.NB, "user_spot", "room"), rules.LedgerEntry{Reserved: 1})
			return func() error {
				_, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) {
					return rules.CommitAggregate(tx, location.AggregateFence{AggregateID: "AG1", AggregateGeneration: 1})
				})
				return err
			}
		},
		"RemoveAuthorityRow of a reservation whose bucket is gone": func(f *authF) func() error {
			f.RS("o5", fixture.Target(f.NA))
			delete(f.src.tables[rules.TableLedger], bucketKey(f.NA, "user_spot", "room"))
			return func() error {
				_, err := decideOn(f.src, func(tx *rules.Tx) (struct{}, error) {
					return struct{}{}, rules.RemoveAuthorityRow(tx, fixture.KS("o5"))
				})
				return err
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newAuthF(t)
			decide := c(f)
			f.unchanged(func() { require.ErrorIs(t, decide(), location.ErrInternal) })
		})
	}
}

// TestCreationRules checks creation rules that no catalogue scenario pins:
// an overall limit counts existing usage even for a request that does not
// use it, an expired terminal's identity may be published again, a
// completion kind outside created/rejected/failed is invalid, and the
// retention boundary of ExpiredCreationTerminal.
func TestCreationRules(t *testing.T) {
	t.Run("an overall limit counts existing usage even for a zero request", func(t *testing.T) {
		// The reference's hook compares every overall limit, also one the
		// request does not use: a node over its (lowered) spot limit takes
		// no actor either.
		f := newAuthF(t)
		f.AS("o1", fixture.Target(f.NA))
		f.AS("o2", fixture.Target(f.NA))
		d := f.NA
		d.DescriptorRevision = 2
		d.PopulationCapacity = fixture.Population(fixture.Limits{Actors: 10, Spots: 1, Room: 10, Hall: 10, Shard: 10})
		f.publish(d)
		res := decided(f, func(tx *rules.Tx) (location.ReserveResult, error) {
			return rules.Reserve(tx, fixture.ActorRequest("x", fixture.Target(f.NA)))
		})
		require.Equal(t, location.KindPlacementCapacityExhausted, res.Kind)
	})
	t.Run("an expired terminal's identity may be published again", func(t *testing.T) {
		f := newAuthF(t)
		f.AA("a1", fixture.Target(f.NA), 1)
		f.src.now = fixture.T0().Add(6 * time.Minute)
		f.claim("owner-a", 1)
		R2 := f.RA("a7", fixture.Target(f.NA))
		req := fixture.CompleteRequest("a7", R2, fixture.Target(f.NA), location.TerminalFailed, fixture.P(fixture.OP(1), f.src.now.Add(time.Minute)))
		res := decided(f, func(tx *rules.Tx) (location.CompleteCreationResult, error) { return rules.CompleteCreation(tx, req) })
		require.Equal(t, location.KindFailed, res.Kind)
		read := decided(f, func(tx *rules.Tx) (location.TerminalReadResult, error) {
			return rules.ReadCreationTerminal(tx, fixture.OP(1)), nil
		})
		require.Equal(t, res.Terminal, read.Record)
	})
	t.Run("an unknown completion kind is invalid", func(t *testing.T) {
		f := newAuthF(t)
		R := f.RA("a9", fixture.Target(f.NA))
		req := fixture.CompleteRequest("a9", R, fixture.Target(f.NA), "aborted", fixture.P(fixture.OP(7), fixture.T0().Add(time.Minute)))
		f.unchanged(func() {
			_, err := decideOn(f.src, func(tx *rules.Tx) (location.CompleteCreationResult, error) { return rules.CompleteCreation(tx, req) })
			require.ErrorIs(t, err, location.ErrInvalidArgument)
		})
	})
	t.Run("a terminal expires at its retention boundary", func(t *testing.T) {
		f := newAuthF(t)
		res := f.AA("a1", fixture.Target(f.NA), 1)
		f.src.now = res.Terminal.ExpiresAt.Add(-time.Millisecond)
		require.False(t, rules.ExpiredCreationTerminal(rules.NewTx(f.src), fixture.OP(1)))
		f.src.now = res.Terminal.ExpiresAt
		require.True(t, rules.ExpiredCreationTerminal(rules.NewTx(f.src), fixture.OP(1)))
		require.False(t, rules.ExpiredCreationTerminal(rules.NewTx(f.src), fixture.OP(2)), "an unknown identity is not expired")
	})
}

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
