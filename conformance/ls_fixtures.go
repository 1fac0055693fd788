package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// This file drives the location catalogue's fixtures (§3; the rows MN, MNE,
// CS, FP, PEER, SPOT, ACTOR, ROUTE and XFER are in package fixture) on a
// scenario's store: lsCase, the per-scenario state (claimed tokens, names
// used) with the claim, expire, write and read helpers every LS scenario
// uses.

// lsTTL is the TTL of claim(x).
const lsTTL = 30 * time.Second

// lsAt returns T0 + d.
func lsAt(d time.Duration) time.Time { return T0().Add(d) }

// lsRID returns a routing id.
func lsRID(s string) location.RoutingID { return location.RoutingID(s) }

// lsRIDPtr returns a pointer to a routing id.
func lsRIDPtr(s string) *location.RoutingID { r := location.RoutingID(s); return &r }

// lsStrPtr returns a pointer to s.
func lsStrPtr(s string) *string { return &s }

// lsCase is one LS scenario's run: the Case, the tokens claimed so far and
// the names the scenario used (for "no effect" snapshots).
type lsCase struct {
	*Case
	tokens map[string]location.OwnerToken
	u      universe
}

// lsRun adapts an LS scenario body to Scenario.Run.
func lsRun(body func(l *lsCase)) func(c *Case) {
	return func(c *Case) {
		body(&lsCase{
			Case:   c,
			tokens: map[string]location.OwnerToken{},
			u: universe{
				Meshes:   []string{fixture.MeshGame, fixture.MeshPlay, "other", "test", "m1", "m2"},
				Channels: []string{"orders", "orders-2", "billing", "events"},
				Owners:   []string{"ghost", "nobody", "recovery-a", "recovery-b"},
				Slots: []location.ActorKey{
					{MeshName: fixture.MeshGame, ActorID: "actor-1"}, {MeshName: fixture.MeshGame, ActorID: "actor-2"},
					{MeshName: "other", ActorID: "actor-1"}, {MeshName: fixture.MeshGame, ActorID: "actor-9"},
				},
			},
		})
	}
}

// useOwner adds an owner id to the snapshot universe.
func (l *lsCase) useOwner(id string) {
	if !slices.Contains(l.u.Owners, id) {
		l.u.Owners = append(l.u.Owners, id)
	}
}

// useMesh adds a mesh (or channel) name to the snapshot universe.
func (l *lsCase) useMesh(name string) {
	if !slices.Contains(l.u.Meshes, name) {
		l.u.Meshes = append(l.u.Meshes, name)
	}
}

// snap takes a "no effect" snapshot of everything the scenario used.
func (l *lsCase) snap() snapshot {
	l.Helper()
	return l.takeSnapshot(l.u)
}

// noEffect requires the store to read as it did at before.
func (l *lsCase) noEffect(before snapshot, what string, args ...any) {
	l.Helper()
	l.expectNoEffect(before, what, args...)
}

// now is the fixture clock's time at millisecond precision.
func (l *lsCase) now() time.Time { return location.Millis(l.F.Clock.Now()) }

// setClock moves the fixture clock to T0 + d.
func (l *lsCase) setClock(d time.Duration) { l.F.Clock.Set(lsAt(d)) }

// claim is claim(x): ClaimOwnerLease(x, 30 s) must answer claimed; the
// token is remembered as tok(x).
func (l *lsCase) claim(id string) location.OwnerToken {
	l.Helper()
	res, err := l.S.ClaimOwnerLease(l.Ctx, id, lsTTL)
	require.NoErrorf(l, err, "claim(%q)", id)
	require.Equalf(l, location.KindClaimed, res.Kind, "claim(%q)", id)
	require.Equalf(l, id, res.Token.OwnerID, "claim(%q): token owner", id)
	require.Positivef(l, res.Token.LeaseGeneration, "claim(%q): lease generation", id)
	l.tokens[id] = res.Token
	l.useOwner(id)
	return res.Token
}

// tok is tok(x), the token of x's latest claim.
func (l *lsCase) tok(id string) location.OwnerToken {
	l.Helper()
	t, ok := l.tokens[id]
	require.Truef(l, ok, "tok(%q): %q was never claimed in this scenario", id, id)
	return t
}

