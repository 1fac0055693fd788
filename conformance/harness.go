package conformance

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// TB is the part of *testing.T the suite uses. *testing.T satisfies it; the
// command's check subcommand supplies its own implementation to run the
// suite outside go test.
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Failed() bool
	Skipf(format string, args ...any)
	Cleanup(func())
	Context() context.Context
}

// Clock is the settable clock a fixture's store reads (see clock.Manual).
type Clock interface {
	Now() time.Time
	Set(time.Time)
	Advance(time.Duration)
}

// Fixture is one fresh, empty, isolated store and its controls.
type Fixture struct {
	Store location.Store
	// Clock is the clock the store reads; the suite sets it to T0 first.
	Clock Clock
	// ExpireOwnerLease makes ownerID's current owner lease not live, as if
	// its TTL had elapsed, without touching any row (memstore: expiry := now;
	// etcd: revoke the lease).
	ExpireOwnerLease func(ctx context.Context, ownerID string) error
	// SetOwnerLeaseCounter sets the last issued owner-lease generation
	// (optional; required when Capabilities.OwnerLeaseCounterHook is set).
	SetOwnerLeaseCounter func(n int64) error
	// SetAuthorityCounters sets the last issued store version, object
	// generation and owner generation; nil leaves a counter alone (optional;
	// required when Capabilities.AuthorityCounterHook is set).
	SetAuthorityCounters func(version, object, owner *int64) error
}

// Capabilities are what a store declares about itself. A declared capability
// is tested; an undeclared one's scenarios are skipped with the reason. The
// suite fails a store that declares more than it does.
type Capabilities struct {
	// ExactNumbers: generations, versions, tokens and stamps are the
	// reference's exact values (dense counters, decimal offset tokens, exact
	// stamp increments). Without it they are checked by relation only.
	ExactNumbers bool
	// InMemorySemantics: the store reproduces behaviours that only an
	// in-memory store can (scenarios tagged X), such as an expired owner lease
	// that is still present until read.
	InMemorySemantics bool
	// OwnerLeaseCounterHook: Fixture.SetOwnerLeaseCounter works.
	OwnerLeaseCounterHook bool
	// AuthorityCounterHook: Fixture.SetAuthorityCounters works.
	AuthorityCounterHook bool
	// MeshNodeChangeStamp: the store implements location.MeshNodeChangeStamper.
	MeshNodeChangeStamp bool
}

// Harness plugs a store implementation into the suite.
type Harness struct {
	// Name labels the run (TestConformance/<Name>/LS-001_…); it is also the
	// subtest name when several harnesses run in one test.
	Name string
	// NewFixture returns a fresh, empty, isolated store for one scenario. It
	// registers its own cleanup with t.Cleanup.
	NewFixture func(t TB) Fixture
	// Capabilities declares what the store supports.
	Capabilities Capabilities
	// Parallel runs the scenarios as parallel subtests (bounded by go test's
	// -parallel flag). Set it when fixtures are fully isolated from each
	// other, as they are for a store per key prefix.
	Parallel bool
}
