package conformance

import (
	"errors"
	"fmt"
)

// ErrIncompleteHarness classifies a harness the suite cannot run: a required
// field is missing, or a declared capability has no hook. The error names
// the field.
var ErrIncompleteHarness = errors.New("conformance: incomplete harness")

// Check reports the first problem of the harness itself, or nil. Fixtures are
// checked when they are built (Fixture.Check).
func (h Harness) Check() error {
	if h.NewFixture == nil {
		return fmt.Errorf("%w %q: Harness.NewFixture is nil: set it to a function that returns a fresh, empty, isolated store for each scenario", ErrIncompleteHarness, h.Name)
	}
	return nil
}

// Check reports the first missing field of a fixture built for a harness
// with the given capabilities, or nil.
func (f Fixture) Check(caps Capabilities) error {
	switch {
	case f.Store == nil:
		return fmt.Errorf("%w: Fixture.Store is nil: set it to the fresh store under test", ErrIncompleteHarness)
	case f.Clock == nil:
		return fmt.Errorf("%w: Fixture.Clock is nil: set it to the settable clock the store reads (for example clock.NewManual(conformance.T0()), with the store's clock option set to its Now)", ErrIncompleteHarness)
	case f.ExpireOwnerLease == nil:
		return fmt.Errorf("%w: Fixture.ExpireOwnerLease is nil: set it to a function that ends an owner's lease at once, as if its TTL had elapsed, leaving its rows (memstore: Store.ExpireOwnerLease; etcd: revoke the lease)", ErrIncompleteHarness)
	case caps.OwnerLeaseCounterHook && f.SetOwnerLeaseCounter == nil:
		return fmt.Errorf("%w: Capabilities.OwnerLeaseCounterHook is declared but Fixture.SetOwnerLeaseCounter is nil: set the hook or do not declare it", ErrIncompleteHarness)
	case caps.AuthorityCounterHook && f.SetAuthorityCounters == nil:
		return fmt.Errorf("%w: Capabilities.AuthorityCounterHook is declared but Fixture.SetAuthorityCounters is nil: set the hook or do not declare it", ErrIncompleteHarness)
	}
	return nil
}

// newFixture builds a fixture of h for one scenario or sequence, checks it,
// and sets its clock to T0.
func newFixture(t TB, h Harness) (Fixture, error) {
	t.Helper()
	if err := h.Check(); err != nil {
		return Fixture{}, err
	}
	f := h.NewFixture(t)
	if err := f.Check(h.Capabilities); err != nil {
		return Fixture{}, fmt.Errorf("harness %q: %w", h.Name, err)
	}
	f.Clock.Set(T0())
	return f, nil
}