// gen is gen(x), the lease generation of x's latest claim.
func (l *lsCase) gen(id string) int64 { l.Helper(); return l.tok(id).LeaseGeneration }

// claimOnce is tok(x), claimed first unless the scenario did.
func (l *lsCase) claimOnce(id string) location.OwnerToken {
	l.Helper()
	if t, ok := l.tokens[id]; ok {
		return t
	}
	return l.claim(id)
}

// created requires a NewClaim to be stored now under a new generation and
// returns the generation.
func (l *lsCase) created(res location.WriteResult, what string) int64 {
	l.Helper()
	l.expectStored(res, numPositive(1), l.now(), "%s", what)
	return res.Generation
}

// lsInvalid is an edit that makes a valid value bad, and the class of the
// error it must fail with.
type lsInvalid[T any] struct {
	what  string
	edit  func(*T)
	class location.ErrorClass
}

// lsExpectInvalid requires a NewClaim of valid (named name) changed by each
// edit to fail with the edit's error class and to change nothing.
func lsExpectInvalid[T location.Cloner[T]](l *lsCase, name string, valid T, update func(context.Context, T, location.WriteIntent) (location.WriteResult, error), invalid []lsInvalid[T]) {
	l.Helper()
	for _, v := range invalid {
		d := valid.Clone()
		v.edit(&d)
		before := l.snap()
		_, err := update(l.Ctx, d, location.IntentNewClaim)
		l.expectInputError(err, v.class, "%s with %s", name, v.what)
		l.noEffect(before, "%s with %s", name, v.what)
	}
}

// lsExpectLeaseChecked requires put (a NewClaim of the descriptor named
// name) to be RejectedConflict, changing nothing, for an owner that never
// claimed and for a's next lease generation.
func lsExpectLeaseChecked(l *lsCase, name string, put func(location.OwnerToken) location.WriteResult) {
	l.Helper()
	before := l.snap()
	l.expectFailed(put(fixture.Token("ghost", 1)), location.RejectedConflict, "%s(ghost)", name)
	l.expectFailed(put(fixture.Token("a", l.gen("a")+1)), location.RejectedConflict, "%s(a, gen(a)+1)", name)
	l.noEffect(before, "%s writes without a matching lease", name)
}

// genOr is gen(x) when x was claimed, else def (for owners that never held
// a lease, such as ghost).
func (l *lsCase) genOr(id string, def int64) int64 {
	if t, ok := l.tokens[id]; ok {
		return t.LeaseGeneration
	}
	return def
}

// expire is expire(x): the harness makes x's current lease not live.
func (l *lsCase) expire(id string) {
	l.Helper()
	require.NotNil(l, l.F.ExpireOwnerLease, "the harness must provide Fixture.ExpireOwnerLease")
	err := l.F.ExpireOwnerLease(l.Ctx, id)
	if errors.Is(err, location.ErrUnsupported) {
		l.Fatalf("expire(%q): Fixture.ExpireOwnerLease answered ErrUnsupported, but every harness must support it: %v", id, err)
	}
	require.NoErrorf(l, err, "expire(%q)", id)
}

// release releases tok(x) and requires released.
func (l *lsCase) release(id string) {
	l.Helper()
	k, err := l.S.ReleaseOwnerLease(l.Ctx, l.tok(id))
	require.NoErrorf(l, err, "release(tok(%q))", id)
	require.Equalf(l, location.KindReleased, k, "release(tok(%q))", id)
}

// readLease reads x's owner lease.
func (l *lsCase) readLease(id string) location.OwnerLeaseReadResult {
	l.Helper()
	r, err := l.S.ReadOwnerLease(l.Ctx, id)
	require.NoErrorf(l, err, "ReadOwnerLease(%q)", id)
	return r
}

