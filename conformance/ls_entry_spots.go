package conformance

import (
	"bytes"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Catalogue section B, second part: entry-spot identity claims of mesh
// nodes (LS-060 … LS-069). A-03 is fixed (00-decisions): a claim whose
// holder's exact owner lease is not live counts as free. A-02 is fixed: a
// same-owner Takeover with an unchanged entry spot keeps the claim.

// lsMNEOn is MNE(x) moved to rid r (other fields as MNE).
func lsMNEOn(owner location.OwnerToken, r string) location.MeshNodeDescriptor {
	d := fixture.MNE(owner)
	d.RID = lsRID(r)
	return d
}

// lsEntryConflictSetup is LS-060's setup: claim(a), claim(b), MNE(a) on K_A.
func lsEntryConflictSetup(l *lsCase) location.MeshNodeDescriptor {
	l.Helper()
	a := l.claim("a")
	l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	d := lsMNEOn(l.tok("b"), "node-b")
	d.LifecycleGeneration = 8
	d.Endpoint = "tcp://10.0.0.2:7300"
	return d
}

// ls060 checks LS-060 "Entry spot conflict on another key" (B. Mesh-node
// descriptors).
func ls060(l *lsCase) {
	other := lsEntryConflictSetup(l)
	before := l.snap()
	l.expectFailed(l.putMN(other, location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b) claims entry-1 held by a")
	l.noEffect(before, "a rejected entry-spot claim")
	require.Len(l, l.listMN(fixture.MeshGame), 1)
	l.expectStamp(stampOf(location.LocationPeer, fixture.MeshGame), 1)
}

// ls061 checks LS-061 "Remove releases the entry spot" (B. Mesh-node
// descriptors).
func ls061(l *lsCase) {
	other := lsEntryConflictSetup(l)
	l.expectFailed(l.putMN(other, location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b) while a holds entry-1")
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), l.tok("a")), "RemoveMeshNode(K_A, tok(a))")
	l.expectStored(l.putMN(other, location.IntentNewClaim), numPositive(1), l.now(), "MNE(b, node-b) after the remove")
}

// lsDeadEntryHolder is the setup of LS-062/LS-063: claim(a), MNE(a),
// expire(a). It returns the descriptor's generation.
func lsDeadEntryHolder(l *lsCase) int64 {
	l.Helper()
	a := l.claim("a")
	res := l.putMN(fixture.MNE(a), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), l.now(), "MNE(a)")
	l.expire("a")
	return res.Generation
}

// ls062 checks LS-062 "Dead owner's claim on the same key" (B. Mesh-node
// descriptors; A-03 fixed: the dead owner's claim is free).
func ls062(l *lsCase) {
	g := lsDeadEntryHolder(l)
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(b), location.IntentNewClaim), numAbove(2, g), l.now(), "MNE(b) on K_A after a's lease expired")
	require.Equal(l, "b", l.oneMN(fixture.MeshGame).OwnerID)
}

// ls063 checks LS-063 "New owner without entry spot frees the claim" (B.
// Mesh-node descriptors).
func ls063(l *lsCase) {
	g := lsDeadEntryHolder(l)
	b := l.claim("b")
	c := l.claim("c")
	l.expectStored(l.putMN(fixture.MN(b), location.IntentNewClaim), numAbove(2, g), l.now(), "MN(b) without entry spot on K_A")
	l.expectStored(l.putMN(lsMNEOn(c, "node-c"), location.IntentNewClaim), numPositive(1), l.now(), "MNE(c, node-c)")
}

// ls064 checks LS-064 "Restarted owner keeps its claim" (B. Mesh-node
// descriptors).
func ls064(l *lsCase) {
	_, g := lsRestartedOwner(l, fixture.MNE)
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(l.tok("a")), location.IntentNewClaim), numAbove(2, g), l.now(), "MNE(a, g2) NewClaim on K_A")
	l.expectFailed(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b) while restarted a holds entry-1")
}

