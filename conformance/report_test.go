package conformance_test

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance"
)

// fakeHarness is a harness for scenarios that only use the TB and the
// clock; it counts the cleanups of its fixtures.
func fakeHarness(caps conformance.Capabilities, fixtureCleanups *atomic.Int32) conformance.Harness {
	return conformance.Harness{
		Name: "fake",
		NewFixture: func(t conformance.TB) conformance.Fixture {
			t.Cleanup(func() { fixtureCleanups.Add(1) })
			f, _, _ := memFixture(time.Time{})
			return f
		},
		Capabilities: caps,
	}
}

func TestRunSuite(t *testing.T) {
	var fixtureCleanups atomic.Int32
	var ctxDoneInCleanup atomic.Bool
	var afterFailNow, afterSkip atomic.Bool
	scenarios := []conformance.Scenario{
		{ID: "X-001", Section: "one", Title: "passes", Run: func(c *conformance.Case) {
			c.Logf("clock at %s", c.F.Clock.Now().Format(time.RFC3339))
			require.Equal(c, conformance.T0(), c.F.Clock.Now())
			c.Cleanup(func() { ctxDoneInCleanup.Store(c.Ctx.Err() != nil) })
		}},
		{ID: "X-002", Section: "one", Title: "fails with require", Run: func(c *conformance.Case) {
			require.Equal(c, 1, 2, "one is not two")
			afterFailNow.Store(true)
		}},
		{ID: "X-003", Section: "two", Title: "fails and goes on", Run: func(c *conformance.Case) {
			assert.True(c, false, "first")
			assert.True(c, false, "second")
		}},
		{ID: "X-004", Section: "two", Title: "skips itself", Run: func(c *conformance.Case) {
			c.Skipf("not today")
			afterSkip.Store(true)
		}},
		{ID: "X-005", Section: "two", Title: "needs memory", InMemoryOnly: true, Run: func(c *conformance.Case) {
			c.Errorf("must not run")
		}},
		{ID: "X-006", Title: "panics", Run: func(c *conformance.Case) { panic("boom") }},
		{ID: "X-007", Section: "one", Title: "needs a hook", Needs: []conformance.Hook{conformance.HookOwnerLeaseCounter}, Run: func(c *conformance.Case) {
			c.Errorf("must not run")
		}},
	}
	var seen []string
	rep := conformance.RunSuite(t.Context(), fakeHarness(conformance.Capabilities{}, &fixtureCleanups), conformance.SuiteOptions{
		Scenarios: scenarios,
		OnResult:  func(r conformance.ScenarioResult) { seen = append(seen, r.ID) },
	})

	require.Len(t, rep.Scenarios, len(scenarios))
	outcomes := map[string]conformance.Outcome{}
	for _, s := range rep.Scenarios {
		outcomes[s.ID] = s.Outcome
	}
	assert.Equal(t, map[string]conformance.Outcome{
		"X-001": conformance.OutcomePass,
		"X-002": conformance.OutcomeFail,
		"X-003": conformance.OutcomeFail,
		"X-004": conformance.OutcomeSkip,
		"X-005": conformance.OutcomeSkip,
		"X-006": conformance.OutcomeFail,
		"X-007": conformance.OutcomeSkip,
	}, outcomes)
	assert.Equal(t, []string{"X-001", "X-002", "X-003", "X-004", "X-005", "X-006", "X-007"}, seen)
	assert.Equal(t, "fake/X-002_fails_with_require", rep.Scenarios[1].Name)
	assert.Equal(t, []conformance.GroupResult{
		{Section: "one", Passed: 1, Failed: 1, Skipped: 1},
		{Section: "two", Failed: 1, Skipped: 2},
		{Section: "X", Failed: 1},
	}, rep.Groups)
	assert.Equal(t, 1, rep.Passed)
	assert.Equal(t, 3, rep.Failed)
	assert.Equal(t, 3, rep.Skipped)
	assert.False(t, rep.OK())

	assert.False(t, afterFailNow.Load(), "FailNow ends the scenario")
	assert.False(t, afterSkip.Load(), "Skipf ends the scenario")
	assert.True(t, ctxDoneInCleanup.Load(), "the context is cancelled before cleanups run")
	assert.Equal(t, int32(5), fixtureCleanups.Load(), "the fixture's cleanups run for every scenario that got a fixture")
	assert.Len(t, rep.Scenarios[2].Messages, 2, "Errorf does not stop the scenario")
	assert.Contains(t, rep.Scenarios[0].Messages[0], "clock at 2026-07-03T00:00:00Z")
	assert.Contains(t, strings.Join(rep.Scenarios[5].Messages, "\n"), "panic: boom")
	assert.Contains(t, strings.Join(rep.Scenarios[4].Messages, "\n"), "in-memory only")

	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out))
	text := out.String()
	assert.Contains(t, text, "SECTION")
	assert.Regexp(t, `(?m)^one\s+1\s+1\s+1$`, text)
	assert.Regexp(t, `(?m)^total \(fake, .*\)\s+1\s+3\s+3$`, text)
	assert.Contains(t, text, "FAIL fake/X-002_fails_with_require")
	assert.Contains(t, text, "one is not two")
	assert.NotContains(t, text, "FAIL fake/X-001")
}

func TestRunSuiteFilterAndCancel(t *testing.T) {
	var cleanups atomic.Int32
	ran := 0
	mk := func(id string) conformance.Scenario {
		return conformance.Scenario{ID: id, Title: "t", Run: func(*conformance.Case) { ran++ }}
	}
	all := []conformance.Scenario{mk("Y-001"), mk("Y-002"), mk("Y-003")}
	h := fakeHarness(conformance.Capabilities{}, &cleanups)

	rep := conformance.RunSuite(t.Context(), h, conformance.SuiteOptions{
		Scenarios: all,
		Filter:    func(s conformance.Scenario) bool { return s.ID != "Y-002" },
	})
	require.Len(t, rep.Scenarios, 2)
	assert.Equal(t, 2, ran)
	assert.True(t, rep.OK())

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rep = conformance.RunSuite(ctx, h, conformance.SuiteOptions{Scenarios: all})
	assert.Equal(t, 2, ran, "nothing runs after the suite context is done")
	assert.Equal(t, 3, rep.Skipped)
	assert.Contains(t, rep.Scenarios[0].Messages[0], "context canceled")
}

func TestRunSuiteDefaultsToTheCatalogue(t *testing.T) {
	var cleanups atomic.Int32
	// Select nothing: the catalogue is consulted, nothing runs.
	rep := conformance.RunSuite(t.Context(), fakeHarness(conformance.Capabilities{}, &cleanups), conformance.SuiteOptions{
		Filter: func(conformance.Scenario) bool { return false },
	})
	assert.Empty(t, rep.Scenarios)
	assert.True(t, rep.OK())
	assert.NotEmpty(t, conformance.Scenarios())
}
