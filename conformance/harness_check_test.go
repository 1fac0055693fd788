package conformance_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
)

// A harness with a missing field fails each scenario (and the random run)
// with an error naming the field, instead of panicking.
func TestIncompleteHarness(t *testing.T) {
	full := func() conformance.Fixture {
		f, _, _ := memFixture(conformance.T0())
		return f
	}
	tests := []struct {
		name  string
		caps  conformance.Capabilities
		strip func(*conformance.Fixture)
		field string
	}{
		{"no store", conformance.Capabilities{}, func(f *conformance.Fixture) { f.Store = nil }, "Fixture.Store is nil"},
		{"no clock", conformance.Capabilities{}, func(f *conformance.Fixture) { f.Clock = nil }, "Fixture.Clock is nil"},
		{"no expiry hook", conformance.Capabilities{}, func(f *conformance.Fixture) { f.ExpireOwnerLease = nil }, "Fixture.ExpireOwnerLease is nil"},
		{"lease counter hook declared, missing", conformance.Capabilities{OwnerLeaseCounterHook: true},
			func(f *conformance.Fixture) { f.SetOwnerLeaseCounter = nil }, "Fixture.SetOwnerLeaseCounter is nil"},
		{"authority counter hook declared, missing", conformance.Capabilities{AuthorityCounterHook: true},
			func(f *conformance.Fixture) { f.SetAuthorityCounters = nil }, "Fixture.SetAuthorityCounters is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := full()
			tc.strip(&f)
			err := f.Check(tc.caps)
			require.ErrorIs(t, err, conformance.ErrIncompleteHarness)
			require.ErrorContains(t, err, tc.field)

			h := conformance.Harness{
				Name:         "incomplete",
				NewFixture:   func(conformance.TB) conformance.Fixture { f := full(); tc.strip(&f); return f },
				Capabilities: tc.caps,
			}
			rep := conformance.RunSuite(t.Context(), h, conformance.SuiteOptions{
				Filter: func(sc conformance.Scenario) bool { return sc.ID == "LS-001" },
			})
			require.Equal(t, 1, rep.Failed)
			msgs := strings.Join(rep.Scenarios[0].Messages, "\n")
			require.Contains(t, msgs, tc.field)
			require.NotContains(t, msgs, "panic")

			rr := conformance.RunRandomSuite(t.Context(), h, conformance.RandomOptions{Sequences: 3, IgnoreEnv: true})
			require.Len(t, rr.Failures, 1)
			require.Equal(t, "harness", rr.Failures[0].Rule)
			require.Contains(t, rr.Failures[0].Message, tc.field)
		})
	}
	t.Run("no NewFixture", func(t *testing.T) {
		h := conformance.Harness{Name: "empty"}
		require.True(t, errors.Is(h.Check(), conformance.ErrIncompleteHarness))
		rep := conformance.RunSuite(t.Context(), h, conformance.SuiteOptions{
			Filter: func(sc conformance.Scenario) bool { return sc.ID == "LS-001" },
		})
		require.Equal(t, 1, rep.Failed)
		require.Contains(t, strings.Join(rep.Scenarios[0].Messages, "\n"), "Harness.NewFixture is nil")
	})
	t.Run("a complete fixture passes", func(t *testing.T) {
		require.NoError(t, full().Check(conformance.Capabilities{OwnerLeaseCounterHook: true, AuthorityCounterHook: true}))
	})
}