// expectLeaseFound requires x's lease to be found with the token and expiry.
func (l *lsCase) expectLeaseFound(id string, t location.OwnerToken, expiresAt time.Time) {
	l.Helper()
	r := l.readLease(id)
	require.Equalf(l, location.KindFound, r.Kind, "read(%q)", id)
	require.Equalf(l, t, r.Token, "read(%q): token", id)
	require.Truef(l, expiresAt.Equal(r.LeaseExpiresAt), "read(%q): leaseExpiresAt %s, want %s", id, fmtTime(r.LeaseExpiresAt), fmtTime(expiresAt))
	require.Truef(l, l.now().Equal(r.StoreNow), "read(%q): storeNow %s, want %s", id, fmtTime(r.StoreNow), fmtTime(l.now()))
}

// expectLeaseMissing requires x's lease to read as missing.
func (l *lsCase) expectLeaseMissing(id string) {
	l.Helper()
	require.Equalf(l, location.KindMissing, l.readLease(id).Kind, "read(%q)", id)
}

// Writes. Each helper requires a nil error and returns the result.

func (l *lsCase) putMN(d location.MeshNodeDescriptor, in location.WriteIntent) location.WriteResult {
	l.Helper()
	l.useMesh(d.MeshName)
	res, err := l.S.UpdateMeshNode(l.Ctx, d, in)
	require.NoErrorf(l, err, "UpdateMeshNode(%s/%s, %s)", d.MeshName, d.RID, in)
	return res
}

func (l *lsCase) putCS(d location.ClientServerDescriptor, in location.WriteIntent) location.WriteResult {
	l.Helper()
	res, err := l.S.UpdateClientServer(l.Ctx, d, in)
	require.NoErrorf(l, err, "UpdateClientServer(%s/%s, %s)", d.ChannelName, d.ServerRID, in)
	return res
}

func (l *lsCase) putFP(d location.FanoutPublisherDescriptor, in location.WriteIntent) location.WriteResult {
	l.Helper()
	res, err := l.S.UpdateFanoutPublisher(l.Ctx, d, in)
	require.NoErrorf(l, err, "UpdateFanoutPublisher(%s/%s, %s)", d.ChannelName, d.PublisherRID, in)
	return res
}

func (l *lsCase) putPeer(p location.PeerLocation, in location.WriteIntent) location.WriteResult {
	l.Helper()
	res, err := l.S.UpdatePeer(l.Ctx, p, in)
	require.NoErrorf(l, err, "UpdatePeer(%s, %s)", peerOrderKey(p), in)
	return res
}

func (l *lsCase) putSpot(s location.SpotLocation, in location.WriteIntent) location.WriteResult {
	l.Helper()
	res, err := l.S.UpdateSpot(l.Ctx, s, in)
	require.NoErrorf(l, err, "UpdateSpot(%s/%s, %s)", s.MeshName, s.SpotID, in)
	return res
}

func (l *lsCase) putActor(a location.ActorLocation, in location.WriteIntent) location.WriteResult {
	l.Helper()
	res, err := l.S.UpdateActor(l.Ctx, a, in)
	require.NoErrorf(l, err, "UpdateActor(%s/%s, %s)", a.MeshName, a.ActorID, in)
	return res
}

func (l *lsCase) putRoute(r location.RouteLocation, in location.WriteIntent) location.WriteResult {
	l.Helper()
	res, err := l.S.UpdateRoute(l.Ctx, r, in)
	require.NoErrorf(l, err, "UpdateRoute(%d/%s, %s)", r.RouteKind, r.RouteKey, in)
	return res
}

// Removes.

func (l *lsCase) rmMN(k location.MeshNodeKey, t location.OwnerToken) location.WriteStatus {
	l.Helper()
	st, err := l.S.RemoveMeshNode(l.Ctx, k, t)
	require.NoErrorf(l, err, "RemoveMeshNode(%s/%s, %+v)", k.MeshName, k.RID, t)
	return st
}

func (l *lsCase) rmCS(k location.ClientServerKey, t location.OwnerToken) location.WriteStatus {
	l.Helper()
	st, err := l.S.RemoveClientServer(l.Ctx, k, t)
	require.NoErrorf(l, err, "RemoveClientServer(%s/%s, %+v)", k.ChannelName, k.ServerRID, t)
	return st
}

