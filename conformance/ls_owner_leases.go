package conformance

import (
	"errors"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section A: owner leases (LS-001 … LS-022).

// ls001 checks LS-001 "Claim issues a lease" (A. Owner leases).
func ls001(l *lsCase) {
	res, err := l.S.ClaimOwnerLease(l.Ctx, "owner-a", 30000*time.Millisecond)
	require.NoError(l, err)
	require.Equal(l, location.KindClaimed, res.Kind)
	require.Equal(l, "owner-a", res.Token.OwnerID)
	l.expectNum(res.Token.LeaseGeneration, numPositive(1), "leaseGeneration")
	l.expectTime(res.LeaseExpiresAt, lsAt(30*time.Second), "leaseExpiresAt")
	l.expectTime(res.StoreNow, T0(), "storeNow")
	l.expectLeaseFound("owner-a", res.Token, lsAt(30*time.Second))
}

// ls002 checks LS-002 "Generations are global and increasing" (A. Owner
// leases).
func ls002(l *lsCase) {
	a := l.claim("a")
	l.expectNum(a.LeaseGeneration, numPositive(1), "gen(a)")
	b := l.claim("b")
	c := l.claim("c")
	l.expectNum(b.LeaseGeneration, numAbove(2, a.LeaseGeneration), "gen(b)")
	l.expectNum(c.LeaseGeneration, numAbove(3, b.LeaseGeneration), "gen(c)")
}

// ls003 checks LS-003 "Re-claiming a live lease conflicts and consumes nothing"
// (A. Owner leases).
func ls003(l *lsCase) {
	a := l.claim("a")
	res, err := l.S.ClaimOwnerLease(l.Ctx, "a", 60000*time.Millisecond)
	require.NoError(l, err)
	require.Equal(l, location.OwnerLeaseClaimResult{Kind: location.KindConflict}, res, "re-claiming a live lease")
	l.expectLeaseFound("a", a, lsAt(30*time.Second))
	b := l.claim("b")
	l.expectNum(b.LeaseGeneration, numAbove(2, a.LeaseGeneration), "gen(b): the conflict consumed no generation")
}

// ls004 checks LS-004 "Claim after expiry" (A. Owner leases).
func ls004(l *lsCase) {
	l.claim("a")
	b := l.claim("b")
	l.expire("a")
	res, err := l.S.ClaimOwnerLease(l.Ctx, "a", lsTTL)
	require.NoError(l, err)
	require.Equal(l, location.KindClaimed, res.Kind, "claim after expiry")
	l.expectNum(res.Token.LeaseGeneration, numAbove(3, b.LeaseGeneration), "new gen(a)")
	l.expectTime(res.LeaseExpiresAt, l.now().Add(lsTTL), "expiry = now + 30 s")
	l.expectTime(res.StoreNow, l.now(), "storeNow")
}

// ls005 checks LS-005 "Claim after release" (A. Owner leases).
func ls005(l *lsCase) {
	old := l.claim("a")
	l.release("a")
	again := l.claim("a")
	require.Greater(l, again.LeaseGeneration, old.LeaseGeneration, "a new generation is greater than the old one")
	l.expectNum(again.LeaseGeneration, numAbove(2, old.LeaseGeneration), "gen(a) after the release")
}

// ls006 checks LS-006 "Claim validation" (A. Owner leases), and that a TTL
// is truncated to whole milliseconds.
func ls006(l *lsCase) {
	cases := []struct {
		owner string
		ttl   time.Duration
		class location.ErrorClass
		what  string
	}{
		{"", lsTTL, location.ClassType, `ownerId ""`},
		{"   ", lsTTL, location.ClassType, `ownerId "   "`},
		{"a", 0, location.ClassRange, "ttl 0 ms"},
		{"a", -5 * time.Millisecond, location.ClassRange, "ttl -5 ms"},
		// 2^53 ms does not fit a time.Duration (the bound is vacuous in
		// Go); a TTL that truncates to 0 whole milliseconds is the Go
		// counterpart of an unusable TTL.
		{"a", 999 * time.Microsecond, location.ClassRange, "ttl 0.999 ms (0 whole ms)"},
	}
	l.useOwner("a")
	for _, tc := range cases {
		before := l.snap()
		_, err := l.S.ClaimOwnerLease(l.Ctx, tc.owner, tc.ttl)
		l.expectInputError(err, tc.class, "claim with %s", tc.what)
		l.noEffect(before, "claim with %s", tc.what)
	}
	a := l.claim("a")
	l.expectNum(a.LeaseGeneration, numPositive(1), "gen(a) after the rejected claims")
	// A TTL is whole milliseconds: a sub-millisecond remainder is dropped.
	res, err := l.S.ClaimOwnerLease(l.Ctx, "b", 1500*time.Microsecond)
	require.NoError(l, err)
	require.Equal(l, location.KindClaimed, res.Kind, "claim with a TTL of 1.5 ms")
	l.expectTime(res.LeaseExpiresAt, lsAt(time.Millisecond), "a TTL of 1.5 ms counts as 1 ms")
}

// ls007 checks LS-007 "Generation exhaustion" (A. Owner leases), and that the
// last generation is still issued.
func ls007(l *lsCase) {
	require.NotNil(l, l.F.SetOwnerLeaseCounter, "the harness declares OwnerLeaseCounterHook but Fixture.SetOwnerLeaseCounter is nil")
	err := l.F.SetOwnerLeaseCounter(location.MaxGeneration)
	if errors.Is(err, location.ErrUnsupported) {
		l.Fatalf("the harness declares OwnerLeaseCounterHook, but SetOwnerLeaseCounter answered ErrUnsupported: the store claims more than it does")
	}
	require.NoError(l, err)
	for i := 1; i <= 2; i++ {
		res, err := l.S.ClaimOwnerLease(l.Ctx, "a", lsTTL)
		require.NoError(l, err)
		require.Equalf(l, location.OwnerLeaseClaimResult{Kind: location.KindGenerationExhausted}, res, "claim #%d", i)
		l.expectLeaseMissing("a")
	}
	require.NoError(l, l.F.SetOwnerLeaseCounter(location.MaxGeneration-1))
	l.expectNum(l.claim("a").LeaseGeneration, numEqual(location.MaxGeneration), "the last generation is issued")
}

// ls008 checks LS-008 "Read of an unknown owner" (A. Owner leases).
func ls008(l *lsCase) {
	require.Equal(l, location.OwnerLeaseReadResult{Kind: location.KindMissing}, l.readLease("nobody"))
}

// ls009 checks LS-009 "Read after expiry" (A. Owner leases).
func ls009(l *lsCase) {
	a := l.claim("a")
	l.expire("a")
	l.expectLeaseMissing("a")
	l.expectNum(l.claim("a").LeaseGeneration, numAbove(2, a.LeaseGeneration), "gen(a) claimed again")
}

// ls010 checks LS-010 "Read validation" (A. Owner leases).
func ls010(l *lsCase) {
	_, err := l.S.ReadOwnerLease(l.Ctx, "  ")
	l.expectInputError(err, location.ClassType, `read("  ")`)
}

// ls011 checks LS-011 "Renew extends from now" (A. Owner leases).
func ls011(l *lsCase) {
	a := l.claim("a")
	l.setClock(10 * time.Second)
	res, err := l.S.RenewOwnerLease(l.Ctx, a, 60000*time.Millisecond)
	require.NoError(l, err)
	require.Equal(l, location.KindRenewed, res.Kind)
	l.expectTime(res.LeaseExpiresAt, lsAt(70*time.Second), "leaseExpiresAt")
	l.expectTime(res.StoreNow, lsAt(10*time.Second), "storeNow")
	l.expectLeaseFound("a", a, lsAt(70*time.Second))
}

// ls012 checks LS-012 "Renew may shorten" (A. Owner leases).
func ls012(l *lsCase) {
	a := l.claim("a")
	res, err := l.S.RenewOwnerLease(l.Ctx, a, 1000*time.Millisecond)
	require.NoError(l, err)
	require.Equal(l, location.KindRenewed, res.Kind)
	l.expectTime(res.LeaseExpiresAt, lsAt(time.Second), "leaseExpiresAt")
	l.expectLeaseFound("a", a, lsAt(time.Second))
}

// ls013 checks LS-013 "Renew with a wrong generation" (A. Owner leases).
func ls013(l *lsCase) {
	a := l.claim("a")
	res, err := l.S.RenewOwnerLease(l.Ctx, fixture.Token("a", a.LeaseGeneration+1), lsTTL)
	require.NoError(l, err)
	require.Equal(l, location.OwnerLeaseRenewResult{Kind: location.KindStale}, res)
	l.expectLeaseFound("a", a, lsAt(30*time.Second))
}

// ls014 checks LS-014 "Renew after expiry" (A. Owner leases).
func ls014(l *lsCase) {
	a := l.claim("a")
	l.expire("a")
	res, err := l.S.RenewOwnerLease(l.Ctx, a, lsTTL)
	require.NoError(l, err)
	require.Equal(l, location.KindStale, res.Kind)
	l.expectLeaseMissing("a")
}

// ls015 checks LS-015 "Renew of an unknown owner" (A. Owner leases).
func ls015(l *lsCase) {
	res, err := l.S.RenewOwnerLease(l.Ctx, fixture.Token("nobody", 1), lsTTL)
	require.NoError(l, err)
	require.Equal(l, location.KindStale, res.Kind)
}

// ls016 checks LS-016 "Renew validation" (A. Owner leases).
func ls016(l *lsCase) {
	a := l.claim("a")
	before := l.snap()
	_, err := l.S.RenewOwnerLease(l.Ctx, fixture.Token("  ", 1), lsTTL)
	l.expectInputError(err, location.ClassType, `renew({"  ", 1})`)
	_, err = l.S.RenewOwnerLease(l.Ctx, a, 0)
	l.expectInputError(err, location.ClassRange, "renew(tok(a), 0)")
	l.noEffect(before, "rejected renews")
}

// ls017 checks LS-017 "Release" (A. Owner leases).
func ls017(l *lsCase) {
	a := l.claim("a")
	l.release("a")
	l.expectLeaseMissing("a")
	res, err := l.S.RenewOwnerLease(l.Ctx, a, lsTTL)
	require.NoError(l, err)
	require.Equal(l, location.KindStale, res.Kind, "renew after release")
}

// ls018 checks LS-018 "Release rejections" (A. Owner leases).
func ls018(l *lsCase) {
	a := l.claim("a")
	release := func(t location.OwnerToken) location.ResultKind {
		l.Helper()
		k, err := l.S.ReleaseOwnerLease(l.Ctx, t)
		require.NoError(l, err)
		return k
	}
	require.Equal(l, location.KindStale, release(fixture.Token("a", a.LeaseGeneration+1)), "release with gen(a)+1")
	l.expectLeaseFound("a", a, lsAt(30*time.Second))
	require.Equal(l, location.KindStale, release(fixture.Token("nobody", 1)), "release of an unknown owner")
	require.Equal(l, location.KindReleased, release(a), "first release")
	require.Equal(l, location.KindStale, release(a), "second release")
}

// ls019 checks LS-019 "Release of an expired lease" (A. Owner leases; A-20
// reproduced).
func ls019(l *lsCase) {
	a := l.claim("a")
	l.expire("a")
	k, err := l.S.ReleaseOwnerLease(l.Ctx, a)
	require.NoError(l, err)
	require.Equal(l, location.KindReleased, k, "release of an expired lease that no read dropped")

	b := l.claim("b")
	l.expire("b")
	l.expectLeaseMissing("b")
	k, err = l.S.ReleaseOwnerLease(l.Ctx, b)
	require.NoError(l, err)
	require.Equal(l, location.KindStale, k, "release of an expired lease after a read dropped it")
}

// lsReleaseKeepsRows is the common setup of LS-020 … LS-022: a's spot and
// peer rows, then a's lease released. It returns the first generations of
// the spot and peer keys.
func lsReleaseKeepsRows(l *lsCase) (spotGen, peerGen int64) {
	l.Helper()
	a := l.claim("a")
	sres := l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim)
	l.expectStored(sres, numPositive(1), T0(), "SPOT(a)")
	pres := l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim)
	l.expectStored(pres, numPositive(1), T0(), "PEER(a)")
	scopes := lsAllStampScopes(fixture.MeshPlay, fixture.MeshGame)
	before := l.readStamps(scopes...)
	l.release("a")
	after := l.readStamps(scopes...)
	for _, s := range scopes {
		l.expectStampDelta(before, after, s, 0)
	}
	spot := l.resolveSpot(fixture.SpotKey())
	require.NotNil(l, spot, "the released owner's spot row stays")
	require.Equal(l, "a", spot.OwnerID)
	peers := l.listPeers(location.PeerFilter{})
	require.Len(l, peers, 1, "the released owner's peer row stays")
	require.Equal(l, "a", peers[0].OwnerID)
	return sres.Generation, pres.Generation
}

