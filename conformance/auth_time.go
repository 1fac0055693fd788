package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section X of the authority catalogue: time-dependent behaviour. Owner-lease
// expiry goes through Fixture.ExpireOwnerLease; the exact instant
// now == leaseExpiresAt is checked only on stores that claim
// LeaseExpiryByClock (the catalogue's reference profile).

// auth217 AUTH-217 Lease boundary for owner liveness.
func auth217(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("t1")
	if c.Caps.leaseExpiryByClock() {
		c.F.Clock.Set(e.AExp.Add(-time.Millisecond))
		S2 := e.requireStored(e.cas(key, S.StoreVersion, fixture.Preserve("before")))
		c.F.Clock.Set(e.AExp)
		e.requireCASConflict("preserve at leaseExpiresAt", key, S2.StoreVersion, fixture.Preserve("at"), S2)
		return
	}
	S2 := e.requireStored(e.cas(key, S.StoreVersion, fixture.Preserve("before")))
	e.expire("owner-a")
	e.requireCASConflict("preserve after expiry", key, S2.StoreVersion, fixture.Preserve("after"), S2)
}

// auth218 AUTH-218 Restore after expiry.
func auth218(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("t2", e.TA())
	e.expire("owner-a")
	e.requireStored(e.cas(fixture.KS("t2"), S.StoreVersion, fixture.Restore("restored", e.A)))
}

// auth219 AUTH-219 [newer] Relocation from an expired source.
func auth219(c *Case) {
	e := newAuthEnv(c)
	key, S := e.activeOnTA("t3")
	e.expire("owner-a")
	e.REL("Rt3", key, S, e.NA, e.NB)
	got := e.requireStored(e.cas(key, S.StoreVersion, fixture.NewOwner("moved", e.B, "Rt3")))
	require.Equal(c, e.B, got.Owner)
}

// auth220 AUTH-220 Creation across expiry.
func auth220(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("t4", e.TA())
	e.expire("owner-a")
	e.requireCommitStale(fixture.CommitRequest("t4", R, e.TA()), "commit after the owner lease expired")
	e.requireAbortKind(fixture.AbortRequest(location.ObjectUserSpot, "t4", R, e.TA()), location.KindAborted, "abort after the owner lease expired")
}

// auth221 AUTH-221 Rebind after expiry.
func auth221(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("t5", e.TA())
	e.expire("owner-a")
	A2, _ := e.claim("owner-a")
	e.republish(e.NA, location.IntentNewClaim, func(d *location.MeshNodeDescriptor) {
		d.LeaseGeneration = A2.LeaseGeneration
	})
	got := e.requireStored(e.cas(fixture.KS("t5"), S.StoreVersion, fixture.Rebind("rebound", e.A, A2)))
	require.Equal(c, A2, got.Owner)
	e.exactVersion(got.StoreVersion, "3", "rebound row")
	require.Equal(c, S.AuthorityOwnerGeneration, got.AuthorityOwnerGeneration)
	require.Equal(c, S.ObjectGeneration, got.ObjectGeneration)
	require.Equal(c, S.Allocation, got.Allocation)
}
