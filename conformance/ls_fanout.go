package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section D: fanout publishers (LS-090 … LS-097). Fanout writes
// bump no stamp; the list hides owners without a live lease, judged
// by owner id (A-16, reproduced).

// lsFPOn is FP(x) with publisher rid r.
func lsFPOn(owner location.OwnerToken, r string) location.FanoutPublisherDescriptor {
	d := fixture.FP(owner)
	d.PublisherRID = lsRID(r)
	return d
}

// lsCreateFP claims a (unless claimed) and stores FP(a); it returns the
// generation.
func lsCreateFP(l *lsCase) int64 {
	l.Helper()
	return l.created(l.putFP(fixture.FP(l.claimOnce("a")), location.IntentNewClaim), "FP(a) NewClaim")
}

// lsEveryStampZero requires every stamp kind, global and for the names, to
// read 0.
func lsEveryStampZero(l *lsCase, names ...string) {
	l.Helper()
	for _, k := range stampKinds() {
		for _, m := range append([]string{""}, names...) {
			l.expectStamp(stampScope{Kind: k, Mesh: m}, 0)
		}
	}
}

// ls090 checks LS-090 "Create bumps nothing" (D. Fanout publishers).
func ls090(l *lsCase) {
	lsCreateFP(l)
	want := fixture.FP(l.tok("a"))
	want.UpdatedAt = T0()
	l.expectSameRow([]location.FanoutPublisherDescriptor{want}, l.listFP("events"), "ListFanoutPublishers(events)")
	lsEveryStampZero(l, "events")
}

// ls091 checks LS-091 "Revision rules" (D. Fanout publishers): a mutable change
// needs a higher revision and an immutable one a new lifecycle.
func ls091(l *lsCase) {
	g := lsCreateFP(l)
	a := l.tok("a")
	stale := []struct {
		what string
		edit func(*location.FanoutPublisherDescriptor)
	}{
		{"state Draining at the same revision", func(d *location.FanoutPublisherDescriptor) { d.State = location.StateDraining }},
		{"revision 2 with another endpoint", func(d *location.FanoutPublisherDescriptor) {
			d.DescriptorRevision, d.Endpoint = 2, "tcp://10.0.0.2:9501"
		}},
		{"lifecycle 8, revision 2", func(d *location.FanoutPublisherDescriptor) {
			d.LifecycleGeneration, d.DescriptorRevision = 8, 2
		}},
	}
	before := l.snap()
	for _, s := range stale {
		d := fixture.FP(a)
		s.edit(&d)
		l.expectFailed(l.putFP(d, location.IntentRenew), location.IgnoredStale, "FP(a) %s", s.what)
	}
	l.noEffect(before, "stale fanout writes")
	d := fixture.FP(a)
	d.DescriptorRevision, d.State = 2, location.StateDraining
	l.expectStored(l.putFP(d, location.IntentRenew), numEqual(g), l.now(), "FP(a) revision 2, Draining")
	rows := l.listFP("events")
	require.Len(l, rows, 1)
	require.Equal(l, int64(2), rows[0].DescriptorRevision)
	require.Equal(l, location.StateDraining, rows[0].State)
	lsEveryStampZero(l, "events")
}

// ls092 checks LS-092 "Validation" (D. Fanout publishers): each bad field fails
// with its error class and changes nothing.
func ls092(l *lsCase) {
	a := l.claim("a")
	lsExpectInvalid(l, "FP(a)", fixture.FP(a), l.S.UpdateFanoutPublisher, []lsInvalid[location.FanoutPublisherDescriptor]{
		{`endpoint ""`, func(d *location.FanoutPublisherDescriptor) { d.Endpoint = "" }, location.ClassType},
		{`securityIdentity ""`, func(d *location.FanoutPublisherDescriptor) { d.SecurityIdentity = "" }, location.ClassType},
		{`publisherRid ""`, func(d *location.FanoutPublisherDescriptor) { d.PublisherRID = "" }, location.ClassType},
		{"lifecycleGeneration 0", func(d *location.FanoutPublisherDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
	})
}

// ls093 checks LS-093 "Liveness filter" (D. Fanout publishers; A-16 reproduced:
// liveness by owner id).
func ls093(l *lsCase) {
	lsCreateFP(l)
	b := l.claim("b")
	l.expectStored(l.putFP(lsFPOn(b, "pub-b"), location.IntentNewClaim), numPositive(1), l.now(), "FP(b, pub-b)")
	l.expire("b")
	require.Equal(l, []string{"pub-a"}, lsFPRIDs(l.listFP("events")), "b's lease expired")
	l.claim("b")
	require.Equal(l, []string{"pub-a", "pub-b"}, lsFPRIDs(l.listFP("events")), "b holds a new lease: its old row is listed again")
}

// ls094 checks LS-094 "Released owner hidden" (D. Fanout publishers).
func ls094(l *lsCase) {
	g := lsCreateFP(l)
	l.release("a")
	require.Empty(l, l.listFP("events"), "a released owner's publisher is hidden")
	b := l.claim("b")
	l.expectStored(l.putFP(fixture.FP(b), location.IntentNewClaim), numAbove(2, g), l.now(), "FP(b) NewClaim on the hidden row's key")
}

// ls095 checks LS-095 "Paging counts live rows only" (D. Fanout publishers).
func ls095(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	for _, d := range []location.FanoutPublisherDescriptor{lsFPOn(a, "pub-a"), lsFPOn(b, "pub-b"), lsFPOn(a, "pub-c")} {
		l.expectStored(l.putFP(d, location.IntentNewClaim), numPositive(1), l.now(), "FP %s", d.PublisherRID)
	}
	l.expire("b")
	p, err := l.S.ListFanoutPublishers(l.Ctx, "events", location.PageRequest{PageSize: 1})
	require.NoError(l, err)
	require.Equal(l, []string{"pub-a"}, lsFPRIDs(p.Items), "first page")
	l.expectToken(p.ContinuationToken, "1", "first page")
	p, err = l.S.ListFanoutPublishers(l.Ctx, "events", location.PageRequest{PageSize: 1, ContinuationToken: p.ContinuationToken})
	require.NoError(l, err)
	require.Equal(l, []string{"pub-c"}, lsFPRIDs(p.Items), "second page")
	l.expectToken(p.ContinuationToken, "", "second page")
}

// ls096 checks LS-096 "Remove" (D. Fanout publishers): fenced by the lease
// generation, and no stamp moves.
func ls096(l *lsCase) {
	g := lsCreateFP(l)
	a := l.tok("a")
	require.Equal(l, location.IgnoredStale, l.rmFP(fixture.FPKey(), fixture.Token("a", a.LeaseGeneration+1)), "remove with gen(a)+1")
	require.Equal(l, location.Stored, l.rmFP(fixture.FPKey(), a), "remove with tok(a)")
	require.Empty(l, l.listFP("events"))
	lsEveryStampZero(l, "events")
	if l.Caps.denseCounters() {
		// The removed key's generation counter is kept: a re-created row
		// continues it.
		l.expectStored(l.putFP(fixture.FP(a), location.IntentNewClaim), numAbove(2, g), l.now(), "FP(a) re-created")
	}
}

// ls097 checks LS-097 "Lease checks" (D. Fanout publishers): a writer without
// a lease, or with the wrong generation, is rejected.
func ls097(l *lsCase) {
	l.claim("a")
	lsExpectLeaseChecked(l, "FP", func(t location.OwnerToken) location.WriteResult {
		return l.putFP(fixture.FP(t), location.IntentNewClaim)
	})
}
