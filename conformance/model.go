package conformance

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/memstore"
)

// The model of the random tester: a fresh memstore, the deterministic
// in-memory reference, with its own manual clock and a seeded source of
// reservation ids, so that a sequence replays exactly from its seed.

// newModelFixture returns a fresh model fixture whose reservation ids come
// from seed.
func newModelFixture(seed int64) Fixture {
	clk := clock.NewManual(T0())
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], uint64(seed))
	s := memstore.New(memstore.Options{Clock: clk.Now, Random: rand.NewChaCha8(key)})
	return Fixture{
		Store:                s,
		Clock:                clk,
		ExpireOwnerLease:     s.ExpireOwnerLease,
		SetOwnerLeaseCounter: s.SetOwnerLeaseCounter,
		SetAuthorityCounters: s.SetAuthorityCounters,
	}
}