func (l *lsCase) rmFP(k location.FanoutPublisherKey, t location.OwnerToken) location.WriteStatus {
	l.Helper()
	st, err := l.S.RemoveFanoutPublisher(l.Ctx, k, t)
	require.NoErrorf(l, err, "RemoveFanoutPublisher(%s/%s, %+v)", k.ChannelName, k.PublisherRID, t)
	return st
}

func (l *lsCase) rmPeer(k location.PeerKey, t location.OwnerToken) location.WriteResult {
	l.Helper()
	res, err := l.S.RemovePeer(l.Ctx, k, t)
	require.NoErrorf(l, err, "RemovePeer(%+v, %+v)", k, t)
	return res
}

func (l *lsCase) rmSpot(k location.SpotKey, t location.OwnerToken) location.WriteStatus {
	l.Helper()
	st, err := l.S.RemoveSpot(l.Ctx, k, t)
	require.NoErrorf(l, err, "RemoveSpot(%s/%s, %+v)", k.MeshName, k.SpotID, t)
	return st
}

func (l *lsCase) rmActor(k location.ActorKey, t location.OwnerToken) location.WriteStatus {
	l.Helper()
	st, err := l.S.RemoveActor(l.Ctx, k, t)
	require.NoErrorf(l, err, "RemoveActor(%s/%s, %+v)", k.MeshName, k.ActorID, t)
	return st
}

func (l *lsCase) rmRoute(k location.RouteKey, t location.OwnerToken) location.WriteResult {
	l.Helper()
	res, err := l.S.RemoveRoute(l.Ctx, k, t)
	require.NoErrorf(l, err, "RemoveRoute(%d/%s, %+v)", k.RouteKind, k.RouteKey, t)
	return res
}

func (l *lsCase) removeAll(t location.OwnerToken) int64 {
	l.Helper()
	n, err := l.S.RemoveAllByOwner(l.Ctx, t)
	require.NoErrorf(l, err, "RemoveAllByOwner(%+v)", t)
	return n
}

// Reads.

// lsListAll calls list on key without a page request, requires no error
// and no continuation (what names the call in messages), and returns the
// items.
func lsListAll[K, T any](l *lsCase, what string, key K, list func(context.Context, K, location.PageRequest) (location.Page[T], error)) []T {
	l.Helper()
	p, err := list(l.Ctx, key, location.PageRequest{})
	require.NoErrorf(l, err, "%s", what)
	require.Emptyf(l, p.ContinuationToken, "%s without a page request returns everything", what)
	return p.Items
}

func (l *lsCase) listMN(mesh string) []location.MeshNodeDescriptor {
	l.Helper()
	return lsListAll(l, fmt.Sprintf("ListMeshNodes(%q)", mesh), mesh, l.S.ListMeshNodes)
}

// oneMN requires the mesh to list exactly one descriptor and returns it.
func (l *lsCase) oneMN(mesh string) location.MeshNodeDescriptor {
	l.Helper()
	items := l.listMN(mesh)
	require.Lenf(l, items, 1, "ListMeshNodes(%q)", mesh)
	return items[0]
}

func (l *lsCase) listCS(channel string) []location.ClientServerDescriptor {
	l.Helper()
	return lsListAll(l, fmt.Sprintf("ListClientServers(%q)", channel), channel, l.S.ListClientServers)
}

func (l *lsCase) listFP(channel string) []location.FanoutPublisherDescriptor {
	l.Helper()
	return lsListAll(l, fmt.Sprintf("ListFanoutPublishers(%q)", channel), channel, l.S.ListFanoutPublishers)
}

func (l *lsCase) listPeers(f location.PeerFilter) []location.PeerLocation {
	l.Helper()
	rows, err := l.S.ListPeers(l.Ctx, f)
	require.NoError(l, err, "ListPeers")
	return rows
}

func (l *lsCase) listSpots(f location.SpotFilter, p location.PageRequest) location.Page[location.SpotLocation] {
	l.Helper()
	page, err := l.S.ListSpots(l.Ctx, f, p)
	require.NoError(l, err, "ListSpots")
	return page
}

