package memstore_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// memstore under package conformance: the catalogue (TestConformance) with
// every capability declared, and the model-based random tester (TestRandom)
// with memstore declared exactly and like the etcd store.

// memstore implements the whole store and the optional mesh-node stamp.
var (
	_ location.Store                 = (*memstore.Store)(nil)
	_ location.MeshNodeChangeStamper = (*memstore.Store)(nil)
)

// memstoreHarness plugs memstore into the conformance suite with every
// capability declared: exact numbers, in-memory semantics, both counter
// hooks and the mesh-node change stamp.
func memstoreHarness() conformance.Harness {
	return conformance.Harness{
		Name: "memstore",
		NewFixture: func(conformance.TB) conformance.Fixture {
			clk := clock.NewManual(conformance.T0())
			s := memstore.New(memstore.Options{Clock: clk.Now})
			return conformance.Fixture{
				Store:                s,
				Clock:                clk,
				ExpireOwnerLease:     s.ExpireOwnerLease,
				SetOwnerLeaseCounter: s.SetOwnerLeaseCounter,
				SetAuthorityCounters: s.SetAuthorityCounters,
			}
		},
		Capabilities: conformance.Capabilities{
			DenseCounters:         true,
			DecimalTokens:         true,
			ExactStamps:           true,
			LeaseExpiryByClock:    true,
			InMemorySemantics:     true,
			OwnerLeaseCounterHook: true,
			AuthorityCounterHook:  true,
			MeshNodeChangeStamp:   true,
		},
	}
}

// TestConformance runs every catalogue scenario against memstore.
func TestConformance(t *testing.T) {
	conformance.Run(t, memstoreHarness())
}

// TestConformanceRunSuite runs the owner-lease section through RunSuite,
// the runner of the command's check subcommand, and requires the same
// verdict as go test gives.
func TestConformanceRunSuite(t *testing.T) {
	const section = "LS A. Owner leases"
	rep := conformance.RunSuite(t.Context(), memstoreHarness(), conformance.SuiteOptions{
		Filter: func(s conformance.Scenario) bool { return s.Section == section },
	})
	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out))
	require.True(t, rep.OK(), "report:\n%s", out.String())
	require.Equal(t, 22, rep.Passed+rep.Skipped, "every scenario of section A ran")
	require.Zero(t, rep.Skipped, "memstore declares every capability")
	require.Len(t, rep.Groups, 1)
	require.Equal(t, section, rep.Groups[0].Section)
	require.True(t, strings.HasPrefix(rep.Scenarios[0].Name, "memstore/LS-001_"))
}

// relationalHarness is memstore declared like the etcd store: no exact
// numbers, no in-memory-only behaviours. Its counters start far from the
// model's (lease generations at 1001, versions at 5001, object and owner
// generations at 7001 and 9001), so every number it issues differs from the
// model's and the random tester must compare them up to renaming. exact
// declares ExactNumbers anyway (a harness that lies about its numbers).
func relationalHarness(exact bool) conformance.Harness {
	return conformance.Harness{
		Name: "memstore-relational",
		NewFixture: func(t conformance.TB) conformance.Fixture {
			clk := clock.NewManual(conformance.T0())
			s := memstore.New(memstore.Options{Clock: clk.Now})
			version, object, owner := int64(5000), int64(7000), int64(9000)
			require.NoError(t, s.SetOwnerLeaseCounter(1000))
			require.NoError(t, s.SetAuthorityCounters(&version, &object, &owner))
			return conformance.Fixture{Store: s, Clock: clk, ExpireOwnerLease: s.ExpireOwnerLease}
		},
		Capabilities: conformance.Capabilities{ExactNumbers: exact, MeshNodeChangeStamp: true},
	}
}

// TestRandom runs the model-based random tester with memstore as the store
// under test: once declaring exact numbers (every number must equal the
// model's), once declared like the etcd store with shifted counters (numbers
// compared up to renaming, expired leases dropped at once). 1,000 sequences
// each, 50,000 with -tags stress. ZLINK_RANDOM_SEED=N runs sequence N alone.
func TestRandom(t *testing.T) {
	for _, h := range []conformance.Harness{memstoreHarness(), relationalHarness(false)} {
		name := "exact"
		if !h.Capabilities.ExactNumbers {
			name = "relational"
		}
		t.Run(name, func(t *testing.T) {
			rep := conformance.RunRandom(t, h, conformance.RandomOptions{Package: "./memstore"})
			require.True(t, rep.OK())
			if testing.Verbose() {
				var out bytes.Buffer
				require.NoError(t, rep.WriteOutcomes(&out))
				t.Logf("model outcomes per method:\n%s", out.String())
			}
		})
	}
}

// recordingTB is a conformance.TB that records failures instead of failing
// the test, so that a test can assert on what RunRandom reports.
type recordingTB struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	errors   []string
	logs     []string
	cleanups []func()
}

// newRecordingTB returns a recording TB whose cleanups run when t ends.
func newRecordingTB(t *testing.T) *recordingTB {
	r := &recordingTB{t: t, ctx: t.Context()}
	t.Cleanup(func() {
		for i := len(r.cleanups) - 1; i >= 0; i-- {
			r.cleanups[i]()
		}
	})
	return r
}

