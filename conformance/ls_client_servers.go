package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section C: client-server descriptors (LS-080 … LS-089). Their
// stamps use the channel name as the mesh (A-06, reproduced).

// lsCreateCS claims a (unless claimed) and stores CS(a); it returns the
// generation.
func lsCreateCS(l *lsCase) int64 {
	l.Helper()
	return l.created(l.putCS(fixture.CS(l.claimOnce("a")), location.IntentNewClaim), "CS(a) NewClaim")
}

// ls080 checks LS-080 "Create" (C. Client-server descriptors): a NewClaim
// stores the row and bumps the ClientServer scope only.
func ls080(l *lsCase) {
	a := l.claim("a")
	l.expectStored(l.putCS(fixture.CS(a), location.IntentNewClaim), numPositive(1), T0(), "CS(a) NewClaim")
	want := fixture.CS(a)
	want.UpdatedAt = T0()
	l.expectSameRow([]location.ClientServerDescriptor{want}, l.listCS("orders"), "ListClientServers(orders)")
	l.expectStamp(stampOf(location.LocationClientServer, "orders"), 1)
	l.expectStamp(stampOf(location.LocationClientServer, ""), 1)
	l.expectStamp(stampOf(location.LocationPeer, ""), 0)
}

// ls081 checks LS-081 "Validation" (C. Client-server descriptors): each bad
// field fails with its error class and changes nothing.
func ls081(l *lsCase) {
	a := l.claim("a")
	lsExpectInvalid(l, "CS(a)", fixture.CS(a), l.S.UpdateClientServer, []lsInvalid[location.ClientServerDescriptor]{
		{`channelName ""`, func(d *location.ClientServerDescriptor) { d.ChannelName = "" }, location.ClassType},
		{`serverRid ""`, func(d *location.ClientServerDescriptor) { d.ServerRID = "" }, location.ClassType},
		{`endpoint ""`, func(d *location.ClientServerDescriptor) { d.Endpoint = "" }, location.ClassType},
		{`securityIdentity ""`, func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "" }, location.ClassType},
		{"channelName with U+0000", func(d *location.ClientServerDescriptor) { d.ChannelName = "ord\x00ers" }, location.ClassType},
		{"channelName of 256 bytes", func(d *location.ClientServerDescriptor) { d.ChannelName = strings.Repeat("c", 256) }, location.ClassType},
		{"lifecycleGeneration 0", func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 0 }, location.ClassRange},
		{"descriptorRevision 0", func(d *location.ClientServerDescriptor) { d.DescriptorRevision = 0 }, location.ClassRange},
		{"leaseGeneration 0", func(d *location.ClientServerDescriptor) { d.LeaseGeneration = 0 }, location.ClassRange},
		{"weight -1", func(d *location.ClientServerDescriptor) { d.Weight = -1 }, location.ClassRange},
		{"weight 10001", func(d *location.ClientServerDescriptor) { d.Weight = 10001 }, location.ClassRange},
	})
	for _, w := range []int64{0, 10000} {
		d := fixture.CS(a)
		d.ServerRID = lsRID(fmt.Sprintf("srv-w%d", w))
		d.Weight = w
		l.expectStored(l.putCS(d, location.IntentNewClaim), numPositive(1), T0(), "CS(a) with weight %d", w)
	}
}

// ls082 checks LS-082 "Lease checks" (C. Client-server descriptors): a writer
// without a live lease of the right generation is rejected.
func ls082(l *lsCase) {
	a := l.claim("a")
	lsExpectLeaseChecked(l, "CS", func(t location.OwnerToken) location.WriteResult {
		return l.putCS(fixture.CS(t), location.IntentNewClaim)
	})
	l.expire("a")
	before := l.snap()
	l.expectFailed(l.putCS(fixture.CS(a), location.IntentNewClaim), location.RejectedConflict, "CS(a) after expire(a)")
	l.noEffect(before, "write with an expired lease")
}

// ls083 checks LS-083 "Replay" (C. Client-server descriptors): an identical
// Renew keeps generation and updatedAt and bumps nothing.
func ls083(l *lsCase) {
	g := lsCreateCS(l)
	stamps := lsAllStampScopes("orders")
	before := l.readStamps(stamps...)
	l.setClock(5 * time.Second)
	l.expectStored(l.putCS(fixture.CS(l.tok("a")), location.IntentRenew), numEqual(g), T0(), "replay at T0+5 s")
	after := l.readStamps(stamps...)
	for _, s := range stamps {
		l.expectStampDelta(before, after, s, 0)
	}
}

