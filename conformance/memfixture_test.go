package conformance_test

import (
	"time"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// memFixture is a fresh memstore reading a new manual clock set to start,
// and the fixture of it with every hook memstore has (a harness's
// capabilities decide which hooks the suite uses).
func memFixture(start time.Time) (conformance.Fixture, *memstore.Store, *clock.Manual) {
	clk := clock.NewManual(start)
	s := memstore.New(memstore.Options{Clock: clk.Now})
	return conformance.Fixture{Store: s, Clock: clk, ExpireOwnerLease: s.ExpireOwnerLease,
		SetOwnerLeaseCounter: s.SetOwnerLeaseCounter, SetAuthorityCounters: s.SetAuthorityCounters}, s, clk
}