func (r *recordingTB) Helper()      {}
func (r *recordingTB) Name() string { return r.t.Name() }
func (r *recordingTB) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.t.Fatalf("the random tester must not stop the test: "+format, args...)
}
func (r *recordingTB) FailNow() { r.t.Fatal("the random tester must not stop the test") }
func (r *recordingTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errors) > 0
}
func (r *recordingTB) Skipf(format string, args ...any) { r.t.Skipf(format, args...) }
func (r *recordingTB) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}
func (r *recordingTB) Context() context.Context { return r.ctx }

// spotRenewIgnoresFence is a broken store: a Renew of a spot whose row
// belongs to the writer's owner id succeeds whatever lease generation the
// writer presents (the lease-generation fence of 02 §4.1 is ignored).
type spotRenewIgnoresFence struct{ *memstore.Store }

// UpdateSpot lets a Renew with another lease generation of the row's owner
// through by writing it as the row's own lease generation would be.
func (s spotRenewIgnoresFence) UpdateSpot(ctx context.Context, row location.SpotLocation, intent location.WriteIntent) (location.WriteResult, error) {
	if intent == location.IntentRenew {
		cur, err := s.ResolveSpot(ctx, row.Key())
		if err == nil && cur != nil && cur.OwnerID == row.OwnerID && cur.LeaseGeneration != row.LeaseGeneration {
			fenced := row
			fenced.LeaseGeneration = cur.LeaseGeneration
			return s.Store.UpdateSpot(ctx, fenced, intent)
		}
	}
	return s.Store.UpdateSpot(ctx, row, intent)
}

// casIgnoresExpectedVersion is a broken store: compare-exchange uses the
// record's current version instead of the caller's expected one.
type casIgnoresExpectedVersion struct{ *memstore.Store }

// CompareExchangeAuthority ignores expected.
func (s casIgnoresExpectedVersion) CompareExchangeAuthority(ctx context.Context, key location.AuthorityKey, expected location.StoreVersion, m location.AuthorityMutation) (location.CompareExchangeResult, error) {
	if cur, err := s.ReadAuthority(ctx, key); err == nil && cur.Snapshot != nil {
		expected = cur.Snapshot.StoreVersion
	}
	return s.Store.CompareExchangeAuthority(ctx, key, expected, m)
}

// brokenHarness wraps a fresh memstore with wrap.
func brokenHarness(name string, wrap func(*memstore.Store) location.Store) conformance.Harness {
	return conformance.Harness{
		Name: name,
		NewFixture: func(conformance.TB) conformance.Fixture {
			clk := clock.NewManual(conformance.T0())
			s := memstore.New(memstore.Options{Clock: clk.Now})
			return conformance.Fixture{Store: wrap(s), Clock: clk, ExpireOwnerLease: s.ExpireOwnerLease}
		},
		Capabilities: conformance.Capabilities{ExactNumbers: true, InMemorySemantics: true, MeshNodeChangeStamp: true},
	}
}

// TestRandomCatchesBrokenStores proves the random tester finds a store that
// breaks one rule: the report names the operation and the rule, shows both
// results, a shrunk sequence and the command that reproduces it.
func TestRandomCatchesBrokenStores(t *testing.T) {
	tests := []struct {
		name    string
		harness conformance.Harness
		want    []string
	}{
		{
			name: "spot renew ignores the lease fence",
			harness: brokenHarness("spot-renew-unfenced", func(s *memstore.Store) location.Store {
				return spotRenewIgnoresFence{s}
			}),
			want: []string{"operation: UpdateSpot(", ", Renew)", "rule result-kind broken: .Status: model \"ignoredStale\", store \"stored\""},
		},
		{
			name: "compare-exchange ignores the expected version",
			harness: brokenHarness("cas-unversioned", func(s *memstore.Store) location.Store {
				return casIgnoresExpectedVersion{s}
			}),
			want: []string{"operation: CompareExchangeAuthority(", "rule result-kind broken: .Kind: model \"conflict\""},
		},
		{
			name:    "shifted numbers declared exact",
			harness: relationalHarness(true),
			want:    []string{"rule number broken:", "(the store declares exact numbers)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecordingTB(t)
			rep := conformance.RunRandom(rec, tt.harness, conformance.RandomOptions{
				Seed: 1, Sequences: 1000, Package: "./memstore", IgnoreEnv: true,
			})
			require.False(t, rep.OK(), "the broken store must be caught")
			require.Len(t, rec.errors, 1)
			msg := rec.errors[0]
			for _, w := range tt.want {
				require.Contains(t, msg, w)
			}
			f := rep.Failures[0]
			require.Contains(t, msg, fmt.Sprintf("random sequence seed=%d", f.Seed))
			require.Contains(t, msg, "model result: ")
			require.Contains(t, msg, "store result: ")
			require.Contains(t, msg, "shrunk to ")
			require.Contains(t, msg, fmt.Sprintf("reproduce: run RandomOptions{Seed: %d, Sequences: 1, Ops: %d}", f.Seed, f.Ops))
			// The reported seed alone reproduces the same failure.
			again := conformance.RunRandom(newRecordingTB(t), tt.harness, conformance.RandomOptions{
				Seed: f.Seed, Sequences: 1, Ops: f.Ops, ShrinkRuns: -1, IgnoreEnv: true,
			})
			require.Len(t, again.Failures, 1)
			require.Equal(t, f.OpIndex, again.Failures[0].OpIndex)
			require.Equal(t, f.Rule, again.Failures[0].Rule)
			t.Logf("caught after %d sequences (%s):\n%s", rep.Sequences, rep.Duration.Round(time.Millisecond), msg)
		})
	}
}