// ls084 checks LS-084 "Revision update" (C. Client-server descriptors).
func ls084(l *lsCase) {
	g := lsCreateCS(l)
	s := stampOf(location.LocationClientServer, "orders")
	before := l.readStamps(s)
	d := fixture.CS(l.tok("a"))
	d.DescriptorRevision, d.Weight, d.State = 2, 50, location.StateDraining
	l.expectStored(l.putCS(d, location.IntentRenew), numEqual(g), l.now(), "revision update")
	l.expectStampDelta(before, l.readStamps(s), s, 1)
	l.expectStamp(s, 2)
	d = fixture.CS(l.tok("a"))
	d.DescriptorRevision, d.Weight = 2, 60
	l.expectFailed(l.putCS(d, location.IntentRenew), location.IgnoredStale, "same revision, different content")
}

// ls085 checks LS-085 "Immutable change" (C. Client-server descriptors).
func ls085(l *lsCase) {
	lsCreateCS(l)
	edits := []struct {
		what string
		edit func(*location.ClientServerDescriptor)
	}{
		{"endpoint", func(d *location.ClientServerDescriptor) { d.Endpoint = "tcp://10.0.0.9:7400" }},
		{"securityIdentity", func(d *location.ClientServerDescriptor) { d.SecurityIdentity = "cluster-b" }},
		{"lifecycleGeneration 2", func(d *location.ClientServerDescriptor) { d.LifecycleGeneration = 2 }},
	}
	for _, e := range edits {
		before := l.snap()
		d := fixture.CS(l.tok("a"))
		d.DescriptorRevision = 2
		e.edit(&d)
		l.expectFailed(l.putCS(d, location.IntentRenew), location.IgnoredStale, "revision 2 changing %s", e.what)
		l.noEffect(before, "revision 2 changing %s", e.what)
	}
}

// ls086 checks LS-086 "Re-create continues the counter" (C. Client-server
// descriptors).
func ls086(l *lsCase) {
	g := lsCreateCS(l)
	require.Equal(l, location.Stored, l.rmCS(fixture.CSKey(), l.tok("a")))
	l.expectStored(l.putCS(fixture.CS(l.tok("a")), location.IntentNewClaim), numAbove(2, g), l.now(), "CS(a) re-created")
}

// ls087 checks LS-087 "Other owner" (C. Client-server descriptors): another
// owner's NewClaim is ignored until the holder's lease has expired.
func ls087(l *lsCase) {
	g := lsCreateCS(l)
	b := l.claim("b")
	l.expectFailed(l.putCS(fixture.CS(b), location.IntentNewClaim), location.IgnoredStale, "CS(b) NewClaim over live a")
	l.expire("a")
	l.expectStored(l.putCS(fixture.CS(b), location.IntentNewClaim), numAbove(2, g), l.now(), "CS(b) NewClaim after expire(a)")
	require.Equal(l, "b", l.listCS("orders")[0].OwnerID)
}

// ls088 checks LS-088 "List" (C. Client-server descriptors): a list is per
// channel and shows a dead owner's rows.
func ls088(l *lsCase) {
	lsCreateCS(l)
	d := fixture.CS(l.tok("a"))
	d.ChannelName = "orders-2"
	l.expectStored(l.putCS(d, location.IntentNewClaim), numPositive(1), l.now(), "CS(a, orders-2)")
	l.expire("a")
	rows := l.listCS("orders")
	require.Len(l, rows, 1, "exactly the orders row, dead owner still listed")
	require.Equal(l, "orders", rows[0].ChannelName)
	require.Equal(l, "a", rows[0].OwnerID)
}

// ls089 checks LS-089 "Remove" (C. Client-server descriptors): fenced by the
// lease generation; a removal bumps the channel stamp.
func ls089(l *lsCase) {
	lsCreateCS(l)
	a := l.tok("a")
	s := stampOf(location.LocationClientServer, "orders")
	before := l.readStamps(s)
	require.Equal(l, location.IgnoredStale, l.rmCS(fixture.CSKey(), fixture.Token("a", a.LeaseGeneration+1)), "remove with gen(a)+1")
	require.Equal(l, location.Stored, l.rmCS(fixture.CSKey(), a), "remove with tok(a)")
	require.Empty(l, l.listCS("orders"))
	l.expectStampDelta(before, l.readStamps(s), s, 1)
	l.expectStamp(s, 2)
}
