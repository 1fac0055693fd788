package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section B of the authority catalogue: readAuthority (04 §2.1).

// auth011 AUTH-011 Missing key.
func auth011(c *Case) {
	e := newAuthEnv(c)
	e.unchanged("readAuthority of a missing key", func() {
		r := e.read(fixture.KS("nobody"))
		require.Equal(c, location.KindMissing, r.Kind)
		require.Equal(c, T0(), r.StoreNow)
	})
	e.RS("nobody", e.TA())
}

// expectCreatingSpot checks a reserve result's creating snapshot: the
// fields of AUTH-012 for user_spot id (stable type room) on NA.
func (e *authEnv) expectCreatingSpot(R location.ReserveResult, id string) {
	e.c.Helper()
	s := R.Creating
	require.NotEmpty(e.c, s.StoreVersion, "creating.version")
	require.Equal(e.c, "creating", string(s.Payload))
	require.GreaterOrEqual(e.c, s.ObjectGeneration, int64(1))
	require.GreaterOrEqual(e.c, s.AuthorityOwnerGeneration, int64(1))
	require.Equal(e.c, e.A, s.Owner)
	require.Equal(e.c, location.PlacementAllocation{
		State:                         location.AllocationReserved,
		ObjectKind:                    location.ObjectUserSpot,
		StableType:                    "room",
		Descriptor:                    location.MeshNodeKey{MeshName: fixture.Mesh, RID: "node-a"},
		DescriptorLifecycleGeneration: 1,
		Capacity:                      fixture.VS("room"),
	}, s.Allocation)
	require.NotNil(e.c, s.PendingCreation)
	require.Equal(e.c, R.ReservationID, s.PendingCreation.ReservationID)
	require.Equal(e.c, "req:"+id, s.PendingCreation.RequestContentReference)
	require.Equal(e.c, fixture.Digest32(0x01), s.PendingCreation.RequestSHA256)
	require.Equal(e.c, int64(10), s.PendingCreation.RequestEncodedSize)
	require.Equal(e.c, T0(), s.StoreNow)
}

// auth012 AUTH-012 Reserved row.
func auth012(c *Case) {
	e := newAuthEnv(c)
	R := e.RS("r1", e.TA())
	e.expectCreatingSpot(R, "r1")
	e.exactVersion(R.Creating.StoreVersion, "1", "creating.version")
	e.exactGenerations(R.Creating, 1, "creating.")
	e.requireRow(fixture.KS("r1"), R.Creating)
}

// auth013 AUTH-013 Active row.
func auth013(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r2", e.TA())
	e.exactVersion(S.StoreVersion, "2", "ready.version")
	got := e.requireRow(fixture.KS("r2"), S)
	require.Nil(c, got.PendingCreation)
	require.Equal(c, location.AllocationActive, got.Allocation.State)
	require.Equal(c, T0(), got.StoreNow)
}

// auth014 AUTH-014 Invalid key text.
func auth014(c *Case) {
	e := newAuthEnv(c)
	e.AS("r0", e.TA())
	e.unchanged("readAuthority with invalid keys", func() {
		for _, k := range []location.AuthorityKey{"", "a\x00b"} {
			_, err := c.S.ReadAuthority(c.Ctx, k)
			c.expectInputErrorCode(err, location.ClassType, location.CodeAuthorityKeyText, "readAuthority(%q)", k)
		}
	})
}

// auth015 AUTH-015 Opaque keys. The catalogue expects missing (the reference
// treats keys as opaque); 00-decisions Q10 overrides it: read and CAS accept
// only canonical zla1: keys, so a non-canonical key is an invalid argument.
func auth015(c *Case) {
	e := newAuthEnv(c)
	e.requireInvalid("readAuthority of a non-canonical key", location.ClassType, "", func() error { return errOf(c.S.ReadAuthority(c.Ctx, "not-a-zla1-key")) })
	e.requireInvalid("CAS on a non-canonical key", location.ClassType, "", func() error { return errOf(c.S.CompareExchangeAuthority(c.Ctx, "zla1:a:1:%41", "1", fixture.Delete())) })
}

