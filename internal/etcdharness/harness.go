// Package etcdharness plugs an etcd store (package etcdstore) on any etcd
// cluster into the conformance suite, outside go test as well as inside it:
// the command's check subcommand runs the suite with it against an
// operator's endpoints.
//
// Every fixture is a fresh store under its own sub-prefix of one scratch
// prefix, read through a manual clock; its cleanup revokes the owner leases
// it left and deletes its keys, so a run leaves nothing behind on the
// cluster. The declared capabilities are the etcd store's: numbers are
// checked by relation (generations and versions are revisions, stamps are
// key versions, tokens are opaque), no in-memory-only behaviours, no
// counter hooks, and the mesh-node change stamp.
package etcdharness

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/internal/scratch"
)

// DefaultMinLeaseSeconds keeps every owner lease of a fixture alive in etcd
// for ten minutes, far longer than a scenario, so that real expiry never
// races the scenario's manual clock (scenarios end leases through
// Fixture.ExpireOwnerLease, which revokes them).
const DefaultMinLeaseSeconds = 600

// DefaultCleanupTimeout bounds the cleanup of one fixture.
const DefaultCleanupTimeout = 10 * time.Second

// Options configure a harness.
type Options struct {
	// Name labels the run; "" means "etcd".
	Name string
	// Prefix is the scratch prefix the fixtures live under (each gets
	// Prefix + "s<n>/"); it must end with '/'.
	Prefix string
	// Store is the template of every fixture's store options; Root and
	// Clock are set per fixture, and MinLeaseSeconds defaults to
	// DefaultMinLeaseSeconds.
	Store etcdstore.Options
	// Parallel lets the suite run scenarios, and the random tester
	// sequences, at the same time (conformance.Harness.Parallel): the
	// fixtures are isolated by their prefixes, but a shared cluster then
	// sees the load of several at once.
	Parallel bool
}

// Harness is a conformance harness over one etcd client.
type Harness struct {
	client *clientv3.Client
	opts   Options
	next   atomic.Int64
}

// New returns a harness whose fixtures are stores over client under
// opts.Prefix. The client stays the caller's.
func New(client *clientv3.Client, opts Options) (*Harness, error) {
	if client == nil {
		return nil, fmt.Errorf("etcdharness: nil client")
	}
	if opts.Prefix == "" || opts.Prefix[len(opts.Prefix)-1] != '/' {
		return nil, fmt.Errorf("etcdharness: scratch prefix %q must be non-empty and end with '/'", opts.Prefix)
	}
	if opts.Name == "" {
		opts.Name = "etcd"
	}
	if opts.Store.MinLeaseSeconds == 0 {
		opts.Store.MinLeaseSeconds = DefaultMinLeaseSeconds
	}
	return &Harness{client: client, opts: opts}, nil
}

// Fixtures reports how many fixtures the harness has made.
func (h *Harness) Fixtures() int64 { return h.next.Load() }

// Conformance returns the suite's view of the harness.
func (h *Harness) Conformance() conformance.Harness {
	return conformance.Harness{
		Name:         h.opts.Name,
		NewFixture:   h.newFixture,
		Capabilities: conformance.Capabilities{MeshNodeChangeStamp: true},
		Parallel:     h.opts.Parallel,
	}
}

// newFixture makes one fresh store under its own sub-prefix and registers
// the cleanup of that prefix.
func (h *Harness) newFixture(t conformance.TB) conformance.Fixture {
	t.Helper()
	prefix := scratch.Sub(h.opts.Prefix, int(h.next.Add(1)))
	clk := clock.NewManual(conformance.T0())
	opts := h.opts.Store
	opts.Root = prefix
	opts.Clock = clk.Now
	s, err := etcdstore.New(h.client, opts)
	if err != nil {
		t.Fatalf("etcdharness: new store under %s: %v", prefix, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultCleanupTimeout)
		defer cancel()
		if _, err := scratch.Clean(ctx, h.client, prefix); err != nil {
			t.Errorf("etcdharness: clean up %s: %v", prefix, err)
		}
		_ = s.Close()
	})
	return conformance.Fixture{
		Store:            s,
		Clock:            clk,
		ExpireOwnerLease: s.ExpireOwnerLease,
	}
}