// ls020 checks LS-020 "Release keeps rows" (A. Owner leases).
func ls020(l *lsCase) { lsReleaseKeepsRows(l) }

// lsReleasedRowsClaimed continues LS-020 with LS-021.
func lsReleasedRowsClaimed(l *lsCase) {
	l.Helper()
	spotGen, peerGen := lsReleaseKeepsRows(l)
	b := l.claim("b")
	l.expectStored(l.putSpot(fixture.SPOT("b", b.LeaseGeneration), location.IntentNewClaim), numAbove(2, spotGen), T0(), "SPOT(b) NewClaim")
	l.expectStored(l.putPeer(fixture.PEER("b", 0), location.IntentNewClaim), numAbove(2, peerGen), T0(), "PEER(b) NewClaim")
	spot := l.resolveSpot(fixture.SpotKey())
	require.NotNil(l, spot)
	require.Equal(l, "b", spot.OwnerID)
	require.Equal(l, b.LeaseGeneration, spot.LeaseGeneration)
	peers := l.listPeers(location.PeerFilter{})
	require.Len(l, peers, 1)
	require.Equal(l, "b", peers[0].OwnerID)
}

// ls021 checks LS-021 "A released owner's rows are claimable" (A. Owner
// leases).
func ls021(l *lsCase) { lsReleasedRowsClaimed(l) }

// ls022 checks LS-022 "Claim does not touch rows" (A. Owner leases).
func ls022(l *lsCase) {
	lsReleasedRowsClaimed(l)
	spotBefore := l.resolveSpot(fixture.SpotKey())
	peersBefore := l.listPeers(location.PeerFilter{})
	a := l.claim("a")
	l.expectNum(a.LeaseGeneration, numAbove(3, l.gen("b")), "gen(a) re-claimed")
	l.expectSameRow(spotBefore, l.resolveSpot(fixture.SpotKey()), "b's spot row is untouched by the claim")
	l.expectSameRow(peersBefore, l.listPeers(location.PeerFilter{}), "b's peer row is untouched by the claim")
}

// lsAllStampScopes lists the global scope of every location kind and, for
// each mesh given, its per-mesh scope.
func lsAllStampScopes(meshes ...string) []stampScope {
	kinds := []location.LocationKind{
		location.LocationPeer, location.LocationSpot, location.LocationActor,
		location.LocationRoute, location.LocationClientServer,
	}
	var out []stampScope
	for _, k := range kinds {
		out = append(out, stampOf(k, ""))
		for _, m := range meshes {
			out = append(out, stampOf(k, m))
		}
	}
	return out
}