// ls065 checks LS-065 "Same-owner Takeover with unchanged entry spot" (B.
// Mesh-node descriptors; A-02 fixed: the claim survives).
func ls065(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	res := l.putMN(fixture.MNE(a), location.IntentNewClaim)
	l.expectStored(res, numPositive(1), l.now(), "MNE(a)")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentTakeover), numAbove(2, res.Generation), l.now(), "MNE(a) same-owner Takeover")
	l.expectFailed(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), location.RejectedConflict, "MNE(b, node-b): a still holds entry-1")
}

// ls066 checks LS-066 "Takeover changing the entry spot releases the old one"
// (B. Mesh-node descriptors).
func ls066(l *lsCase) {
	_, g := lsRestartedOwner(l, fixture.MNE)
	b := l.claim("b")
	c := l.claim("c")
	d := fixture.MN(l.tok("a"))
	d.LifecycleGeneration = 8
	d.EntrySpotID = lsStrPtr("entry-2")
	l.expectStored(l.putMN(d, location.IntentNewClaim), numAbove(2, g), l.now(), "MN(a, lifecycle 8, entry-2, g2) NewClaim on K_A")
	l.expectStored(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), numPositive(1), l.now(), "MNE(b, node-b) takes the released entry-1")
	e2 := fixture.MN(c)
	e2.RID = lsRID("node-c")
	e2.EntrySpotID = lsStrPtr("entry-2")
	l.expectFailed(l.putMN(e2, location.IntentNewClaim), location.RejectedConflict, "MN(c, node-c, entry-2) while a holds entry-2")
}

// ls067 checks LS-067 "Same owner, second key, same entry spot" (B. Mesh-node
// descriptors).
func ls067(l *lsCase) {
	a := l.claim("a")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	l.expectFailed(l.putMN(lsMNEOn(a, "node-b"), location.IntentNewClaim), location.RejectedConflict, "MNE(a, node-b): entry-1 is claimed by K_A")
}

// ls068 checks LS-068 "removeAllByOwner releases the claim" (B. Mesh-node
// descriptors).
func ls068(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	require.Equal(l, int64(1), l.removeAll(a), "RemoveAllByOwner(tok(a))")
	l.expectStored(l.putMN(lsMNEOn(b, "node-b"), location.IntentNewClaim), numPositive(1), l.now(), "MNE(b, node-b) after the sweep")
}

// ls069 checks LS-069 "Entry claims block authority reservations" (B. Mesh-node
// descriptors; cross-suite).
func ls069(l *lsCase) {
	a := l.claim("a")
	b := l.claim("b")
	l.expectStored(l.putMN(fixture.MNE(a), location.IntentNewClaim), numPositive(1), l.now(), "MNE(a)")
	nb := fixture.MN(b)
	nb.RID = lsRID("node-b")
	l.expectStored(l.putMN(nb, location.IntentNewClaim), numPositive(1), l.now(), "MN(b, node-b)")
	req := location.ReserveRequest{
		Key: location.ObjectCreationKey{Kind: location.ObjectUserSpot, GlobalID: "entry-1"},
		Intent: location.CreationIntent{
			StableType: "lobby", RequestContentReference: "req:entry-1",
			RequestSHA256: bytes.Repeat([]byte{1}, 32), RequestEncodedSize: 10,
		},
		Target:          location.CreationTarget{MeshName: fixture.MeshGame, NodeRID: lsRID("node-b"), NodeLifecycleGeneration: 7, Owner: b},
		CreatingPayload: []byte("creating"),
		Capacity:        location.CapacityVector{Spots: 1},
	}
	res, err := l.S.Reserve(l.Ctx, req)
	require.NoError(l, err)
	require.Equal(l, location.KindConflict, res.Kind, "reserve of the claimed entry spot id")
	require.NotNil(l, res.Current, "conflict carries the current read")
	require.Equal(l, location.KindMissing, res.Current.Kind, "conflict{current: missing}")
	require.Equal(l, location.Stored, l.rmMN(fixture.MNKey(), a), "RemoveMeshNode(K_A, tok(a))")
	res, err = l.S.Reserve(l.Ctx, req)
	require.NoError(l, err)
	require.Equal(l, location.KindReserved, res.Kind, "reserve after the claim was released")
}
