package rules_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// The authority decisions on the rules' own tables, through authF
// (authority_fixture_test.go): which decisions bump the scan revision, the
// removal of an owner's rows, and seeded random sequences that check the
// invariants after every step.

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

// TestAuthorityInvariants runs seeded random sequences of every authority
// decision on a few keys and checks the invariants of 04 §3 after each step:
// INV-1 (versions fresh per key and store-wide), INV-3, INV-4, INV-5, INV-6,
// INV-7 (ledger identity), INV-10 (failures change nothing), INV-11, INV-12,
// INV-15, and that reservation terminals never change once written. The
// catalogue's property scenarios (AUTH-222 … AUTH-225) check these through a
// store in conformance; here they are checked on the rules' own tables,
// which a store does not show.
func TestAuthorityInvariants(t *testing.T) {
	for seed := range uint64(25) {
		t.Run(fmt.Sprintf("seed_%d", seed), func(t *testing.T) {
			w := newInvariantWorld(t, seed)
			for step := range 400 {
				w.step(step)
			}
			require.Positive(t, w.successes, "the run exercised successful writes")
		})
	}
}

// invariantWorld is one random run and what the checks remember.
type invariantWorld struct {
	t   *testing.T
	f   *authF
	rng *rand.Rand

	reservations []invReservation
	nextLease    int64
	successes    int

	// history for the checks
	versionsByKey map[string]map[location.StoreVersion]bool
	allVersions   map[location.StoreVersion]bool
	objectGens    map[string]int64 // highest object generation per key
	reservationID map[string]bool
	recordStates  map[string]string // relocation and aggregate records
	resTerminals  map[string]string
	opTerminals   map[string]bool
}

// invReservation is a reservation the run may try to finish.
type invReservation struct {
	kind location.ObjectKind
	id   string
	res  location.ReserveResult
	tgt  location.CreationTarget
}

func newInvariantWorld(t *testing.T, seed uint64) *invariantWorld {
	limits := fixture.Limits{Actors: 3, Spots: 4, Room: 3, Hall: 2, Shard: 0}
	w := &invariantWorld{
		t: t, f: newAuthF(t, withLimits("NA", limits), withLimits("NB", limits)),
		rng: rand.New(rand.NewPCG(seed, 0x5eed)), nextLease: 10,
		versionsByKey: map[string]map[location.StoreVersion]bool{}, allVersions: map[location.StoreVersion]bool{},
		objectGens: map[string]int64{}, reservationID: map[string]bool{}, recordStates: map[string]string{},
		resTerminals: map[string]string{}, opTerminals: map[string]bool{},
	}
	w.f.src.leases["owner-a"] = authLease{generation: 1, expiresAt: fixture.T0().Add(time.Hour)}
	w.f.src.leases["owner-b"] = authLease{generation: 2, expiresAt: fixture.T0().Add(time.Hour)}
	return w
}

// The ids a run draws from.
func invSpotIDs() []string  { return []string{"s0", "s1", "s2", "s3"} }
func invActorIDs() []string { return []string{"a0", "a1", "a2"} }
func invRelIDs() []string   { return []string{"R0", "R1", "AG0"} }
func invAggIDs() []string   { return []string{"AG0", "AG1"} }

func (w *invariantWorld) pick(n int) int { return w.rng.IntN(n) }

func pickOf[T any](w *invariantWorld, xs []T) T { return xs[w.pick(len(xs))] }

// node returns NA or NB as currently published.
func (w *invariantWorld) node() location.MeshNodeDescriptor {
	d := pickOf(w, []location.MeshNodeDescriptor{w.f.NA, w.f.NB})
	key := d.Key()
	rec, ok := w.f.src.Get(location.TableMeshNodes, rules.MeshNodeKey(key))
	require.True(w.t, ok)
	return rec.Value.(location.MeshNodeDescriptor)
}

// rows returns the current authority rows.
func (w *invariantWorld) rows() map[string]rules.AuthorityRow {
	out := map[string]rules.AuthorityRow{}
	for k, r := range w.f.src.tables[rules.TableAuthority] {
		out[k] = r.Value.(rules.AuthorityRow)
	}
	return out
}

// rowKey picks an existing row key (or a random known key).
func (w *invariantWorld) rowKey() location.AuthorityKey {
	keys := slices.Sorted(maps.Keys(w.rows()))
	if len(keys) == 0 || w.pick(6) == 0 {
		return fixture.KS(pickOf(w, invSpotIDs()))
	}
	return location.AuthorityKey(pickOf(w, keys))
}

