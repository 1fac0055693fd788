package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Case is one scenario's run: the test handle, a fresh fixture and the
// harness's capabilities.
type Case struct {
	TB
	// Ctx is the scenario's context.
	Ctx context.Context
	// F is the fixture; S is F.Store.
	F    Fixture
	S    location.Store
	Caps Capabilities
	// NotifyTimeout is the harness's wait for a change notification.
	NotifyTimeout time.Duration
}

// Run runs every scenario against the harness's store, each as a subtest
// named h.Name/ID_title (call it from a test named TestConformance).
func Run(t *testing.T, h Harness) {
	t.Helper()
	RunFiltered(t, h, nil)
}

// RunFiltered is Run restricted to the scenarios keep selects (all when keep
// is nil): a representative subset for a deployment too slow for the whole
// catalogue, such as a three-member cluster.
func RunFiltered(t *testing.T, h Harness, keep func(Scenario) bool) {
	t.Helper()
	t.Run(h.Name, func(t *testing.T) {
		for _, sc := range Scenarios() {
			if keep != nil && !keep(sc) {
				continue
			}
			t.Run(sc.Name(), func(t *testing.T) {
				if h.Parallel {
					t.Parallel()
				}
				runScenario(t, h, sc)
			})
		}
	})
}

// runScenario runs one scenario on a fresh fixture, or skips it with the
// reason.
func runScenario(t TB, h Harness, sc Scenario) {
	t.Helper()
	if reason := sc.skipReason(h.Capabilities); reason != "" {
		t.Skipf("%s: %s", sc.ID, reason)
		return
	}
	f, err := newFixture(t, h)
	if err != nil {
		t.Fatalf("%s: %v", sc.ID, err)
		return
	}
	c := &Case{TB: t, Ctx: t.Context(), F: f, S: f.Store, Caps: h.Capabilities, NotifyTimeout: h.NotifyTimeout}
	if c.NotifyTimeout <= 0 {
		c.NotifyTimeout = DefaultNotifyTimeout
	}
	sc.Run(c)
}
