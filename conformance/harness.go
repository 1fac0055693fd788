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
// is tested; an undeclared one's scenarios are skipped, or its assertions
// relaxed to what every store must do, with the reason. The suite fails a
// store that declares more than it does. The four "exact" capabilities are
// independent: a store may claim any of them alone.
type Capabilities struct {
	// DenseCounters: owner-lease generations, row generations, authority
	// store versions and object and owner generations are the reference's
	// dense counters (1, 2, 3, … as the catalogue gives them). Without it
	// they are checked by relation only: positive, equal where the contract
	// keeps a number, greater where it issues a new one.
	DenseCounters bool
	// DecimalTokens: list continuation tokens are the reference's decimal
	// offsets ("1", "2", …). Without it tokens are opaque: only their
	// presence is checked, and a made-up token may restart the list or be
	// read as an offset.
	DecimalTokens bool
	// ExactStamps: a change stamp moves by exactly 1 per changed row. Without
	// it a stamp must only increase on a change and stay put otherwise.
	ExactStamps bool
	// LeaseExpiryByClock: an owner lease ends exactly at its leaseExpiresAt
	// on the fixture's clock (the store judges liveness with its clock), so
	// the suite may end a lease by advancing the clock. Without it leases end
	// only through Fixture.ExpireOwnerLease.
	LeaseExpiryByClock bool
	// ExactNumbers claims DenseCounters, DecimalTokens, ExactStamps and
	// LeaseExpiryByClock together (the catalogue's reference profile).
	//
	// Deprecated: claim the four capabilities separately; ExactNumbers is
	// kept so that existing harnesses keep their meaning.
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

// denseCounters reports whether counters are checked exactly.
func (c Capabilities) denseCounters() bool { return c.DenseCounters || c.ExactNumbers }

// decimalTokens reports whether continuation tokens are checked exactly.
func (c Capabilities) decimalTokens() bool { return c.DecimalTokens || c.ExactNumbers }

// exactStamps reports whether stamp increments are checked exactly.
func (c Capabilities) exactStamps() bool { return c.ExactStamps || c.ExactNumbers }

// leaseExpiryByClock reports whether leases end with the fixture clock.
func (c Capabilities) leaseExpiryByClock() bool { return c.LeaseExpiryByClock || c.ExactNumbers }

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
	// NotifyTimeout is how long a change-watcher scenario (CW-…) waits for a
	// notification or for a channel to close before it fails; 0 means
	// DefaultNotifyTimeout.
	NotifyTimeout time.Duration
}

// DefaultNotifyTimeout is the default Harness.NotifyTimeout: generous, since
// a watcher that works answers in milliseconds and a wait ends as soon as
// the notification arrives.
const DefaultNotifyTimeout = 10 * time.Second