// version returns a key's current version, sometimes a stale one.
func (w *invariantWorld) version(k location.AuthorityKey) location.StoreVersion {
	if row, ok := w.rows()[string(k)]; ok && w.pick(5) != 0 {
		return row.StoreVersion
	}
	return location.StoreVersion(fmt.Sprint(w.pick(int(w.f.src.version) + 2)))
}

func (w *invariantWorld) capacity() location.CapacityVector {
	switch w.pick(4) {
	case 0:
		return fixture.VA()
	case 1:
		return fixture.VS("room")
	case 2:
		return fixture.VS("hall")
	default:
		return fixture.VSpots(location.ObjectUserSpot, "room", 2)
	}
}

// step runs one random operation and checks the invariants.
func (w *invariantWorld) step(step int) {
	t := w.t
	before := w.f.src.state()
	beforeRows := w.rows()
	name, ok, err := w.operation()
	if _, invalid := location.AsInputError(err); invalid {
		ok, err = false, nil // invalid input (a random rebind, D-23): must change nothing
	}
	require.NoError(t, err, "step %d %s", step, name)
	if ok {
		w.successes++
	} else {
		require.Equal(t, before, w.f.src.state(), "INV-10: step %d %s failed but changed state", step, name)
	}
	w.check(step, name, beforeRows)
}

