package etcdstore

import (
	"os"
	"testing"
	"time"

	"github.com/zlink-systems/zlink-etcd/clock"
	catalogue "github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/txn"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.RunShared(m)) }

// t0 is the catalogue's start time (2026-07-03T00:00:00Z).
func t0() time.Time { return catalogue.T0() }

// The store implements the whole contract and the optional capabilities.
var (
	_ location.Store                 = (*Store)(nil)
	_ location.MeshNodeChangeStamper = (*Store)(nil)
	_ location.ChangeWatcher         = (*Store)(nil)
	_ location.OwnerLivenessReader   = (*Store)(nil)
)

// fixture is a store over a fresh prefix of the shared member, with a
// request recorder and a manual clock.
type fixture struct {
	s     *Store
	rec   *txn.Recorder
	clock *clock.Manual
}

// newFixture returns a fixture; opts may adjust the options.
func newFixture(t etcdtest.TB, adjust ...func(*Options)) *fixture {
	t.Helper()
	c := etcdtest.Connect(t)
	clk := clock.NewManual(t0())
	rec := txn.NewRecorder(c.KV)
	opts := Options{Root: etcdtest.UniquePrefix(t), Clock: clk.Now, MinLeaseSeconds: 600, KV: rec, Lease: rec.Lease(c.Lease)}
	for _, a := range adjust {
		a(&opts)
	}
	s, err := New(c, opts)
	if err != nil {
		t.Fatalf("etcdstore: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &fixture{s: s, rec: rec, clock: clk}
}