func (l *lsCase) listActors(f location.ActorFilter) []location.ActorLocation {
	l.Helper()
	return lsListAll(l, "ListActors", f, l.S.ListActors)
}

func (l *lsCase) listRoutes(f location.RouteFilter) []location.RouteLocation {
	l.Helper()
	return lsListAll(l, "ListRoutes", f, l.S.ListRoutes)
}

func (l *lsCase) resolveSpot(k location.SpotKey) *location.SpotLocation {
	l.Helper()
	s, err := l.S.ResolveSpot(l.Ctx, k)
	require.NoErrorf(l, err, "ResolveSpot(%s/%s)", k.MeshName, k.SpotID)
	return s
}

func (l *lsCase) resolveActor(k location.ActorKey) *location.ActorLocation {
	l.Helper()
	a, err := l.S.ResolveActor(l.Ctx, k)
	require.NoErrorf(l, err, "ResolveActor(%s/%s)", k.MeshName, k.ActorID)
	return a
}

func (l *lsCase) resolveRoute(k location.RouteKey) *location.RouteLocation {
	l.Helper()
	r, err := l.S.ResolveRoute(l.Ctx, k)
	require.NoErrorf(l, err, "ResolveRoute(%d/%s)", k.RouteKind, k.RouteKey)
	return r
}

// Transfers.

func (l *lsCase) prepare(r location.ActorTransferPrepareRequest) location.ActorTransferWriteResult {
	l.Helper()
	res, err := l.S.PrepareActorTransfer(l.Ctx, r)
	require.NoErrorf(l, err, "PrepareActorTransfer(%s/%s %s)", r.MeshName, r.ActorID, r.TransferID)
	return res
}

// lsTransition names commit, activate and abort.
type lsTransition int

const (
	trCommit lsTransition = iota + 1
	trActivate
	trAbort
)

func (t lsTransition) String() string {
	switch t {
	case trCommit:
		return "commit"
	case trActivate:
		return "activate"
	default:
		return "abort"
	}
}

// lsTransitions lists commit, activate and abort.
func lsTransitions() []lsTransition { return []lsTransition{trCommit, trActivate, trAbort} }

// moveErr runs a transfer transition and returns its error.
func (l *lsCase) moveErr(t lsTransition, ref location.ActorTransferRef, owner string) (location.ActorTransferWriteResult, error) {
	switch t {
	case trCommit:
		return l.S.CommitActorTransfer(l.Ctx, ref, owner)
	case trActivate:
		return l.S.ActivateActorTransfer(l.Ctx, ref, owner)
	default:
		return l.S.AbortActorTransfer(l.Ctx, ref, owner)
	}
}

// move runs a transfer transition and requires a nil error.
func (l *lsCase) move(t lsTransition, ref location.ActorTransferRef, owner string) location.ActorTransferWriteResult {
	l.Helper()
	res, err := l.moveErr(t, ref, owner)
	require.NoErrorf(l, err, "%s(%s/%s %s, %q)", t, ref.MeshName, ref.ActorID, ref.TransferID, owner)
	return res
}

func (l *lsCase) takeOver(ref location.ActorTransferRef, successor string, ttl time.Duration) location.ActorTransferWriteResult {
	l.Helper()
	res, err := l.S.TakeOverActorTransfer(l.Ctx, ref, successor, ttl)
	require.NoErrorf(l, err, "TakeOverActorTransfer(%s/%s %s, %q)", ref.MeshName, ref.ActorID, ref.TransferID, successor)
	return res
}

func (l *lsCase) resolveXfer(mesh, actor string) *location.ActorTransferRecord {
	l.Helper()
	r, err := l.S.ResolveActorTransfer(l.Ctx, mesh, actor)
	require.NoErrorf(l, err, "ResolveActorTransfer(%q, %q)", mesh, actor)
	return r
}

// expectXferStatus checks a transfer write's status; a record is present
// exactly when the status is stored.
func (l *lsCase) expectXferStatus(res location.ActorTransferWriteResult, want location.TransferWriteStatus, what string, args ...any) {
	l.Helper()
	label := fmt.Sprintf(what, args...)
	require.Equalf(l, want, res.Status, "%s: status", label)
	if want == location.TransferStored {
		require.NotNilf(l, res.Record, "%s: a stored transfer write carries the record", label)
	} else {
		require.Nilf(l, res.Record, "%s: only a stored transfer write carries a record", label)
	}
}