// operation performs one random call; ok reports a success result.
func (w *invariantWorld) operation() (string, bool, error) {
	f := w.f
	switch w.pick(16) {
	case 0, 1: // reserve
		n := w.node()
		tgt := fixture.Target(n)
		if w.pick(8) == 0 {
			tgt.NodeLifecycleGeneration++
		}
		kind, id, st, v := location.ObjectUserSpot, pickOf(w, invSpotIDs()), pickOf(w, []string{"room", "hall"}), fixture.VS("room")
		switch w.pick(3) {
		case 0:
			kind, id, st, v = location.ObjectActor, pickOf(w, invActorIDs()), "player", fixture.VA()
		case 1:
			v = fixture.VS(st)
		default:
			kind, st, v = location.ObjectInstanceSpot, "shard", fixture.VI("shard")
		}
		res, err := decideOn(f.src, func(tx *rules.Tx) (location.ReserveResult, error) {
			req := fixture.SpotRequest(kind, id, tgt, st)
			req.Capacity = v
			return rules.Reserve(tx, req)
		})
		if err == nil && res.Kind == location.KindReserved {
			require.False(w.t, w.reservationID[res.ReservationID], "INV-15: reservation id %s issued twice", res.ReservationID)
			require.True(w.t, location.IsUUIDLower(res.ReservationID))
			w.reservationID[res.ReservationID] = true
			w.reservations = append(w.reservations, invReservation{kind, id, res, tgt})
		}
		return "reserve", err == nil && res.Kind == location.KindReserved, err
	case 2, 3: // commit, completeCreation or abort of a known reservation
		if len(w.reservations) == 0 {
			return "none", false, nil
		}
		r := pickOf(w, w.reservations)
		switch {
		case w.pick(4) == 0:
			k, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) {
				return rules.AbortCreation(tx, fixture.AbortRequest(r.kind, r.id, r.res, r.tgt))
			})
			return "abort", k == location.KindAborted, err
		case r.kind == location.ObjectActor:
			kind := pickOf(w, []location.TerminalState{location.TerminalCreated, location.TerminalCreated, location.TerminalRejected, location.TerminalFailed})
			p := fixture.P(fixture.OP(uint64(w.pick(4)+1)), f.src.now.Add(time.Duration(w.pick(60))*time.Second-4*time.Minute))
			res, err := decideOn(f.src, func(tx *rules.Tx) (location.CompleteCreationResult, error) {
				return rules.CompleteCreation(tx, fixture.CompleteRequest(r.id, r.res, r.tgt, kind, p))
			})
			if res.Kind == location.KindAlreadyCompleted {
				require.Equal(w.t, p.Operation, res.Terminal.Operation, "alreadyCompleted answers the same identity")
			}
			return "complete", err == nil && res.Kind == location.ResultKind(kind), err
		default:
			c := fixture.CommitRequest(r.id, r.res, r.tgt)
			c.Key.Kind = r.kind
			res, err := decideOn(f.src, func(tx *rules.Tx) (location.CommitResult, error) { return rules.Commit(tx, c) })
			return "commit", res.Kind == location.KindCommitted, err
		}
	case 4, 5, 6: // compare-exchange
		k := w.rowKey()
		v := w.version(k)
		row, exists := w.rows()[string(k)]
		owner := f.A
		if exists {
			owner = row.Owner
		}
		lease, _ := f.src.LiveLease(owner.OwnerID)
		m := pickOf(w, []location.AuthorityMutation{
			fixture.Preserve("p"), fixture.Delete(), fixture.Restore("r", owner),
			fixture.Rebind("b", owner, location.OwnerToken{OwnerID: owner.OwnerID, LeaseGeneration: lease}),
			fixture.NewOwner("m", pickOf(w, []location.OwnerToken{f.A, f.B, w.nodeOwner(f.NB)}), pickOf(w, invRelIDs())),
		})
		if m.Kind == location.MutationRebindOwnerLease && *m.TargetOwner == *m.ExpectedOwner {
			m = fixture.Preserve("p")
		}
		res, err := decideOn(f.src, func(tx *rules.Tx) (location.CompareExchangeResult, error) {
			return rules.CompareExchangeAuthority(tx, k, v, m)
		})
		if res.Kind == location.KindDeleted {
			w.noteVersion(string(k), res.DeletedVersion)
		}
		return "cas " + string(m.Kind), res.Kind == location.KindStored || res.Kind == location.KindDeleted, err
	case 7, 8: // reserve relocation capacity
		k := w.rowKey()
		row, exists := w.rows()[string(k)]
		from, to := w.f.NA, w.node()
		kind, st, v := location.ObjectUserSpot, "room", w.capacity()
		if exists {
			from.RID, from.LifecycleGeneration = row.Allocation.Descriptor.RID, row.Allocation.DescriptorLifecycleGeneration
			from.OwnerID, from.LeaseGeneration = row.Owner.OwnerID, row.Owner.LeaseGeneration
			kind, st = row.Allocation.ObjectKind, row.Allocation.StableType
			if w.pick(2) == 0 {
				v = row.Allocation.Capacity
			}
		}
		req := fixture.RelRequest(pickOf(w, invRelIDs()), k, &location.AuthoritySnapshot{StoreVersion: w.version(k)}, from, to, v)
		req.ObjectKind, req.StableType = kind, st
		res, err := decideOn(f.src, func(tx *rules.Tx) (location.RelocationReserveResult, error) {
			return rules.ReserveRelocationCapacity(tx, req)
		})
		return "rel", res.Kind == location.KindReserved, err
	case 9:
		k, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) {
			return rules.AbortRelocationCapacity(tx, location.RelocationFence(pickOf(w, invRelIDs())))
		})
		return "abortRel", k == location.KindAborted, err
	case 10, 11: // prepare aggregate
		rows := w.rows()
		var keys []string
		for _, k := range slices.Sorted(maps.Keys(rows)) {
			if w.pick(2) == 0 {
				keys = append(keys, k)
			}
		}
		var parts []fixture.Part
		var sum location.CapacityVector
		for _, k := range keys {
			p := fixture.Part{Key: location.AuthorityKey(k), Version: w.version(location.AuthorityKey(k)), Transition: location.TransitionNewOwner}
			if w.pick(3) == 0 {
				p.Transition = location.TransitionPreserve
			} else if r, ok := rows[k]; ok {
				sum.Actors += r.Allocation.Capacity.Actors
				sum.Spots += r.Allocation.Capacity.Spots
				if st := r.Allocation.Capacity.SpotType; st != nil {
					c := *st
					if sum.SpotType != nil {
						c.Count += sum.SpotType.Count
					}
					sum.SpotType = &c
				}
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 || (sum.Actors == 0 && sum.Spots == 0 && sum.SpotType == nil) {
			return "prepare-empty", false, nil
		}
		if w.pick(6) == 0 {
			sum = w.capacity()
		}
		req := fixture.AGG(w.node(), pickOf(w, invAggIDs()), int64(w.pick(2)+1), parts, sum)
		res, err := decideOn(f.src, func(tx *rules.Tx) (location.AggregatePrepareResult, error) { return rules.PrepareAggregate(tx, req) })
		return "prepare", res.Kind == location.KindPrepared, err
	case 12:
		fence := location.AggregateFence{AggregateID: pickOf(w, invAggIDs()), AggregateGeneration: int64(w.pick(2) + 1)}
		if stored := slices.Sorted(maps.Keys(f.src.tables[rules.TableAggregates])); len(stored) > 0 && w.pick(4) != 0 {
			r := f.src.tables[rules.TableAggregates][pickOf(w, stored)].Value.(rules.AggregateRecord).Request
			fence = location.AggregateFence{AggregateID: r.AggregateID, AggregateGeneration: r.AggregateGeneration}
		}
		if w.pick(2) == 0 {
			k, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) { return rules.CommitAggregate(tx, fence) })
			return "commitAgg", k == location.KindCommitted, err
		}
		k, err := decideOn(f.src, func(tx *rules.Tx) (location.ResultKind, error) { return rules.AbortAggregate(tx, fence) })
		return "abortAgg", k == location.KindAborted, err
	case 13: // removeAllByOwner's authority part
		owner := pickOf(w, []location.OwnerToken{f.A, f.B, w.nodeOwner(f.NA), w.nodeOwner(f.NB)})
		var n int
		rows := w.rows()
		_, err := decideOn(f.src, func(tx *rules.Tx) (struct{}, error) {
			for _, k := range slices.Sorted(maps.Keys(rows)) {
				if rows[k].Owner == owner {
					n++
					if err := rules.RemoveAuthorityRow(tx, location.AuthorityKey(k)); err != nil {
						return struct{}{}, err
					}
				}
			}
			return struct{}{}, nil
		})
		return "removeAll", n > 0, err
	case 14: // environment: leases and nodes
		d := w.node()
		switch w.pick(4) {
		case 0:
			f.release(d.OwnerID)
		case 1:
			w.nextLease++
			f.src.leases[d.OwnerID] = authLease{generation: w.nextLease, expiresAt: f.src.now.Add(time.Hour)}
			d.LeaseGeneration = w.nextLease
			f.publish(d)
		case 2:
			d.State = pickOf(w, []location.RuntimeState{location.StateServing, location.StateDraining})
			f.publish(d)
		default:
			d.LifecycleGeneration = int64(w.pick(2) + 1)
			f.publish(d)
		}
		return "environment", true, nil
	default:
		f.src.now = f.src.now.Add(time.Duration(w.pick(90)) * time.Second)
		return "clock", true, nil
	}
}

