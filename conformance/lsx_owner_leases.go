package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Owner-lease reads after a change (LSX-…, a suite-only namespace defined in
// docs/decisions.md). The catalogue reads a lease right after it claims,
// expires or releases it, never before and after: a store that answers
// ReadOwnerLease from a cache its own writes keep up to date, but that an
// expiry does not reach, passes it. Each scenario reads, changes the lease
// one way, and reads again.

// lsxScenarios returns the LSX scenarios.
func lsxScenarios() []Scenario {
	const section = "LSX Owner-lease reads"
	return []Scenario{
		{ID: "LSX-001", Section: section, Title: "Read, expire, read", Run: lsRun(lsx001)},
		{ID: "LSX-002", Section: section, Title: "Read, the clock passes the expiry, read", Needs: []Hook{HookLeaseExpiryByClock}, Run: lsRun(lsx002)},
		{ID: "LSX-003", Section: section, Title: "Read, release, read", Run: lsRun(lsx003)},
		{ID: "LSX-004", Section: section, Title: "Read, renew, read", Run: lsRun(lsx004)},
		{ID: "LSX-005", Section: section, Title: "Read, release, claim again, read", Run: lsRun(lsx005)},
	}
}

// lsx001 is LSX-001: a lease read as found reads as missing once the harness
// expired it; another owner's lease is untouched.
func lsx001(l *lsCase) {
	a, b := l.claim("owner-a"), l.claim("owner-b")
	l.expectLeaseFound("owner-a", a, lsAt(lsTTL))
	l.expectLeaseFound("owner-b", b, lsAt(lsTTL))
	l.expire("owner-a")
	l.expectLeaseMissing("owner-a")
	l.expectLeaseFound("owner-b", b, lsAt(lsTTL))
	res, err := l.S.RenewOwnerLease(l.Ctx, a, lsTTL)
	require.NoError(l, err)
	require.Equal(l, location.KindStale, res.Kind, "renewing the expired lease")
}

// lsx002 is LSX-002: on a store whose leases end by its clock, a lease read
// as found 1 ms before its expiry reads as missing at the expiry instant.
func lsx002(l *lsCase) {
	a := l.claim("owner-a")
	l.expectLeaseFound("owner-a", a, lsAt(lsTTL))
	l.setClock(lsTTL - time.Millisecond)
	l.expectLeaseFound("owner-a", a, lsAt(lsTTL))
	l.setClock(lsTTL)
	l.expectLeaseMissing("owner-a")
}

// lsx003 is LSX-003: a lease read as found reads as missing after its
// release, and stays missing.
func lsx003(l *lsCase) {
	a := l.claim("owner-a")
	l.expectLeaseFound("owner-a", a, lsAt(lsTTL))
	l.release("owner-a")
	l.expectLeaseMissing("owner-a")
	l.expectLeaseMissing("owner-a")
}

// lsx004 is LSX-004: a read after a renewal shows the renewed expiry, also
// when the renewal shortens the lease, and the same generation.
func lsx004(l *lsCase) {
	a := l.claim("owner-a")
	l.expectLeaseFound("owner-a", a, lsAt(lsTTL))
	l.setClock(10 * time.Second)
	for _, ttl := range []time.Duration{60 * time.Second, 20 * time.Second} {
		res, err := l.S.RenewOwnerLease(l.Ctx, a, ttl)
		require.NoError(l, err)
		require.Equalf(l, location.KindRenewed, res.Kind, "renew for %s", ttl)
		l.expectLeaseFound("owner-a", a, lsAt(10*time.Second+ttl))
	}
}

// lsx005 is LSX-005: after read, release and a new claim, a read shows the
// new lease, not the released one.
func lsx005(l *lsCase) {
	a := l.claim("owner-a")
	l.expectLeaseFound("owner-a", a, lsAt(lsTTL))
	l.release("owner-a")
	l.expectLeaseMissing("owner-a")
	l.setClock(time.Second)
	a2 := l.claim("owner-a")
	require.Greater(l, a2.LeaseGeneration, a.LeaseGeneration, "a new claim's generation")
	l.expectLeaseFound("owner-a", a2, lsAt(time.Second+lsTTL))
}