// lsOneRowEach stores, for the claimed owner a, one row of every location
// table (MN, CS, FP, PEER, SPOT, ACTOR, ROUTE) and prepares XFER; it returns
// the peer's and the route's row generations.
func lsOneRowEach(l *lsCase, a location.OwnerToken) (peerGen, routeGen int64) {
	l.Helper()
	l.expectStored(l.putMN(fixture.MN(a), location.IntentNewClaim), numPositive(1), T0(), "MN(a)")
	l.expectStored(l.putCS(fixture.CS(a), location.IntentNewClaim), numPositive(1), T0(), "CS(a)")
	l.expectStored(l.putFP(fixture.FP(a), location.IntentNewClaim), numPositive(1), T0(), "FP(a)")
	peer := l.putPeer(fixture.PEER("a", 0), location.IntentNewClaim)
	l.expectStored(peer, numPositive(1), T0(), "PEER(a)")
	l.expectStored(l.putSpot(fixture.SPOT("a", a.LeaseGeneration), location.IntentNewClaim), numPositive(1), T0(), "SPOT(a)")
	l.expectStored(l.putActor(fixture.ACTOR("a", a.LeaseGeneration), location.IntentNewClaim), numPositive(1), T0(), "ACTOR(a)")
	route := l.putRoute(fixture.ROUTE("a", 0), location.IntentNewClaim)
	l.expectStored(route, numPositive(1), T0(), "ROUTE(a)")
	lsPrepared(l, fixture.XFER())
	return peer.Generation, route.Generation
}

// lsExpectRows requires the listed rows to be the named rows as written, in
// any order.
func lsExpectRows[T any](l *lsCase, written map[string]T, names []string, got []T, what string, args ...any) {
	l.Helper()
	var want []T
	for _, n := range names {
		want = append(want, written[n])
	}
	require.ElementsMatchf(l, normalizeValue(want), normalizeValue(got), "%s: the rows as written", fmt.Sprintf(what, args...))
}

// lsFilterCase is one row of a filter table: the filter (what renders it
// in messages) and the names of the rows it must list.
type lsFilterCase[F any] struct {
	what string
	f    F
	want []string
}

// lsExpectListed requires a filtered list to be exactly the rows named
// want, by name (name gives a row's name) and as written.
func lsExpectListed[T any](l *lsCase, written map[string]T, want []string, got []T, name func(T) string, what string, args ...any) {
	l.Helper()
	require.ElementsMatchf(l, want, lsNames(got, name), what, args...)
	lsExpectRows(l, written, want, got, what, args...)
}

// Small list helpers.

// lsNames returns name(r) for every row, in order.
func lsNames[T any](rows []T, name func(T) string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, name(r))
	}
	return out
}

// lsSpotIDs returns the spot ids of rows, in order.
func lsSpotIDs(rows []location.SpotLocation) []string {
	return lsNames(rows, func(r location.SpotLocation) string { return r.SpotID })
}

// lsMeshSpotIDs returns mesh/spotId of rows, in order.
func lsMeshSpotIDs(rows []location.SpotLocation) []string {
	return lsNames(rows, func(r location.SpotLocation) string { return r.MeshName + "/" + r.SpotID })
}

// lsMNRIDs returns the rids of descriptors, in order.
func lsMNRIDs(rows []location.MeshNodeDescriptor) []string {
	return lsNames(rows, func(r location.MeshNodeDescriptor) string { return string(r.RID) })
}

// lsFPRIDs returns the publisher rids of descriptors, in order.
func lsFPRIDs(rows []location.FanoutPublisherDescriptor) []string {
	return lsNames(rows, func(r location.FanoutPublisherDescriptor) string { return string(r.PublisherRID) })
}

// lsSorted returns a sorted copy.
func lsSorted(in []string) []string {
	out := slices.Clone(in)
	sort.Strings(out)
	return out
}