// nodeOwner is the owner token a node is currently published with.
func (w *invariantWorld) nodeOwner(d location.MeshNodeDescriptor) location.OwnerToken {
	rec, _ := w.f.src.Get(location.TableMeshNodes, rules.MeshNodeKey(d.Key()))
	cur := rec.Value.(location.MeshNodeDescriptor)
	return cur.Owner()
}

// noteVersion records a version issued for key (INV-1).
func (w *invariantWorld) noteVersion(key string, v location.StoreVersion) {
	require.False(w.t, w.allVersions[v], "INV-1: version %s issued twice", v)
	w.allVersions[v] = true
	if w.versionsByKey[key] == nil {
		w.versionsByKey[key] = map[location.StoreVersion]bool{}
	}
	w.versionsByKey[key][v] = true
}

// check verifies the invariants after a step.
func (w *invariantWorld) check(step int, name string, beforeRows map[string]rules.AuthorityRow) {
	t := w.t
	src := w.f.src
	rows := w.rows()
	want := map[string]rules.LedgerEntry{}
	add := func(d location.MeshNodeKey, lc int64, v location.CapacityVector, active bool) {
		bump := func(b rules.Bucket, n int64) {
			e := want[b.Key()]
			if active {
				e.Active += n
			} else {
				e.Reserved += n
			}
			want[b.Key()] = e
		}
		if v.Actors != 0 {
			bump(rules.Bucket{Descriptor: d, Lifecycle: lc, Name: rules.BucketActor}, v.Actors)
		}
		if v.Spots != 0 {
			bump(rules.Bucket{Descriptor: d, Lifecycle: lc, Name: rules.BucketSpot}, v.Spots)
		}
		if v.SpotType != nil {
			bump(rules.Bucket{Descriptor: d, Lifecycle: lc, Name: string(v.SpotType.ObjectKind), StableType: v.SpotType.StableType}, v.SpotType.Count)
		}
	}
	for k, row := range rows {
		a := row.Allocation
		// INV-6
		require.Equal(t, a.State == location.AllocationReserved, row.PendingCreation != nil, "INV-6 %s", k)
		if row.PendingCreation != nil {
			require.Equal(t, row.Creation.ReservationID, row.PendingCreation.ReservationID, "INV-6 %s", k)
		}
		add(a.Descriptor, a.DescriptorLifecycleGeneration, a.Capacity, a.State == location.AllocationActive)
		prev, existed := beforeRows[k]
		if existed {
			// INV-5: never active → reserved.
			require.False(t, prev.Allocation.State == location.AllocationActive && a.State == location.AllocationReserved, "INV-5 %s", k)
			// INV-3: fixed for the life of a row.
			require.Equal(t, prev.ObjectGeneration, row.ObjectGeneration, "INV-3 %s", k)
			// INV-4: only increases; a new owner id means a new generation.
			require.GreaterOrEqual(t, row.AuthorityOwnerGeneration, prev.AuthorityOwnerGeneration, "INV-4 %s", k)
			if prev.Owner.OwnerID != row.Owner.OwnerID {
				require.Greater(t, row.AuthorityOwnerGeneration, prev.AuthorityOwnerGeneration, "INV-4 %s", k)
			}
			if prev.StoreVersion != row.StoreVersion {
				w.noteVersion(k, row.StoreVersion)
			} else {
				require.Equal(t, prev, row, "INV-1: %s changed without a new version at step %d %s", k, step, name)
			}
		} else {
			require.Equal(t, location.AllocationReserved, a.State, "INV-5: rows are born reserved (%s)", k)
			require.Positive(t, row.ObjectGeneration)
			require.Greater(t, row.ObjectGeneration, w.objectGens[k], "INV-3 re-created %s", k)
			w.objectGens[k] = row.ObjectGeneration
			w.noteVersion(k, row.StoreVersion)
		}
	}
	for _, r := range src.tables[rules.TableRelocations] {
		rec := r.Value.(rules.RelocationRecord)
		w.forward("rel/"+rec.Request.ReservationID, rec.State)
		if rec.State == rules.RecordReserved || rec.State == rules.RecordPrepared {
			add(rec.Request.TargetDescriptor, rec.Request.TargetNodeLifecycleGeneration, rec.Request.Capacity, false)
		}
	}
	for k, r := range src.tables[rules.TableAggregates] {
		rec := r.Value.(rules.AggregateRecord)
		w.forward("agg/"+k, rec.State)
		if rec.State == rules.RecordPrepared && rec.CapacityReservationID == "" {
			add(rec.Request.TargetDescriptor, rec.Request.TargetDescriptorLifecycleGeneration, rec.Request.Capacity, false)
		}
	}
	got := map[string]rules.LedgerEntry{}
	for k, r := range src.tables[rules.TableLedger] {
		e := r.Value.(rules.LedgerEntry)
		require.NotEqual(t, rules.LedgerEntry{}, e, "empty bucket %s kept", k)
		got[k] = e
	}
	for k, e := range want {
		if e == (rules.LedgerEntry{}) {
			delete(want, k)
		}
	}
	require.Equal(t, want, got, "INV-7 after step %d %s", step, name)
	for id, r := range src.tables[rules.TableReservationTerminals] {
		state := r.Value.(rules.ReservationTerminal).State
		if prev, ok := w.resTerminals[id]; ok {
			require.Equal(t, prev, state, "reservation terminal %s changed", id)
		}
		w.resTerminals[id] = state
	}
	for k, r := range src.tables[rules.TableOperationTerminals] {
		rec := r.Value.(location.TerminalRecord)
		if rec.StoreNow.Equal(src.now) && !w.opTerminals[k+rec.ReservationID] {
			require.True(t, rec.ExpiresAt.After(src.now), "INV-11: terminal published already expired")
			w.opTerminals[k+rec.ReservationID] = true
		}
	}
}

// forward checks that a record's state only moves forward (INV-12).
func (w *invariantWorld) forward(key, state string) {
	prev, ok := w.recordStates[key]
	w.recordStates[key] = state
	if !ok || prev == state {
		return
	}
	allowed := map[string][]string{
		rules.RecordReserved: {rules.RecordPrepared, rules.RecordCommitted, rules.RecordAborted},
		rules.RecordPrepared: {rules.RecordCommitted, rules.RecordAborted},
	}
	require.Contains(w.t, allowed[prev], state, "INV-12: %s moved %s → %s", key, prev, state)
}