// auth016 AUTH-016 Copies: returned slices are copies, and slices passed in
// may be changed by the caller after the call (catalogue §0.2).
func auth016(c *Case) {
	e := newAuthEnv(c)
	S := e.AS("r3", e.TA())
	r := e.read(fixture.KS("r3"))
	for i := range r.Snapshot.Payload {
		r.Snapshot.Payload[i] = 'X'
	}
	require.Equal(c, "ready", string(e.read(fixture.KS("r3")).Snapshot.Payload))
	// The snapshot returned by commit is a copy too.
	for i := range S.Payload {
		S.Payload[i] = 'Y'
	}
	require.Equal(c, "ready", string(e.read(fixture.KS("r3")).Snapshot.Payload))

	// A payload passed in and changed afterwards does not change the row.
	cur := e.read(fixture.KS("r3")).Snapshot
	in := []byte("input")
	m := fixture.Preserve("")
	m.Payload = in
	stored := e.requireStored(e.cas(fixture.KS("r3"), cur.StoreVersion, m))
	copy(in, "XXXXX")
	require.Equal(c, "input", string(stored.Payload))
	require.Equal(c, "input", string(e.read(fixture.KS("r3")).Snapshot.Payload))
	// The stored snapshot's slices are copies.
	for i := range stored.Payload {
		stored.Payload[i] = 'Z'
	}
	require.Equal(c, "input", string(e.read(fixture.KS("r3")).Snapshot.Payload))

	// Digests of a reserved row come back as copies.
	R := e.RS("r4", e.TA())
	for i := range R.Creating.PendingCreation.RequestSHA256 {
		R.Creating.PendingCreation.RequestSHA256[i] = 0xEE
	}
	got := e.read(fixture.KS("r4")).Snapshot
	require.Equal(c, fixture.Digest32(0x01), got.PendingCreation.RequestSHA256)
	// A reserve request changed after the call, and the creating snapshot
	// it returned, leave the row as reserved.
	req := fixture.SpotRequest(location.ObjectUserSpot, "r5", e.TA(), "room")
	R5 := e.requireReserved(e.reserve(req))
	req.CreatingPayload[0], req.Intent.RequestSHA256[0], req.Capacity.SpotType.Count = 'X', 0xEE, 99
	R5.Creating.Payload[0], R5.Creating.Allocation.Capacity.SpotType.Count = 'Y', 42
	got = e.read(fixture.KS("r5")).Snapshot
	require.Equal(c, "creating", string(got.Payload))
	require.Equal(c, fixture.Digest32(0x01), got.PendingCreation.RequestSHA256)
	require.Equal(c, fixture.VS("room"), got.Allocation.Capacity)
	// So do a commit request changed after the call and a completion's
	// envelope and returned digest.
	commit := fixture.CommitRequest("r5", R5, e.TA())
	e.requireCommitKind(e.commit(commit), location.KindCommitted)
	commit.ReadyPayload[0] = 'Z'
	require.Equal(c, "ready", string(e.read(fixture.KS("r5")).Snapshot.Payload))
	RA := e.RA("r6", e.TA())
	complete := fixture.CompleteRequest("r6", RA, e.TA(), location.TerminalCreated, fixture.P(fixture.OP(6), T0().Add(60*time.Second)))
	res := e.complete(complete)
	require.Equal(c, location.KindCreated, res.Kind)
	complete.Completion.Terminal.TerminalEnvelope[0] = 'X'
	res.Terminal.TerminalEnvelopeSHA256[0] = 0
	rec := e.readTerminal(fixture.OP(6)).Record
	require.Equal(c, "env", string(rec.TerminalEnvelope))
	require.Equal(c, fixture.EnvSHA(), rec.TerminalEnvelopeSHA256)
}
